import Foundation
import HLSTestSupport
import Testing
@testable import HLSMedia

@Suite struct TimestampJumpTests {
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

@Suite struct FileDemuxerTimestampTests {
    /// The MPEG-TS fixture with video PES packet 50 (at 3.42 s) stamped 3219.9 s.
    static func restampedFixture() throws -> String {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("restamped-\(UUID().uuidString).ts")
        let result = try ExternalTools.run("python3", [
            ExternalTools.toolsDirectory.appendingPathComponent("ts_restamp.py").path,
            ExternalTools.fixturesDirectory.appendingPathComponent("h264-aac.ts").path, output.path,
            "--stream", "video", "--index", "50", "--seconds", "3219.9"])
        try #require(result.succeeded, "\(result.stderr)")
        return output.path
    }

    /// A composition time 5967 s after its decode time (a flipped PTS bit, found by `make fuzz`): the
    /// transcoder filled the gap for 23 s, then failed with exit 70.
    @Test func aCompositionTimeFarFromItsDecodeTimeIsDropped() throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("restamped-\(UUID().uuidString).ts")
        defer { try? FileManager.default.removeItem(at: output) }
        let result = try ExternalTools.run("python3", [
            ExternalTools.toolsDirectory.appendingPathComponent("ts_restamp.py").path,
            ExternalTools.fixturesDirectory.appendingPathComponent("hevc-hlg.ts").path, output.path,
            "--stream", "video", "--index", "20", "--seconds", "5967.5", "--keep-dts"])
        try #require(result.succeeded, "\(result.stderr)")
        let demuxer = try FileDemuxer(path: output.path)
        let video = try readAllPackets(demuxer).filter { demuxer.streams[$0.streamIndex].kind == .video }
        #expect(video.count == 75)
        #expect(video.compactMap(\.pts).allSatisfy { $0 < 10 * 90_000 })
        #expect(video.filter { $0.pts == nil }.count == 1)
        #expect(demuxer.restampedPacketCount == 1)
    }

    @Test func aPacketStampedFarFromItsNeighboursComesBackBetweenThem() throws {
        let path = try Self.restampedFixture()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let demuxer = try FileDemuxer(path: path)
        let video = try readAllPackets(demuxer).filter { demuxer.streams[$0.streamIndex].kind == .video }
        let times = video.compactMap(\.dts)
        #expect(video.count == 100)
        #expect(times == times.sorted(), "in decode order again")
        #expect(times.max() ?? 0 < 10 * 90_000)
        #expect(demuxer.restampedPacketCount == 1)
        let original = try FileDemuxer(path: ExternalTools.fixturesDirectory.appendingPathComponent("h264-aac.ts").path)
        let originalTimes = try readAllPackets(original).filter { original.streams[$0.streamIndex].kind == .video }
            .compactMap(\.dts)
        #expect(times == originalTimes, "between its neighbours is where it was")
    }
}
