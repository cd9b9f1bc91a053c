import Foundation
import HLSBase
import Testing
@testable import HLSMedia

@Suite struct CaptureStandInSourceTests {
    /// Runs a stand-in for about `milliseconds` of real time and returns what it sent.
    static func run(_ content: StandInSource.Content, milliseconds: Int,
                    startingMicrosecondsAgo: Int64? = nil) throws -> (events: [CaptureEvent], start: Int64) {
        let now = MonotonicClock.nowMicroseconds()
        let source = try StandInSource(content, firstFrameAtMicroseconds: startingMicrosecondsAgo.map { now - $0 })
        let events = EventLog()
        let start = startingMicrosecondsAgo.map { now - $0 } ?? MonotonicClock.nowMicroseconds()
        source.start { events.append($0) }
        Thread.sleep(forTimeInterval: Double(milliseconds) / 1000)
        source.stop()
        let count = events.withLock { $0.count }
        Thread.sleep(forTimeInterval: 0.1)
        #expect(events.withLock { $0.count } == count, "no event after stop() returned")
        return (events.withLock { $0 }, start)
    }

    /// A dark picture at the frame rate, in real time from the start, with the seconds since it began
    /// drawn in its middle.
    @Test func picturesComeAtTheFrameRateDarkWithACounter() throws {
        let (events, start) = try Self.run(.video(width: 160, height: 90, framesPerSecond: 25), milliseconds: 1100)
        let frames = CaptureTestSourceTests.videoFrames(events)
        #expect((26...29).contains(frames.count), "\(frames.count) frames in 1.1 s at 25 fps")
        let first = try #require(frames.first?.pts)
        #expect(first >= start && first - start < 20_000)
        for (index, frame) in frames.enumerated() {
            #expect(frame.pts == first + Int64(index) * 40_000)
            #expect(frame.width == 160 && frame.height == 90)
        }
        let luma = CaptureTestSourceTests.luma(frames[0])
        #expect(luma.filter { $0 == StandInSource.backgroundLuma }.count > luma.count * 9 / 10)
        #expect(luma.contains(StandInSource.counterLuma))
        // "0:00" for the first second, "0:01" after it: the counter changes.
        #expect(CaptureTestSourceTests.luma(frames[0]) != CaptureTestSourceTests.luma(frames[25]))
        #expect(CaptureTestSourceTests.luma(frames[0]) == CaptureTestSourceTests.luma(frames[24]))
    }

    /// Silence in the microphone's format, each block handed on once it would have been recorded.
    @Test func silenceComesInBlocksAtTheDevicesRate() throws {
        let (events, start) = try Self.run(.audio(sampleRate: 44_100, channelCount: 1), milliseconds: 600)
        let blocks = CaptureTestSourceTests.audioFrames(events)
        // 0.6 s holds 25.8 blocks of 1024 samples at 44.1 kHz; each comes only after its last sample.
        #expect((24...26).contains(blocks.count), "\(blocks.count) blocks in 0.6 s")
        let first = try #require(blocks.first?.pts)
        #expect(first >= start && first - start < 20_000)
        for (index, block) in blocks.enumerated() {
            #expect(block.pts == first + Int64(index) * 1024 * 1_000_000 / 44_100)
            #expect(block.sampleRate == 44_100 && block.channelCount == 1 && block.sampleCount == 1024)
            #expect(CaptureTestSourceTests.samples(block).allSatisfy { $0 == 0 })
        }
    }

    /// A device found lost only after a stall: the stand-in takes up where it stopped, its first frames
    /// made at once until they are level with the clock, so the stream's timeline has no hole.
    @Test func aStandInForAStalledDeviceCatchesUpFromWhereItStopped() throws {
        let (events, start) = try Self.run(.video(width: 160, height: 90, framesPerSecond: 25), milliseconds: 300,
                                           startingMicrosecondsAgo: 2_000_000)
        let frames = CaptureTestSourceTests.videoFrames(events)
        // Two seconds behind and 0.3 s more: about 57 frames, not the 8 of 0.3 s.
        #expect((55...60).contains(frames.count), "\(frames.count) frames")
        #expect(frames.first?.pts == start)
        for (index, frame) in frames.enumerated() { #expect(frame.pts == start + Int64(index) * 40_000) }
        let silence = try Self.run(.audio(sampleRate: 48_000, channelCount: 1), milliseconds: 300,
                                   startingMicrosecondsAgo: 1_000_000)
        let blocks = CaptureTestSourceTests.audioFrames(silence.events)
        #expect(blocks.first?.pts == silence.start)
        #expect((58...62).contains(blocks.count), "\(blocks.count) blocks")
        // Never more than `catchUpMicroseconds` back.
        let late = try Self.run(.video(width: 160, height: 90, framesPerSecond: 25), milliseconds: 50,
                                startingMicrosecondsAgo: StandInSource.catchUpMicroseconds + 60_000_000)
        let first = try #require(CaptureTestSourceTests.videoFrames(late.events).first?.pts)
        #expect(first - late.start >= 60_000_000 && first - late.start < 60_100_000)
    }

    @Test func impossibleContentIsRefused() {
        #expect(throws: CaptureError.self) { try StandInSource(.video(width: 161, height: 90, framesPerSecond: 25)) }
        #expect(throws: CaptureError.self) { try StandInSource(.audio(sampleRate: 0, channelCount: 2)) }
    }
}
