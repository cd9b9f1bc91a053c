import Foundation
import Testing
@testable import HLSKit

@Suite struct TimingTimestampJumpTests {
    static let limit: Int64 = 900_000  // 10 s at 90 kHz
    static let far: Int64 = 289_791_000  // 3219.9 s

    /// Decode times 3600 apart from `start`, `count` of them: a track in step.
    static func inStep(from start: Int64, count: Int = TimestampJump.lookaheadSamples) -> [Int64] {
        (0..<Int64(count)).map { start + $0 * 3_600 }
    }

    @Test(arguments: [
        // previous, current, upcoming, verdict
        (Int64?.none, far, inStep(from: 3_600), TimestampJump.Verdict.inStep),
        (3_600, 7_200, inStep(from: 10_800), .inStep),
        // One packet stamped 3219.9 s between 2.38 s and 2.46 s: back between its neighbours.
        (214_320, far, inStep(from: 221_520), .repaired(decodeTime: 217_920)),
        // Far behind, too: 0 s between 22.2 s and 22.3 s.
        (2_000_000, 0, inStep(from: 2_007_200), .repaired(decodeTime: 2_003_600)),
        // Three packets far (one damaged PES): the first of them goes one step after the previous one.
        (214_320, far, [far + 3_600, far + 7_200] + inStep(from: 228_720), .repaired(decodeTime: 217_920)),
        // The last packet of the file: one duration after the previous one.
        (214_320, far, [], .repaired(decodeTime: 217_920)),
        // The track goes on at the far time: a jump of the timeline.
        (214_320, far, inStep(from: far + 3_600), .jump),
    ])
    func samplesFarFromTheirNeighboursAreRestamped(previous: Int64?, current: Int64, upcoming: [Int64],
                                                   expected: TimestampJump.Verdict) {
        #expect(TimestampJump.judge(previous: previous, current: current, upcoming: upcoming, durationHint: 3_600,
                                    limit: Self.limit) == expected)
    }
}
