import Foundation
import HLSTestSupport
import Testing

/// Real HTTP/2 clients (curl, nghttp, h2load, Chromium with hls.js) play a protected low-latency
/// ladder served over https, and curl over HTTP/1.1 gets the same answers.
@Suite struct HTTP2ClientTests {
    /// curl trusting `certificate`: the status, the HTTP version ("2", "1.1") and the body.
    static func curl(_ url: String, _ version: String, certificate: String) throws -> (status: Int, version: String, body: String) {
        let body = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: body) }
        let result = try ExternalTools.run("curl", ["-s", version, "--cacert", certificate, "--max-time", "10", "-o", body.path,
                                                    "-w", "%{http_code} %{http_version}", url], timeoutSeconds: 20)
        let fields = result.stdout.split(separator: " ")
        let text = (try? String(contentsOf: body, encoding: .utf8)) ?? ""
        return (Int(fields.first ?? "") ?? 0, fields.count > 1 ? String(fields[1]) : "", text)
    }

    @Test func realClientsPlayAProtectedLowLatencyLadderOverHTTP2() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (certificate, key) = try ExternalTools.selfSignedCertificate(in: directory)
        let token = "viewer-\(UUID().uuidString)"
        let served = try ServedStream.start(["live"] + LiveStream.testSource + [
            "--ladder", "360p,240p", "--serve", "127.0.0.1:0", "--low-latency", "--part-duration", "0.2",
            "--tls-cert", certificate, "--tls-key", key, "--auth-token", token, "--duration", "40",
            "--out", directory.appendingPathComponent("stream").path, "--quiet"])
        defer { served.process.send(SIGKILL) }
        try #require(served.base.scheme == "https")
        let master = served.base.appendingPathComponent("master.m3u8").absoluteString
        let media = served.base.appendingPathComponent("360p/playlist.m3u8").absoluteString
        // The master playlist is written with the first segment.
        let deadline = Date(timeIntervalSinceNow: 20)
        while Date() < deadline, try Self.curl(master + "?token=" + token, "--http2", certificate: certificate).status != 200 {
            Thread.sleep(forTimeInterval: 0.2)
        }

        // curl over h2 and over HTTP/1.1: the same statuses, with the token, without it, with a wrong one.
        for (version, expected) in [("--http2", "2"), ("--http1.1", "1.1")] {
            for url in [master, media] {
                let answered = try Self.curl(url + "?token=" + token, version, certificate: certificate)
                #expect(answered.status == 200 && answered.version == expected, "\(version) \(url): \(answered)")
                #expect(answered.body.contains("?token=" + token), "\(version) \(url): \(answered.body)")
                let without = try Self.curl(url, version, certificate: certificate)
                #expect(without.status == 401 && without.version == expected, "\(version) \(url): \(without)")
                let wrong = try Self.curl(url + "?token=guess", version, certificate: certificate)
                #expect(wrong.status == 403 && wrong.version == expected, "\(version) \(url): \(wrong)")
            }
        }

        // A blocking reload for the part the preload hint names is answered over h2 once it exists.
        let playlist = try Self.curl(media + "?token=" + token, "--http2", certificate: certificate).body
        let hint = try #require(playlist.split(separator: "\n").first { $0.hasPrefix("#EXT-X-PRELOAD-HINT:TYPE=PART") },
                                "\(playlist)")
        let name = try #require(hint.split(separator: "\"").dropFirst().first?.split(separator: "?").first, "\(hint)")
        let numbers = name.dropFirst("part/".count).split(separator: ".").prefix(2).compactMap { Int($0) }
        try #require(numbers.count == 2, "\(hint)")
        let blocked = try Self.curl(media + "?token=\(token)&_HLS_msn=\(numbers[0])&_HLS_part=\(numbers[1])", "--http2",
                                    certificate: certificate)
        #expect(blocked.status == 200 && blocked.version == "2", "\(blocked)")
        #expect(blocked.body.contains("URI=\"\(name)?token=\(token)\""), "\(blocked.body)")
        let part = served.base.absoluteString + "360p/" + name + "?token=" + token

        // nghttp negotiates h2 by ALPN and gets the part; without the token it gets 401.
        let nghttp = try ExternalTools.run("nghttp", ["-nv", part], timeoutSeconds: 20)
        #expect(nghttp.succeeded && nghttp.stdout.contains("The negotiated protocol: h2"), "\(nghttp.stdout)\(nghttp.stderr)")
        #expect(nghttp.stdout.contains(":status: 200") && nghttp.stdout.contains("recv DATA frame"), "\(nghttp.stdout)")
        let refused = try ExternalTools.run("nghttp", ["-nv", served.base.absoluteString + "360p/" + name], timeoutSeconds: 20)
        #expect(refused.stdout.contains(":status: 401"), "\(refused.stdout)")

        // h2load: 200 playlist requests on 4 connections, 10 streams at a time, all answered.
        let load = try ExternalTools.run("h2load", ["-n", "200", "-c", "4", "-m", "10", media + "?token=" + token],
                                         timeoutSeconds: 30)
        #expect(load.succeeded && load.stdout.contains("Application protocol: h2"), "\(load.stdout)\(load.stderr)")
        #expect(load.stdout.contains("200 succeeded, 0 failed") && load.stdout.contains("status codes: 200 2xx"), "\(load.stdout)")

        // Chromium plays the master with hls.js in low-latency mode, every playlist and part over h2.
        let probe = try ExternalTools.runJSONTool("latency_probe.py", [master + "?token=" + token, "--hlsjs", HLSJS.path,
                                                                       "--seconds", "8", "--any-certificate"],
                                                  timeoutSeconds: 90)
        #expect(probe.ok, "\(probe.text)")
        let files = try #require(probe.report["streamFiles"] as? [String: [String: Int]], "\(probe.text)")
        #expect((files["h2"]?["playlist"] ?? 0) > 0 && (files["h2"]?["part"] ?? 0) > 0, "\(probe.text)")
        #expect(files.keys.allSatisfy { $0 == "h2" }, "\(probe.text)")
        print("hls.js over h2: \(files), glass-to-glass median \(probe.report["medianSeconds"] ?? "?") s")
    }
}
