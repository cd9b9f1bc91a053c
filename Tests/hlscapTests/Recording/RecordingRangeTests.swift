import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `/recordings/playlist.m3u8?start=…&duration=…`: a time range of the recordings as a playlist of byte
/// ranges of the files, served by `hlscap serve --recordings`.
@Suite(.serialized) struct RecordingRangeTests {
    /// Seconds recorded: `make recording-hour` sets an hour (in files of 10 minutes); `make test` records
    /// 40 s in files of 10 s.
    static let seconds = Int(ProcessInfo.processInfo.environment["HLSCAP_RECORDING_SECONDS"] ?? "") ?? 40

    @Test func aRangeAcrossTwoFilesAndAGapIsServedValidAndPlays() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let folder = directory.appendingPathComponent("rec")
        let started = Date()
        let made = try ExternalTools.runHlscap(["live", "--video", "test", "--audio", "test", "--size", "320x180",
                                                "--no-realtime", "--duration", String(Self.seconds),
                                                "--out", stream.path, "--quiet",
                                                "--record", folder.path + "/%Y-%m-%d/%H-%M-%S.mp4",
                                                "--record-every", Self.seconds >= 3600 ? "10m" : "10s",
                                                "--record-codec", "h264"], timeoutSeconds: Double(max(180, Self.seconds)))
        #expect(made.succeeded, "\(made.stderr)")
        let madeSeconds = Date().timeIntervalSince(started)
        print(String(format: "recorded %d s of 320x180 out of real time in %.1f s", Self.seconds, madeSeconds))
        let listed = try ExternalTools.runHlscap(["recordings", folder.path, "--json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
        let files = try #require(document["files"] as? [[String: Any]])
        // 40 s in 10 s files: the first and the last may be short (the stream starts between boundaries),
        // files 1, 2 and 3 are whole.
        try #require(files.count >= 4, "\(listed.stdout)")
        // The third file goes: the recording has a gap between the second and the fourth.
        try FileManager.default.removeItem(at: folder.appendingPathComponent(try #require(files[2]["path"] as? String)))
        let date = { (text: Any?) throws -> Date in try #require(ProgramDateTime.parse(Substring(text as? String ?? ""))) }
        let from = try date(files[1]["end"]).addingTimeInterval(-3)
        let to = try date(files[3]["start"]).addingTimeInterval(5)

        let served = try ServedStream.start(["serve", stream.path, "--recordings", folder.path, "--listen", "127.0.0.1:0"])
        defer { served.process.send(SIGTERM) }
        let query = "recordings/playlist.m3u8?start=\(ProgramDateTime.format(from))&end=\(ProgramDateTime.format(to))"
        let reply = try served.get(query)
        #expect(reply.status == 200)
        let text = String(decoding: reply.body, as: UTF8.self)
        let playlist = try MediaPlaylist.parse(text)
        #expect(playlist.endList && playlist.playlistType == .vod)
        let count = { (tag: String) in text.components(separatedBy: "\n" + tag).count - 1 }
        #expect(count("#EXT-X-BYTERANGE:") == playlist.segments.count && count("#EXT-X-PROGRAM-DATE-TIME:") == playlist.segments.count,
                "every segment a byte range, dated: \(text)")
        #expect(text.contains(",BYTERANGE=\"") && text.contains("#EXT-X-DISCONTINUITY\n"), "\(text)")
        // The first segment holds the start asked for: a seek to it lands within one fragment.
        let first = try #require(playlist.segments.first?.programDateTime)
        #expect(first <= from && from.timeIntervalSince(first) < playlist.segments[0].durationSeconds, "\(text)")
        let last = try #require(playlist.segments.last)
        #expect(last.programDateTime!.addingTimeInterval(last.durationSeconds) >= to)
        #expect(Set(playlist.segments.map(\.uri)).count == 2, "two files, nothing from the one deleted: \(text)")

        let url = served.base.absoluteString + query
        let validated = try ExternalTools.validateStream(url)
        #expect(validated.stdout.contains("valid"), "\(validated.stdout)")
        let decoded = try ExternalTools.run("ffmpeg", ["-v", "error", "-i", url, "-f", "null", "-"], timeoutSeconds: 60)
        #expect(decoded.succeeded && decoded.stderr.isEmpty, "\(decoded.stderr)")
        // Chromium's own HLS plays it to the end, from a page on another origin (the server sends CORS).
        let page = try ServedPage.start()
        defer { page.stop() }
        let played = try ExternalTools.chromiumPlays(url: url, playerPage: page.playerURL)
        #expect(played.ok, "\(played.report)")
        // hls.js in Chromium plays it through the discontinuity: byte ranges, byte-range init sections.
        let seconds = playlist.segments.reduce(0) { $0 + $1.durationSeconds }
        let hlsjs = try ExternalTools.runJSONTool("latency_probe.py", [url, "--hlsjs", HLSJS.path, "--vod",
                                                                       "--seconds", String(format: "%.1f", seconds - 1)],
                                                  timeoutSeconds: 120)
        #expect(hlsjs.ok, "\(hlsjs.text)")

        // A range with no recording is 404 with the reason; an inverted or absurd one, or none, is 400.
        let empty = try served.get("recordings/playlist.m3u8?start=2020-01-01T00:00:00Z&duration=60")
        #expect(empty.status == 404 && String(decoding: empty.body, as: UTF8.self).contains("no recording between"))
        let inverted = "recordings/playlist.m3u8?start=\(ProgramDateTime.format(to))&end=\(ProgramDateTime.format(from))"
        #expect(try served.get(inverted).status == 400)
        #expect(try served.get("recordings/playlist.m3u8?start=\(ProgramDateTime.format(from))&duration=99999999").status == 400)
        #expect(try served.get("recordings/playlist.m3u8?duration=60").status == 400)
        #expect(try served.get("recordings/files/../stream/playlist.m3u8").status == 404)
        let file = try #require(playlist.segments.first?.uri)
        let ranged = try served.get("recordings/" + file, headers: ["Range": "bytes=0-99"])
        #expect(ranged.status == 206 && ranged.body.count == 100)
    }
}

/// serve.py's player page on a port of its own, for a stream on another server.
struct ServedPage {
    let process: BackgroundProcess
    let playerURL: String

    static func start() throws -> ServedPage {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("page-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let process = try BackgroundProcess("python3", [ExternalTools.toolsDirectory.appendingPathComponent("serve.py").path,
                                                        empty.path, "0"])
        let deadline = Date(timeIntervalSinceNow: 10)
        while Date() < deadline {
            if let line = process.stdout.split(separator: "\n").first(where: { $0.hasPrefix("serving ") }) {
                return ServedPage(process: process, playerURL: String(line.dropFirst("serving ".count)) + "__player.html")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        process.send(SIGKILL)
        throw ExternalToolError.failed(command: "serve.py", result: process.finish(timeoutSeconds: 1))
    }

    func stop() { process.send(SIGTERM) }
}
