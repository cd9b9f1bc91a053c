import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `hlscap serve DIR`: any stream directory hlscap wrote, finished or not, one rendition or a ladder,
/// plays in Chromium from the preview page; the headers a CDN and a player rely on; clear errors.
@Suite(.serialized) struct ServeCommandTests {
    static func packaged(_ arguments: [String], in directory: URL) throws -> URL {
        let stream = directory.appendingPathComponent("vod")
        let input = ExternalTools.fixturesDirectory.appendingPathComponent("h264-aac.mp4").path
        let result = try ExternalTools.runHlscap(["file", input, "--out", stream.path] + arguments)
        try #require(result.succeeded, "\(result.stderr)")
        return stream
    }

    @Test(arguments: [[String](), ["--ladder", "360p,240p"]])
    func thePreviewPagePlaysAPackagedStream(arguments: [String]) throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = try Self.packaged(arguments, in: directory)
        let served = try ServedStream.start(["serve", stream.path, "--listen", "127.0.0.1:0"])
        defer { served.process.send(SIGTERM) }
        // What the server hands out is the stream on disk: valid through HTTP too.
        try ExternalTools.validateStream(served.base.appendingPathComponent("master.m3u8"))
        let probe = try ExternalTools.runJSONTool("latency_probe.py", [served.base.absoluteString, "--preview", "--vod",
                                                                "--seconds", "3"], timeoutSeconds: 90)
        #expect(probe.ok, "\(probe.text)")
        served.process.send(SIGTERM)
        let result = served.process.finish(timeoutSeconds: 10)
        #expect(result.exitStatus == 0, "\(result.stderr)")
    }

    @Test func filesCarryTheHeadersCachesAndPlayersNeed() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = try Self.packaged([], in: directory)
        let served = try ServedStream.start(["serve", stream.path, "--listen", "127.0.0.1:0"])
        defer { served.process.send(SIGTERM) }

        let playlist = try served.get("playlist.m3u8", headers: ["Accept-Encoding": "gzip"])
        #expect(playlist.status == 200)
        #expect(playlist.headers["content-type"] == "application/vnd.apple.mpegurl")
        #expect(playlist.headers["cache-control"] == "no-cache")
        #expect(playlist.headers["content-encoding"] == "gzip")
        #expect(playlist.headers["access-control-allow-origin"] == "*")
        #expect(Array(playlist.body.prefix(2)) == [0x1f, 0x8b])
        let plain = try served.get("playlist.m3u8")
        #expect(plain.headers["content-encoding"] == nil && String(decoding: plain.body, as: UTF8.self).hasPrefix("#EXTM3U"))

        let segment = try served.get("seg/000001.m4s")
        #expect(segment.status == 200 && segment.headers["content-type"] == "video/iso.segment")
        #expect(segment.headers["cache-control"] == "public, max-age=31536000, immutable")
        let onDisk = try Data(contentsOf: stream.appendingPathComponent("seg/000001.m4s"))
        #expect(segment.body == onDisk)
        let tag = try #require(segment.headers["etag"])
        #expect(try served.get("seg/000001.m4s", headers: ["If-None-Match": tag]).status == 304)
        let modified = try #require(segment.headers["last-modified"])
        #expect(try served.get("seg/000001.m4s", headers: ["If-Modified-Since": modified]).status == 304)

        let range = try served.get("seg/000001.m4s", headers: ["Range": "bytes=100-199"])
        #expect(range.status == 206 && range.body == onDisk[100..<200])
        #expect(range.headers["content-range"] == "bytes 100-199/\(onDisk.count)")
        #expect(try served.get("seg/000001.m4s", headers: ["Range": "bytes=\(onDisk.count)-"]).status == 416)
        let head = try served.get("seg/000001.m4s", method: "HEAD")
        #expect(head.status == 200 && head.headers["content-length"] == String(onDisk.count))

        let initSection = try served.get("init.mp4")
        #expect(initSection.status == 200 && initSection.headers["content-type"] == "video/mp4")
        let page = try served.get("")
        #expect(page.status == 200 && String(decoding: page.body, as: UTF8.self).contains("<video"))
        #expect(try served.get("seg/000999.m4s").status == 404)
        #expect(try served.get("notes.txt").status == 404)
    }

    @Test func refusesWhatItCannotServe() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let empty = try ExternalTools.runHlscap(["serve", directory.path, "--listen", "127.0.0.1:0"])
        #expect(empty.exitStatus == 66 && empty.stderr.contains(directory.path), "\(empty.stderr)")
        let noListen = try ExternalTools.runHlscap(["serve", directory.path])
        #expect(noListen.exitStatus == 64, "\(noListen.stderr)")
        let badAddress = try ExternalTools.runHlscap(["serve", directory.path, "--listen", "localhost"])
        #expect(badAddress.exitStatus == 64 && badAddress.stderr.contains("localhost"), "\(badAddress.stderr)")
        let lowLatencyAlone = try ExternalTools.runHlscap(["live"] + LiveStream.testSource + [
            "--low-latency", "--out", directory.appendingPathComponent("s").path])
        #expect(lowLatencyAlone.exitStatus == 64 && lowLatencyAlone.stderr.contains("--serve"), "\(lowLatencyAlone.stderr)")
    }

    /// A protected stream (`--auth-token`, `--auth-key`): ffmpeg plays it with a signed URL, a token
    /// in the query and a bearer header, and fails without; `hlscap validate` reads it by its signed
    /// URL; the preview page opened with the token plays it in Chromium.
    @Test func aProtectedStreamPlaysWithItsCredentialsAndNotWithout() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = try Self.packaged(["--ladder", "360p,240p"], in: directory)
        let key = directory.appendingPathComponent("stream.key")
        try "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0\n".write(to: key, atomically: true, encoding: .utf8)
        let token = "viewer-\(UUID().uuidString)"
        let served = try ServedStream.start(["serve", stream.path, "--listen", "127.0.0.1:0", "--auth-token", token,
                                             "--auth-key", key.path])
        defer { served.process.send(SIGTERM) }
        let master = served.base.appendingPathComponent("master.m3u8").absoluteString
        let signing = try ExternalTools.runHlscap(["sign", master, "--expires", "10m", "--key", key.path])
        #expect(signing.succeeded, "\(signing.stderr)")
        let signed = signing.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(signed.hasPrefix(master + "?prefix=%2F&expires="), "\(signed)")

        #expect(try ExternalTools.ffmpegDecodeErrors(path: signed).isEmpty)
        #expect(try ExternalTools.ffmpegDecodeErrors(path: master + "?token=" + token).isEmpty)
        let byHeader = try ExternalTools.run("ffmpeg", ["-nostdin", "-v", "error", "-headers", "Authorization: Bearer \(token)\r\n",
                                                        "-i", master, "-f", "null", "-"])
        #expect(byHeader.succeeded && byHeader.stderr.isEmpty, "\(byHeader.stderr)")
        let without = try ExternalTools.run("ffmpeg", ["-nostdin", "-v", "error", "-i", master, "-f", "null", "-"])
        #expect(!without.succeeded && without.stderr.contains("401"), "\(without.stderr)")
        let wrong = try ExternalTools.run("ffmpeg", ["-nostdin", "-v", "error", "-i", master + "?token=guess", "-f", "null", "-"])
        #expect(!wrong.succeeded && wrong.stderr.contains("403"), "\(wrong.stderr)")

        let validated = try ExternalTools.validateStream(signed)
        #expect(validated.stdout.contains("valid (0 errors"), "\(validated.stdout)")
        let probe = try ExternalTools.runJSONTool("latency_probe.py", [served.base.absoluteString + "?token=" + token,
                                                                       "--preview", "--vod", "--seconds", "3"],
                                                  timeoutSeconds: 90)
        #expect(probe.ok, "\(probe.text)")
        // hls.js, from a page on another origin, given only the signed URL.
        let hlsjs = try ExternalTools.runJSONTool("latency_probe.py", [signed, "--hlsjs", HLSJS.path, "--vod",
                                                                       "--seconds", "3"], timeoutSeconds: 90)
        #expect(hlsjs.ok, "\(hlsjs.text)")
        let refused = try ExternalTools.runJSONTool("latency_probe.py", [served.base.absoluteString + "?token=guess",
                                                                         "--preview", "--vod", "--seconds", "3"],
                                                    timeoutSeconds: 90)
        #expect(!refused.ok, "the page opened with a wrong token cannot play: \(refused.text)")
    }

    @Test func signRefusesWhatItCannotSign() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let short = directory.appendingPathComponent("short.key")
        try "abc\n".write(to: short, atomically: true, encoding: .utf8)
        let url = "http://127.0.0.1:8080/live/master.m3u8"
        #expect(try ExternalTools.runHlscap(["sign", url, "--expires", "soon", "--key", short.path]).exitStatus == 64)
        #expect(try ExternalTools.runHlscap(["sign", "not a url", "--expires", "1h", "--key", short.path]).exitStatus == 64)
        let missing = try ExternalTools.runHlscap(["sign", url, "--expires", "1h", "--key", directory.path + "/none.key"])
        #expect(missing.exitStatus == 66 && missing.stderr.contains("none.key"), "\(missing.stderr)")
        let weak = try ExternalTools.runHlscap(["sign", url, "--expires", "1h", "--key", short.path])
        #expect(weak.exitStatus == 65 && !weak.stderr.contains("abc"), "\(weak.stderr)")
    }

    /// `hlscap serve` of a packaged stream over HTTPS, with a self-signed certificate made in `directory`.
    static func servedOverHTTPS(in directory: URL) throws -> ServedStream {
        let stream = try packaged([], in: directory)
        let (certificate, key) = try ExternalTools.selfSignedCertificate(in: directory)
        return try ServedStream.start(["serve", stream.path, "--listen", "127.0.0.1:0", "--tls-cert", certificate,
                                       "--tls-key", key])
    }

    /// HTTPS speaks TLS 1.2 and 1.3 only, and a plain-HTTP request to the TLS port ends at once
    /// rather than hanging.
    @Test func httpsSpeaksOnlyModernTLSAndPlainHTTPEndsAtOnce() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let served = try Self.servedOverHTTPS(in: directory)
        defer { served.process.send(SIGTERM) }
        let address = "127.0.0.1:\(served.port)"
        func handshake(_ version: String) throws -> String {
            // SECLEVEL=0 lets this client offer old protocols: the server must be the one that refuses them.
            let result = try ExternalTools.run("bash", ["-c", "echo | openssl s_client -connect \(address) -\(version) "
                                                        + "-cipher 'DEFAULT@SECLEVEL=0' 2>&1"], timeoutSeconds: 20)
            return result.stdout
        }
        for old in ["tls1", "tls1_1"] {
            let output = try handshake(old)
            #expect(output.contains("Cipher is (NONE)"), "\(old) refused: \(output)")
        }
        #expect(try handshake("tls1_2").contains("Cipher is ECDHE"))
        #expect(try handshake("tls1_3").contains("TLSv1.3"))
        let started = Date()
        let plain = try ExternalTools.run("curl", ["-s", "-m", "10", "-o", "/dev/null", "-w", "%{http_code}",
                                                   "http://\(address)/playlist.m3u8"], timeoutSeconds: 20)
        #expect(plain.stdout == "000" && Date().timeIntervalSince(started) < 2, "\(plain.stdout) after \(Date().timeIntervalSince(started)) s")
        #expect(try ServedStream.fetch(URL(string: "https://\(address)/playlist.m3u8")!).status == 200)
    }

    /// The same hostile requests over HTTP/1.1 on TLS, which another parser reads: refusals too, and
    /// the server still answers with its memory flat.
    @Test func hostileRequestsOverTLSGetRefusals() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let served = try Self.servedOverHTTPS(in: directory)
        defer { served.process.send(SIGTERM) }
        let hostile = try ExternalTools.runJSONTool("hostile_requests.py", [
            "127.0.0.1:\(served.port)", "--tls", "--count", "200", "--seed", "11",
            "--pid", String(served.process.processIdentifier)], timeoutSeconds: 120)
        #expect(hostile.ok, "\(hostile.text)")
        #expect(hostile.report["requests"] as? Int == 400)
        #expect(served.process.isRunning)
    }

    /// SIGHUP reads --tls-cert and --tls-key again: the next connection gets the renewed certificate,
    /// and a pair that cannot be used is refused with one line while the one in use stays.
    @Test func sighupReloadsTheCertificateForNewConnections() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = try Self.packaged([], in: directory)
        let first = try ExternalTools.selfSignedCertificate(in: directory, name: "first")
        let renewed = try ExternalTools.selfSignedCertificate(in: directory, name: "renewed")
        let key = directory.appendingPathComponent("key.pem").path, certificate = directory.appendingPathComponent("cert.pem").path
        try FileManager.default.copyItem(atPath: first.key, toPath: key)
        try FileManager.default.copyItem(atPath: first.certificate, toPath: certificate)
        let served = try ServedStream.start(["serve", stream.path, "--listen", "127.0.0.1:0", "--tls-cert", certificate,
                                             "--tls-key", key])
        defer { served.process.send(SIGTERM) }
        let url = "https://127.0.0.1:\(served.port)/playlist.m3u8"
        func status(trusting authority: String) throws -> String {
            try ExternalTools.run("curl", ["-s", "--cacert", authority, "-o", "/dev/null", "-w", "%{http_version} %{http_code}", url],
                                  timeoutSeconds: 20).stdout
        }
        #expect(try status(trusting: first.certificate) == "2 200")
        // As certbot renews: new files replace the old ones, then the reload.
        try FileManager.default.removeItem(atPath: key)
        try FileManager.default.removeItem(atPath: certificate)
        try FileManager.default.copyItem(atPath: renewed.key, toPath: key)
        try FileManager.default.copyItem(atPath: renewed.certificate, toPath: certificate)
        served.process.send(SIGHUP)
        let deadline = Date().addingTimeInterval(5)
        while !served.process.stderr.contains("reloaded the certificate") && Date() < deadline { usleep(50_000) }
        #expect(try status(trusting: renewed.certificate) == "2 200")
        #expect(try status(trusting: first.certificate) == "0 000", "the old certificate is no longer offered")

        try "not a key".write(toFile: key, atomically: true, encoding: .utf8)
        served.process.send(SIGHUP)
        while !served.process.stderr.contains("the certificate in use stays") && Date() < deadline + 5 { usleep(50_000) }
        #expect(served.process.stderr.contains("the certificate in use stays"), "\(served.process.stderr)")
        #expect(try status(trusting: renewed.certificate) == "2 200")
        #expect(served.process.isRunning)
    }

    /// --tls-ocsp: a response that cannot be stapled is refused with one line before anything starts; SIGHUP
    /// reads it again with the pair, and one that has only expired leaves the pair without a staple (nginx
    /// staples only a valid response) until a current one is read.
    @Test func anOCSPResponseIsCheckedAtStartAndReadAgainOnSIGHUP() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // serve asks only that the folder holds a playlist; the handshakes are what is looked at.
        try "#EXTM3U\n".write(to: directory.appendingPathComponent("playlist.m3u8"), atomically: true, encoding: .utf8)
        let authority = try TestAuthority(in: directory)
        let served = try authority.issue(name: "served"), other = try authority.issue(name: "other")
        let response = directory.appendingPathComponent("served.ocsp").path
        func replaceResponse(with made: String) throws {
            try? FileManager.default.removeItem(atPath: response)
            try FileManager.default.copyItem(atPath: made, toPath: response)
        }
        let arguments = ["serve", directory.path, "--listen", "127.0.0.1:0", "--tls-cert", served.certificate,
                         "--tls-key", served.key, "--tls-ocsp", response]
        let missing = try ExternalTools.runHlscap(arguments)
        #expect(missing.exitStatus == 66)
        #expect(missing.stderr == "hlscap: --tls-ocsp \(response) cannot be read; give the DER OCSP response your "
            + "renewal job fetches (openssl ocsp … -respout \(response))\n")
        try replaceResponse(with: authority.ocspResponse(for: other.certificate, name: "other"))
        let wrong = try ExternalTools.runHlscap(arguments)
        #expect(wrong.exitStatus == 65)
        #expect(wrong.stderr == "hlscap: --tls-ocsp \(response) is for another certificate than the one served; fetch a "
            + "current one for the certificate served (openssl ocsp -issuer … -cert … -url … -respout …)\n")

        try replaceResponse(with: authority.ocspResponse(for: served.certificate, name: "served"))
        let server = try ServedStream.start(arguments)
        defer { server.process.send(SIGTERM) }
        func status() throws -> String {
            try ExternalTools.run("bash", ["-c", "echo | openssl s_client -connect 127.0.0.1:\(server.port) -status 2>&1"],
                                  timeoutSeconds: 20).stdout
        }
        func reload(until line: String) {
            let seen = server.process.stderr.components(separatedBy: line).count
            server.process.send(SIGHUP)
            let deadline = Date().addingTimeInterval(5)
            while server.process.stderr.components(separatedBy: line).count == seen && Date() < deadline { usleep(50_000) }
            #expect(server.process.stderr.components(separatedBy: line).count > seen, "no \"\(line)\": \(server.process.stderr)")
        }
        #expect(try status().contains("Cert Status: good"))
        try replaceResponse(with: authority.ocspResponse(for: served.certificate, name: "expired", madeDaysAgo: 2))
        reload(until: "for new connections, without a staple: --tls-ocsp \(response) expired at ")
        #expect(try status().contains("OCSP response: no response sent"), "\(server.process.stderr)")
        try replaceResponse(with: authority.ocspResponse(for: other.certificate, name: "other"))
        reload(until: "--tls-ocsp \(response) is for another certificate than the one served; fetch a current one for the "
            + "certificate served (openssl ocsp -issuer … -cert … -url … -respout …); the certificate in use stays")
        try replaceResponse(with: authority.ocspResponse(for: served.certificate, name: "renewed"))
        reload(until: "reloaded the certificate \(served.certificate) and the OCSP response \(response) for new connections\n")
        #expect(try status().contains("Cert Status: good"), "\(server.process.stderr)")
        #expect(server.process.stderr.components(separatedBy: "\n").filter { $0.contains("reload") || $0.contains("--tls-ocsp") }
            .count == 3, "one line per reload: \(server.process.stderr)")
    }

    /// 2,000 malformed and hostile requests (Tests/Tools/hostile_requests.py: bad methods, huge headers,
    /// bad percent-encoding, `..`, NUL bytes, absurd ranges, a 100 kB query, garbage): each gets a 4xx
    /// (or the answer HTTP prescribes), the server still answers, and its memory stays flat.
    @Test func hostileRequestsGetRefusalsAndLeaveTheServerAsItWas() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = try Self.packaged([], in: directory)
        let served = try ServedStream.start(["serve", stream.path, "--listen", "127.0.0.1:0"])
        defer { served.process.send(SIGTERM) }
        let hostile = try ExternalTools.runJSONTool("hostile_requests.py", [
            "127.0.0.1:\(served.port)", "--count", "1000", "--seed", "11", "--pid", String(served.process.processIdentifier)],
            timeoutSeconds: 300)
        #expect(hostile.ok, "\(hostile.text)")
        #expect(hostile.report["requests"] as? Int == 2000)
        #expect(served.process.isRunning)
    }
}
