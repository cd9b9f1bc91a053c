import Foundation
import HLSTestSupport
import Testing

/// `hlscap run` with `server:`: one server for every stream, each below `/NAME/`, the index at `/`,
/// the API and `/metrics` with a `stream` label; the routing, tokens and pages are tested in process
/// (SiteServerTests), this checks them wired to real streams and a real browser.
@Suite(.serialized) struct RunServerTests {
    @Test func theIndexShowsEveryCameraAndPlaysTheOneClicked() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("live")
        let token = "viewer-\(UUID().uuidString)"
        let file = directory.appendingPathComponent("hlscap.yml")
        try """
            out: \(out.path)
            defaults: {video: test, audio: test, size: 320x180, fps: 15, segment-duration: 1}
            streams:
              door:
              yard: {audio: none}
              gate: {video: /dev/video-hlscap-none}
            server:
              listen: 127.0.0.1:0
              auth-token: \(token)
            """.write(to: file, atomically: true, encoding: .utf8)
        let hlscap = try ExternalTools.startHlscap(["run", file.path])
        defer { hlscap.send(SIGKILL) }
        let base = try #require(Self.servedAt(hlscap), "\(hlscap.stderr)")
        for name in ["door", "yard"] {
            try #require(LiveStream.waitForSegments(2, in: out.appendingPathComponent(name), of: hlscap), "\(hlscap.stderr)")
        }

        // Each stream below its name, asking for the server's token.
        #expect(try ServedStream.fetch(base.appendingPathComponent("door/playlist.m3u8")).status == 401)
        let playlist = try ServedStream.fetch(URL(string: base.absoluteString + "yard/playlist.m3u8?token=" + token)!)
        #expect(playlist.status == 200 && String(decoding: playlist.body, as: UTF8.self).contains("?token=" + token))

        let api = try ServedStream.fetch(URL(string: base.absoluteString + "api/v1/streams?token=" + token)!)
        let streams = try #require((try JSONSerialization.jsonObject(with: api.body) as? [String: Any])?["streams"] as? [[String: Any]])
        #expect(streams.map { $0["name"] as? String } == ["door", "yard", "gate"], "\(streams)")
        for stream in streams.prefix(2) {
            #expect(stream["state"] as? String == "live" && stream["input"] as? String == "test source", "\(stream)")
            #expect((stream["bitsPerSecond"] as? Int ?? 0) > 0 && stream["lastSegmentAgeSeconds"] is Double, "\(stream)")
        }
        // A camera that could not start is listed, stopped, with why; the others go on.
        #expect(streams[2]["state"] as? String == "stopped", "\(streams[2])")
        #expect((streams[2]["reason"] as? String ?? "").hasPrefix("/dev/video-hlscap-none: "), "\(streams[2])")

        let metrics = try ExternalTools.run("python3", [ExternalTools.toolsDirectory.appendingPathComponent("metrics_check.py").path,
                                                         base.absoluteString + "metrics?token=" + token], timeoutSeconds: 30)
        let samples = try #require(try JSONSerialization.jsonObject(with: Data(metrics.stdout.utf8)) as? [String: Double],
                                   "\(metrics.stdout) \(metrics.stderr)")
        #expect(samples["hlscap_segments_total{stream=door}"] ?? 0 >= 2, "\(samples)")
        #expect(samples["hlscap_stream_state{state=live,stream=yard}"] == 1, "\(samples)")

        let page = try ExternalTools.runJSONTool("index_play.py", [base.absoluteString + "?token=" + token, "--click", "yard",
                                                                   "--seconds", "2"], timeoutSeconds: 90)
        #expect(page.ok, "\(page.text)")
        let cards = try #require(page.report["cards"] as? [[String: Any]])
        #expect(cards.map { $0["name"] as? String } == ["door", "yard", "gate"], "\(cards)")
        #expect(cards.map { $0["state"] as? String } == ["live", "live", "stopped"], "\(cards)")
        #expect(page.report["page"] as? String == base.absoluteString + "yard/?token=" + token, "\(page.text)")
        #expect(page.report["back"] as? String == base.absoluteString + "?token=" + token, "\(page.text)")

        hlscap.send(SIGINT)
        let result = hlscap.finish(timeoutSeconds: LiveStream.stopSeconds)
        // The worst status of the streams: the missing camera's.
        #expect(result.exitStatus == 66, "\(result.stderr)")
    }

    /// The server's address from its "serving N streams at URL" line.
    static func servedAt(_ hlscap: BackgroundProcess) -> URL? {
        let deadline = Date(timeIntervalSinceNow: ServedStream.startupSeconds)
        while Date() < deadline && hlscap.isRunning {
            if let line = hlscap.stderr.split(separator: "\n").first(where: { $0.hasPrefix("hlscap: serving ") }),
               let range = line.range(of: " at ") {
                return URL(string: String(line[range.upperBound...].split(separator: " ")[0]))
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return nil
    }
}
