import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `hlscap validate` through the built binary: exit codes, report formats, and streams made by
/// hlscap, ffmpeg and GStreamer.
@Suite struct ValidateCommandTests {
    static let fixtures = ExternalTools.fixturesDirectory.appendingPathComponent("validate")

    func validate(_ arguments: [String]) throws -> ProcessResult {
        try ExternalTools.runHlscap(["validate"] + arguments)
    }

    @Test func aValidStreamExitsZeroWithAVerdict() throws {
        let result = try validate([Self.fixtures.appendingPathComponent("base").path])
        #expect(result.exitStatus == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.hasSuffix("master.m3u8: valid (0 errors, 0 warnings; read 3 playlists, 6 segments)\n"))
    }

    @Test func errorsExit65WithTheRuleAndLineAndOneLineOnStderr() throws {
        let result = try validate([Self.fixtures.appendingPathComponent("version").path])
        #expect(result.exitStatus == 65)
        #expect(result.stdout.hasPrefix("error: playlist.m3u8:2: [version, RFC 8216bis 4.4.1.2, 8] EXT-X-VERSION:3"))
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stderr.hasPrefix("hlscap: ") && result.stderr.contains("version"))
    }

    @Test func warningsFailOnlyWithStrict() throws {
        let target = Self.fixtures.appendingPathComponent("apple-live-window").path
        let lenient = try validate([target])
        #expect(lenient.exitStatus == 0)
        #expect(lenient.stdout.hasPrefix("warning: playlist.m3u8: [apple-live-window"))
        #expect(try validate([target, "--strict"]).exitStatus == 65)
    }

    @Test func jsonReportsEveryFinding() throws {
        let result = try validate([Self.fixtures.appendingPathComponent("tfdt-continuity").path, "--json"])
        #expect(result.exitStatus == 65)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let findings = try #require(object["findings"] as? [[String: Any]])
        #expect(findings.map { $0["rule"] as? String } == ["tfdt-continuity", "tfdt-continuity"])
        #expect(findings.first?["byteOffset"] as? Int == 72)
        #expect(object["segmentCount"] as? Int == 3)
    }

    @Test func targetsThatCannotBeReadHaveTheirOwnExitCodes() throws {
        let missing = try validate(["/nonexistent/stream"])
        #expect(missing.exitStatus == 66)
        #expect(missing.stderr.contains("/nonexistent/stream does not exist"))
        let unreachable = try validate(["http://127.0.0.1:9/live/playlist.m3u8"])
        #expect(unreachable.exitStatus == 69)
        #expect(unreachable.stderr.contains("127.0.0.1:9"))
        // The kernel refuses reads of this readable file: a read failure, not a missing file.
        #expect(try validate(["/proc/self/mem"]).exitStatus == 74)
        #expect(try validate([]).exitStatus == 64)
        #expect(try validate(["x", "--sample", "0"]).exitStatus == 64)
    }

    @Test func bandwidthPrintsTheVariantsAndThePlayersChoice() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = "#EXT-X-STREAM-INF:BANDWIDTH=%d,CODECS=\"avc1.42c00a,mp4a.40.2\",RESOLUTION=96x64\n%@\n"
        let base = Self.fixtures.appendingPathComponent("base/playlist.m3u8").path
        let master = "#EXTM3U\n" + [3_000_000, 800_000, 1_400_000].map { String(format: stream, $0, base) }.joined()
        try master.write(to: directory.appendingPathComponent("master.m3u8"), atomically: true, encoding: .utf8)
        let result = try validate([directory.path, "--bandwidth", "1.5M"])
        #expect(result.stdout.contains("a player with 1500000 b/s starts with \(base)"))
        #expect(result.stdout.contains("*  1400000"))
        let slow = try validate([directory.path, "--bandwidth", "100k"])
        #expect(slow.stdout.contains("*  800000"))
        let json = try validate([directory.path, "--bandwidth", "1.5M", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let chosen = object?["chosenVariant"] as? [String: Any]
        #expect(chosen?["bandwidthBitsPerSecond"] as? Int == 1_400_000)
    }

    @Test func aValidStreamServedOverHTTPIsReadThroughItsURL() throws {
        let server = try BackgroundTool("serve.py", [Self.fixtures.path], in: FileManager.default.temporaryDirectory)
        defer { server.stop() }
        let url = try server.announcedURL(prefix: "serving")
        let result = try validate([url + "base/master.m3u8"])
        #expect(result.exitStatus == 0, "\(result.stdout)\(result.stderr)")
        #expect(try validate([url + "base/absent.m3u8"]).exitStatus == 66)
        let error = try validate([url + "segment-boxes/playlist.m3u8"])
        #expect(error.exitStatus == 65)
        #expect(error.stdout.contains("error: 000002.m4s@92: [segment-boxes"))
    }

    @Test func aDamagedSegmentExits65() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let copy = directory.appendingPathComponent("stream")
        try FileManager.default.copyItem(at: Self.fixtures.appendingPathComponent("base"), to: copy)
        let segment = copy.appendingPathComponent("seg/000002.m4s")
        var bytes = [UInt8](try Data(contentsOf: segment))
        for index in stride(from: 0, to: bytes.count, by: 7) { bytes[index] = UInt8(truncatingIfNeeded: index) }
        try Data(bytes).write(to: segment)
        let result = try validate([copy.path])
        #expect(result.exitStatus == 65)
        #expect(result.stdout.contains("seg/000002.m4s"))
    }

    // MARK: Streams made by others

    func ffmpegHLS(_ input: String, _ arguments: [String], in directory: URL) throws {
        let result = try ExternalTools.run("ffmpeg", ["-nostdin", "-v", "error", "-i", input, "-c", "copy", "-f", "hls",
                                                      "-hls_segment_type", "fmp4", "-hls_time", "2"] + arguments)
        guard result.succeeded else { throw ExternalToolError.failed(command: "ffmpeg -f hls", result: result) }
    }

    @Test(arguments: [["-hls_playlist_type", "vod"], ["-hls_flags", "single_file"],
                      ["-hls_flags", "independent_segments+program_date_time", "-hls_list_size", "0"]])
    func ffmpegFragmentedMP4OutputHasNoError(flags: [String]) throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = ExternalTools.fixturesDirectory.appendingPathComponent("h264-bframes-aac.mp4").path
        try ffmpegHLS(input, flags + ["-master_pl_name", "master.m3u8", directory.appendingPathComponent("out.m3u8").path],
                      in: directory)
        try ExternalTools.validateStream(directory.appendingPathComponent("master.m3u8"))
    }

    /// ffmpeg 5.1 copying x265 output with B-frames writes EXTINF:2.000000 for a first segment whose
    /// samples last 1.900 s (57 frames at 30 fps); rotation plays no part. The README names this.
    @Test func ffmpegsCopyOfAnHEVCClipWithBFramesMisstatesTheFirstDuration() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clip = directory.appendingPathComponent("hevc.mp4").path
        let encode = try ExternalTools.run("ffmpeg", [
            "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-t", "6",
            "-c:v", "libx265", "-x265-params", "log-level=error:keyint=30", "-metadata:s:v", "rotate=90", clip])
        guard encode.succeeded else { throw ExternalToolError.failed(command: "ffmpeg libx265", result: encode) }
        try ffmpegHLS(clip, [directory.appendingPathComponent("out.m3u8").path], in: directory)
        let result = try validate([directory.appendingPathComponent("out.m3u8").path])
        #expect(result.exitStatus == 65)
        let errors = result.stdout.split(separator: "\n").filter { $0.hasPrefix("error:") }
        #expect(errors == ["error: out0.m4s: [extinf-duration, RFC 8216bis 4.4.4.1] EXTINF says 2.0 s (line 6) but its "
                           + "video lasts 1.900 s, more than one frame (0.033 s) apart"])
    }

    @Test func gstreamerHLSSinkOutputHasNoError() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pipeline = "videotestsrc num-buffers=150 ! video/x-raw,width=320,height=240,framerate=30/1 "
            + "! openh264enc gop-size=30 ! h264parse ! hlssink2 name=sink target-duration=2 max-files=0 playlist-length=0 "
            + "playlist-location=\(directory.path)/playlist.m3u8 location=\(directory.path)/segment%05d.ts "
            + "audiotestsrc num-buffers=230 ! audio/x-raw,rate=48000 ! avenc_aac ! aacparse ! sink.audio"
        // Debian 12's gst-launch never ends this pipeline in about one run of twenty (it takes well under
        // a second otherwise): a run still going after 20 s is killed and the pipeline run again.
        var result: ProcessResult?
        for _ in 0..<4 where result?.timedOut ?? true {
            try? FileManager.default.removeItem(at: directory)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            result = try ExternalTools.run("gst-launch-1.0", ["-q"] + pipeline.split(separator: " ").map(String.init),
                                           timeoutSeconds: 20)
        }
        let finished = try #require(result)
        try #require(finished.succeeded, "gst-launch: \(finished.stderr)")
        try ExternalTools.validateStream(directory)
    }

    // MARK: Live

    @Test func aGrowingLiveStreamPassesTheLiveChecks() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let hlscap = try ExternalTools.startHlscap(["live", "--video", "test", "--audio", "test", "--size", "320x240",
                                                   "--duration", "14", "--window", "3", "--quiet", "--out", directory.path])
        #expect(LiveStream.waitForSegments(1, in: directory, of: hlscap))
        let result = try validate([directory.path, "--live", "8"])
        #expect(result.exitStatus == 0, "\(result.stdout)\(result.stderr)")
        _ = hlscap.finish(timeoutSeconds: 30)
        try ExternalTools.validateStream(directory)
    }
}
