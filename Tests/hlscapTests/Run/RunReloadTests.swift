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

/// `POST /api/v1/reload` over HTTPS: the renewed certificate at the same paths serves the next
/// connections, as SIGHUP's reload does (ServeCommandTests), and the streams go on.
@Suite(.serialized) struct RunReloadCertificateTests {
    @Test func aReloadByHTTPReadsTheCertificateAgain() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try ExternalTools.selfSignedCertificate(in: directory, name: "first")
        let renewed = try ExternalTools.selfSignedCertificate(in: directory, name: "renewed")
        let (key, certificate) = (directory.appendingPathComponent("key.pem").path, directory.appendingPathComponent("cert.pem").path)
        try FileManager.default.copyItem(atPath: first.key, toPath: key)
        try FileManager.default.copyItem(atPath: first.certificate, toPath: certificate)
        let out = directory.appendingPathComponent("live")
        let file = directory.appendingPathComponent("hlscap.yml")
        let admin = "admin-\(UUID().uuidString)"
        try """
            out: \(out.path)
            defaults: {video: test, audio: none, size: 320x180, fps: 15, segment-duration: 1, window: 0}
            streams:
              door:
            server: {listen: 127.0.0.1:0, tls-cert: \(certificate), tls-key: \(key), admin-token: \(admin)}
            """.write(to: file, atomically: true, encoding: .utf8)
        let hlscap = try ExternalTools.startHlscap(["run", file.path])
        defer { hlscap.send(SIGKILL) }
        let base = try #require(RunServerTests.servedAt(hlscap), "\(hlscap.stderr)")
        #expect(base.scheme == "https")
        func get(_ path: String, trusting authority: String, _ extra: [String] = []) throws -> String {
            try ExternalTools.run("curl", ["-s", "--cacert", authority, "-o", "/dev/null", "-w", "%{http_code}"] + extra
                                  + [base.absoluteString + path], timeoutSeconds: 20).stdout
        }
        #expect(try get("", trusting: first.certificate) == "200")
        try FileManager.default.removeItem(atPath: key)
        try FileManager.default.removeItem(atPath: certificate)
        try FileManager.default.copyItem(atPath: renewed.key, toPath: key)
        try FileManager.default.copyItem(atPath: renewed.certificate, toPath: certificate)
        #expect(try get("api/v1/reload", trusting: first.certificate, ["-X", "POST", "-H", "Authorization: Bearer \(admin)"]) == "200")
        #expect(hlscap.stderr.contains("reloaded the certificate \(certificate) for new connections"), "\(hlscap.stderr)")
        #expect(try get("", trusting: renewed.certificate) == "200")
        #expect(try get("", trusting: first.certificate) == "000", "the old certificate is no longer offered")
        try #require(LiveStream.waitForSegments(2, in: out.appendingPathComponent("door"), of: hlscap), "\(hlscap.stderr)")
    }
}
