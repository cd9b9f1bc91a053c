import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `hlscap live --dvr`: a window given as a duration, and from `--serve` the playlist as delta updates.
/// The window a duration makes is the plan's (PlanLiveTests.dvrWindow); that the engine keeps it,
/// deleting what leaves it, runs in process (LiveEngineWindowTests).
@Suite(.serialized) struct LiveDVRTests {
    @Test func aServedDVRWindowReloadsAsDeltaUpdates() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        // 1 s segments: CAN-SKIP-UNTIL is 6 s, and a delta lists the last six.
        let served = try ServedStream.start(["live", "--video", "test", "--audio", "test", "--size", "320x180",
                                             "--segment-duration", "1", "--dvr", "1m", "--duration", "30",
                                             "--serve", "127.0.0.1:0", "--out", stream.path, "--quiet"])
        defer { served.process.send(SIGKILL) }
        var full = ""
        let deadline = Date(timeIntervalSinceNow: 60)
        while Date() < deadline, full.components(separatedBy: "#EXTINF").count - 1 < 14 {
            Thread.sleep(forTimeInterval: 0.5)
            full = String(decoding: try served.get("playlist.m3u8").body, as: UTF8.self)
        }
        let listed = full.components(separatedBy: "#EXTINF").count - 1
        #expect(listed >= 14, "\(full)")
        #expect(full.contains("#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=NO,CAN-SKIP-UNTIL=6.000\n"), "\(full)")
        // The file on disk is a regular live playlist: a static server cannot answer _HLS_skip.
        let onDisk = try String(contentsOf: stream.appendingPathComponent("playlist.m3u8"), encoding: .utf8)
        #expect(!onDisk.contains("CAN-SKIP-UNTIL") && onDisk.contains("#EXT-X-MEDIA-SEQUENCE:1\n"))

        let reply = try served.get("playlist.m3u8?_HLS_skip=YES")
        let delta = String(decoding: reply.body, as: UTF8.self)
        #expect(reply.status == 200)
        let skipped = try #require(delta.split(separator: "\n").first { $0.hasPrefix("#EXT-X-SKIP:SKIPPED-SEGMENTS=") }
            .flatMap { Int($0.split(separator: "=").last!) }, "\(delta)")
        let deltaSegments = try MediaPlaylist.parse(delta).segments
        #expect((5...7).contains(deltaSegments.count), "\(delta)")
        #expect(skipped + deltaSegments.count >= listed, "the delta covers every segment listed before it")
        #expect(skipped >= listed - 7 && delta.utf8.count < full.utf8.count, "\(delta.utf8.count) bytes against \(full.utf8.count)")
        #expect(try served.get("playlist.m3u8?_HLS_skip=later").status == 400)

        // A player follows it: the validator's live mode reloads the served playlist, ffmpeg reads it.
        let followed = try ExternalTools.validateStream(served.entry.absoluteString, ["--live", "4", "--sample", "1"])
        #expect(followed.succeeded, "\(followed.stdout)\(followed.stderr)")
        let ffmpeg = try ExternalTools.run("ffmpeg", ["-v", "error", "-i", served.entry.absoluteString, "-t", "3",
                                                      "-f", "null", "-"], timeoutSeconds: 60)
        #expect(ffmpeg.succeeded && ffmpeg.stderr.isEmpty, "\(ffmpeg.stderr)")
    }

    @Test func aDVRWindowIsADurationAndNotAlsoAWindow() throws {
        let out = try PackagedStream.temporaryDirectory().appendingPathComponent("s").path
        let both = try ExternalTools.runHlscap(["live", "--video", "test", "--audio", "test", "--out", out,
                                                "--dvr", "2h", "--window", "10"])
        #expect(both.exitStatus == 64 && both.stderr.contains("--dvr") && both.stderr.contains("--window"), "\(both.stderr)")
        let unreadable = try ExternalTools.runHlscap(["live", "--video", "test", "--audio", "test", "--out", out,
                                                      "--dvr", "two hours"])
        #expect(unreadable.exitStatus == 64 && unreadable.stderr.contains("--dvr takes a duration"), "\(unreadable.stderr)")
    }
}
