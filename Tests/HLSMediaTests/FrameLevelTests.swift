@testable import HLSMedia
import Testing

@Suite struct FrameLevelTests {
    @Test func peakLevelIsTheLargestMagnitudeOnAnyChannel() throws {
        let frame = try Frame.silence(sampleCount: 256, sampleRate: 48_000, channelCount: 2)
        #expect(frame.peakLevel() == 0)
        let right = UnsafeMutableRawPointer(frame.pointer.pointee.extended_data[1]!).assumingMemoryBound(to: Float.self)
        right[100] = -0.5
        right[200] = 0.25
        #expect(frame.peakLevel() == 0.5)
    }

    @Test func framesInOtherFormatsReportNoLevel() throws {
        let picture = try Frame.yuv420p(width: 16, height: 16)
        #expect(picture.peakLevel() == 0)
    }
}
