import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `hlscap run` with three real RTSP cameras (GStreamer's server), one of which goes away and one of
/// which stops answering: each of those two is reported and waited for on its own while the third's
/// segments keep coming on time, and each comes back as its own stream.
@Suite(.serialized) struct RunIsolationTests {
    @Test func aCameraThatGoesAwayOrStallsReconnectsAloneWhileTheOthersKeepTheirTiming() throws {
        let steady = try RTSPCamera.start(["--size", "320x180", "--key-seconds", "1"])
        defer { steady.stop() }
        let gonePort = try SilentListener.freePort()
        let gone = try RTSPCamera.start(["--port", String(gonePort), "--size", "320x180", "--key-seconds", "1"])
        defer { gone.stop() }
        let stalled = try RTSPCamera.start(["--size", "320x180", "--key-seconds", "1"])
        defer {
            stalled.process.send(SIGCONT)
            stalled.stop()
        }
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("live")
        let file = directory.appendingPathComponent("hlscap.yml")
        try """
            out: \(out.path)
            defaults: {audio: none, segment-duration: 1, window: 0, reconnect: true, stall-timeout: 2}
            streams:
              steady: {video: "\(steady.url("h264"))"}
              gone: {video: "\(gone.url("h264"))"}
              stalled: {video: "\(stalled.url("h264"))"}
            server:
              listen: 127.0.0.1:0
            """.write(to: file, atomically: true, encoding: .utf8)
        let hlscap = try ExternalTools.startHlscap(["run", file.path])
        defer { hlscap.send(SIGKILL) }
        let base = try #require(RunServerTests.servedAt(hlscap), "\(hlscap.stderr)")
        for name in ["steady", "gone", "stalled"] {
            try #require(LiveStream.waitForSegments(2, in: out.appendingPathComponent(name), of: hlscap), "\(hlscap.stderr)")
        }

        // One camera goes away (its server ends), one stops answering (its server is stopped).
        gone.process.send(SIGTERM)
        #expect(gone.process.waitForExit(timeoutSeconds: 10) != nil)
        stalled.process.send(SIGSTOP)
        let steadyBefore = try LiveStream.playlist(in: out.appendingPathComponent("steady")).segments.count
        let states = Self.waitForStates(["steady": "live", "gone": "reconnecting", "stalled": "reconnecting"], at: base,
                                        seconds: 20)
        #expect(states == ["steady": "live", "gone": "reconnecting", "stalled": "reconnecting"], "\(hlscap.stderr)")

        // Both come back: the first camera on its port again, the second resumed.
        let back = try RTSPCamera.start(["--port", String(gonePort), "--size", "320x180", "--key-seconds", "1"])
        defer { back.stop() }
        stalled.process.send(SIGCONT)
        let again = Self.waitForStates(["steady": "live", "gone": "live", "stalled": "live"], at: base, seconds: 30)
        #expect(again == ["steady": "live", "gone": "live", "stalled": "live"], "\(hlscap.stderr)")
        let steadyDuring = try LiveStream.playlist(in: out.appendingPathComponent("steady")).segments.count
        #expect(steadyDuring >= steadyBefore + 3, "the steady camera's stream went on: \(steadyBefore) → \(steadyDuring)")

        hlscap.send(SIGINT)
        let result = hlscap.finish(timeoutSeconds: LiveStream.stopSeconds)
        #expect(result.exitStatus == 0, "\(result.stderr)")

        // The steady camera's stream: no discontinuity, and each segment starts where the one before
        // ended, on the wall clock too (its program date-times advance by its durations).
        let steadyStream = out.appendingPathComponent("steady")
        let playlist = try LiveStream.playlist(in: steadyStream)
        #expect(playlist.endList && playlist.segments.allSatisfy { !$0.discontinuity }, "\(playlist.segments)")
        for (earlier, later) in zip(playlist.segments, playlist.segments.dropFirst()) {
            guard let start = earlier.programDateTime, let next = later.programDateTime else { continue }
            let gap = next.timeIntervalSince(start) - earlier.durationSeconds
            #expect(abs(gap) < 0.05, "\(earlier.uri) → \(later.uri): \(gap) s off")
        }
        #expect(playlist.segments.contains { $0.programDateTime != nil })
        try ExternalTools.validateStream(steadyStream)
        // The two others: one discontinuity each where the camera was waited for, and valid.
        for name in ["gone", "stalled"] {
            let stream = out.appendingPathComponent(name)
            let text = try String(contentsOf: stream.appendingPathComponent("playlist.m3u8"), encoding: .utf8)
            #expect(text.components(separatedBy: "#EXT-X-DISCONTINUITY\n").count >= 2, "\(name): \(text)")
            try ExternalTools.validateStream(stream)
        }
    }

    /// Polls `/api/v1/streams` until each named stream is in its state or `seconds` pass; the states seen last.
    static func waitForStates(_ wanted: [String: String], at base: URL, seconds: Double) -> [String: String] {
        let deadline = Date(timeIntervalSinceNow: seconds)
        var seen: [String: String] = [:]
        repeat {
            if let answer = try? ServedStream.fetch(base.appendingPathComponent("api/v1/streams")),
               let object = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any],
               let streams = object["streams"] as? [[String: Any]] {
                seen = Dictionary(streams.compactMap { stream in
                    (stream["name"] as? String).map { ($0, stream["state"] as? String ?? "") }
                }, uniquingKeysWith: { first, _ in first })
                if seen == wanted { return seen }
            }
            Thread.sleep(forTimeInterval: 0.2)
        } while Date() < deadline
        return seen
    }
}
