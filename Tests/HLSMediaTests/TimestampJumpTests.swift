import Foundation
import HLSKit
import HLSTestSupport
import Testing
@testable import HLSMedia

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
