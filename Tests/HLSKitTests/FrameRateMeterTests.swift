import Testing
@testable import HLSKit

@Suite struct FrameRateMeterTests {
    static func measure(_ durations: [Int64], timescale: Timescale = .video) -> Double? {
        var meter = FrameRateMeter(timescale: timescale)
        for duration in durations { meter.add(durationTicks: duration) }
        return meter.framesPerSecond
    }

    @Test func aConstantRateIsItself() {
        #expect(Self.measure(Array(repeating: 3000, count: 300)) == 30)
        #expect(Self.measure([]) == nil)
    }

    /// One second at 60 fps, the next at 20 fps: the mean is 40, the peak 60.
    @Test func aVariableRateReportsItsFastestSecond() {
        let twoSeconds = Array(repeating: Int64(1500), count: 60) + Array(repeating: Int64(4500), count: 20)
        let durations = Array([[Int64]](repeating: twoSeconds, count: 5).joined())
        #expect(Self.measure(durations) == 60)
    }

    /// 30 fps stored in milliseconds (33, 33, 34 ms …) is 30 fps, not the 30.3 of its shortest frames.
    @Test func millisecondJitterIsNotAFasterRate() throws {
        let durations = (0..<300).map { index in Int64(index % 3 == 2 ? 34 : 33) }
        let rate = try #require(Self.measure(durations, timescale: 1000))
        #expect(abs(rate - 30) < 0.01, "\(rate)")
    }

    @Test func videoShorterThanASecondReportsItsMean() {
        #expect(Self.measure(Array(repeating: 1500, count: 30)) == 60)
    }
}
