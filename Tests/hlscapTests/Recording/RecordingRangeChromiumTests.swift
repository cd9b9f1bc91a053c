import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// Chromium's own HLS player (`<video src=…m3u8>`, not Media Source) plays a range of an H.264 recording
/// served by `hlscap serve --recordings`, within one file and across two, both from a page on another
/// origin and opened on the server's own origin.
@Suite(.serialized) struct RecordingRangeChromiumTests {
    /// A page on another origin asks for CORS (`crossorigin`, as serve.py's player page does): Chromium's
    /// HLS data source reads no byte range of an opaque (no-cors) answer, FFmpeg's single-file playlists'
    /// ranges no more than these ("HlsDemuxerStatus::Network read error").
    enum Opener: String, CaseIterable {
        case pageOnAnotherOrigin, playlistItself
    }

    @Test func aRangeWithinOneFileAndOneAcrossTwoPlayInChromiumsOwnPlayer() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("rec")
        // 24 s in files of 10 s: a short first file, a whole second, and a third of at least 4 s.
        let made = try ExternalTools.runHlscap(["live", "--video", "test", "--audio", "test", "--size", "320x180",
                                                "--no-realtime", "--duration", "24", "--window", "0", "--quiet",
                                                "--out", directory.appendingPathComponent("stream").path,
                                                "--record", folder.path + "/%H-%M-%S.mp4", "--record-every", "10s",
                                                "--record-codec", "h264"], timeoutSeconds: 180)
        try #require(made.succeeded, "\(made.stderr)")
        let listed = try ExternalTools.runHlscap(["recordings", folder.path, "--json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
        let files = try #require(document["files"] as? [[String: Any]])
        try #require(files.count >= 3, "\(listed.stdout)")
        let date = { (text: Any?) throws -> Date in try #require(ProgramDateTime.parse(Substring(text as? String ?? ""))) }
        let whole = (start: try date(files[1]["start"]), end: try date(files[1]["end"]))
        let ranges = [
            (name: "within one file", from: whole.start.addingTimeInterval(1), to: whole.end.addingTimeInterval(-1), files: 1),
            (name: "across two files", from: whole.end.addingTimeInterval(-4), to: whole.end.addingTimeInterval(3), files: 2),
        ]

        let served = try ServedStream.start(["serve", directory.appendingPathComponent("stream").path,
                                             "--recordings", folder.path, "--listen", "127.0.0.1:0"])
        defer { served.process.send(SIGTERM) }
        let page = try ServedPage.start()
        defer { page.stop() }
        for range in ranges {
            let query = "recordings/playlist.m3u8?start=\(ProgramDateTime.format(range.from))&end=\(ProgramDateTime.format(range.to))"
            let reply = try served.get(query)
            try #require(reply.status == 200, "\(range.name): \(reply.status)")
            let playlist = try MediaPlaylist.parse(String(decoding: reply.body, as: UTF8.self))
            #expect(Set(playlist.segments.map(\.uri)).count == range.files, "\(range.name): \(playlist.render())")
            let url = served.base.absoluteString + query
            for opener in Opener.allCases {
                let how = opener == .playlistItself ? ["--open-playlist"] : ["--player-page", page.playerURL]
                let played = try ExternalTools.runJSONTool("chromium_play.py", ["--url", url, "--media-log", "--timeout", "40"] + how,
                                                           timeoutSeconds: 90)
                // To the end (the element's and the playlist's durations), with no error from the element or
                // from Chromium's demuxer and decoders.
                #expect(played.ok, "\(range.name), \(opener): \(played.text)")
                #expect(played.report["mediaErrors"] as? [String] == [], "\(range.name), \(opener): \(played.text)")
                #expect(played.report["currentTime"] as? Double ?? 0 > 5, "\(range.name), \(opener): \(played.text)")
            }
        }
    }

    /// A file with sound copied with `--audio none`: the recording holds the video alone. It used to declare
    /// the file's AAC track too and never fill it, and Chromium's player then waited for sound at 0 s
    /// without an error (the media log: "Media segment did not contain any coded frames for track 2").
    @Test func aCopiedFileRecordedWithoutItsSoundPlaysInChromiumsOwnPlayer() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("rec")
        let fixture = ExternalTools.fixturesDirectory.appendingPathComponent("h264-aac.mp4").path
        let made = try ExternalTools.runHlscap(["live", "--video", fixture, "--audio", "none", "--no-realtime",
                                                "--window", "0", "--quiet",
                                                "--out", directory.appendingPathComponent("stream").path,
                                                "--record", folder.appendingPathComponent("rec.mp4").path],
                                               timeoutSeconds: 120)
        try #require(made.succeeded, "\(made.stderr)")
        let listed = try ExternalTools.runHlscap(["recordings", folder.path, "--json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
        let file = try #require((document["files"] as? [[String: Any]])?.first, "\(listed.stdout)")
        let codecs = try #require(file["codecs"] as? [String], "\(listed.stdout)")
        #expect(codecs.count == 1 && codecs[0].hasPrefix("avc1."), "\(listed.stdout)")
        let start = try #require(file["start"] as? String, "\(listed.stdout)")

        let served = try ServedStream.start(["serve", directory.appendingPathComponent("stream").path,
                                             "--recordings", folder.path, "--listen", "127.0.0.1:0"])
        defer { served.process.send(SIGTERM) }
        let url = served.base.absoluteString + "recordings/playlist.m3u8?start=\(start)&duration=30"
        let played = try ExternalTools.runJSONTool("chromium_play.py", ["--url", url, "--media-log", "--open-playlist",
                                                                        "--timeout", "30"], timeoutSeconds: 80)
        // The fixture's 4 s, to the end.
        #expect(played.ok, "\(played.text)")
        #expect(played.report["currentTime"] as? Double ?? 0 > 3.5, "\(played.text)")
    }
}
