import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `hlscap run` reloaded with SIGHUP: a stream added starts, a stream removed ends with ENDLIST, a stream
/// changed goes on after a discontinuity, the stream left alone goes on untouched, and a file that does not check leaves the running set as it was.
/// The diff itself is tested in process (RunChangesTests), the HTTP reload too (SiteServerTests).
@Suite(.serialized) struct RunReloadTests {
    static func file(out: URL, streams: String) -> String {
        """
        out: \(out.path)
        defaults: {video: test, audio: none, size: 320x180, fps: 15, segment-duration: 1, window: 0}
        streams:
        \(streams)
        """
    }

    static func waitUntil(_ condition: () -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: LiveStream.startupSeconds)
        while !condition() {
            guard Date() < deadline else { return false }
            Thread.sleep(forTimeInterval: LiveStream.pollSeconds)
        }
        return true
    }

    @Test func aReloadStartsTheNewStreamEndsTheRemovedOneAndLeavesTheOtherAlone() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("live")
        let file = directory.appendingPathComponent("hlscap.yml")
        let (kept, gone, new, changed) = (out.appendingPathComponent("kept"), out.appendingPathComponent("gone"),
                                          out.appendingPathComponent("new"), out.appendingPathComponent("changed"))
        try Self.file(out: out, streams: "  kept:\n  gone: {audio: test}\n  changed:")
            .write(to: file, atomically: true, encoding: .utf8)
        let hlscap = try ExternalTools.startHlscap(["run", file.path])
        defer { hlscap.send(SIGKILL) }
        for stream in [kept, gone, changed] {
            try #require(LiveStream.waitForSegments(2, in: stream, of: hlscap), "\(hlscap.stderr)")
        }

        try Self.file(out: out, streams: "  new:\n  kept:\n  changed: {video-bitrate: 200k}")
            .write(to: file, atomically: true, encoding: .utf8)
        hlscap.send(SIGHUP)
        try #require(LiveStream.waitForSegments(2, in: new, of: hlscap), "\(hlscap.stderr)")
        #expect(Self.waitUntil { (try? LiveStream.playlist(in: gone).endList) == true }, "\(hlscap.stderr)")
        #expect(hlscap.stderr.contains("reloaded: starting new; stopping gone; restarting changed; unchanged kept"),
                "\(hlscap.stderr)")
        #expect(Self.waitUntil { (try? LiveStream.playlist(in: changed).segments.contains { $0.discontinuity }) == true },
                "\(hlscap.stderr)")

        // A file that does not check: refused with its line and column, and the streams go on.
        try Self.file(out: out, streams: "  kept:\n  new: {ladders: 360p}").write(to: file, atomically: true, encoding: .utf8)
        hlscap.send(SIGHUP)
        #expect(Self.waitUntil { hlscap.stderr.contains("does not check; the running streams go on as they were") },
                "\(hlscap.stderr)")
        #expect(hlscap.stderr.contains("\(file.path):5:9: stream new: unknown key 'ladders'"), "\(hlscap.stderr)")
        let listed = try LiveStream.playlist(in: new).segments.count
        try #require(LiveStream.waitForSegments(listed + 1, in: new, of: hlscap), "\(hlscap.stderr)")

        hlscap.send(SIGINT)
        let result = hlscap.finish(timeoutSeconds: LiveStream.stopSeconds)
        #expect(result.exitStatus == 0, "\(result.stderr)")
        for stream in [kept, gone, new, changed] {
            #expect(try LiveStream.playlist(in: stream).endList, "\(stream.lastPathComponent)")
            try ExternalTools.validateStream(stream)
        }
        // The stream left alone: no discontinuity, every segment number in turn, not a frame dropped.
        let playlist = try LiveStream.playlist(in: kept)
        #expect(!playlist.segments.contains { $0.discontinuity })
        let numbers = playlist.segments.compactMap { StreamLayout.sequenceNumber(ofPath: $0.uri) }
        #expect(numbers.count == playlist.segments.count && numbers == Array(numbers.indices.map { numbers[0] + $0 }),
                "\(numbers)")
        let summary = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("kept: ") && $0.contains("dropped") },
                                   "\(result.stdout)")
        let counts = try #require(LiveStream.frameCounts(String(summary)))
        #expect(counts.dropped == 0 && counts.frames > 0, "\(summary)")
    }
}
