import CSSL
import Foundation
import Glibc
import HLSBase
import HLSTestSupport
import Testing
@testable import HLSServer

/// The HTTPS server with real clients: curl over HTTP/2 and HTTP/1.1, nghttp, h2load and openssl.
@Suite(.serialized) struct HTTPSServerTests {
    /// A self-signed certificate for 127.0.0.1, made by openssl in a folder of its own.
    static func certificate(in directory: URL, name: String) throws -> PEMPair {
        try PEMPair(files: ExternalTools.selfSignedCertificate(in: directory, name: name))
    }

    /// What one curl transfer saw.
    struct Fetched {
        let version: String
        let status: Int
        let headers: [String: String]
        let body: Data
    }

    let directory: URL
    let certificate: PEMPair
    let file: URL
    let fileBytes: [UInt8]

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("https-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        certificate = try Self.certificate(in: directory, name: "first")
        var generator = SeededGenerator(state: 34)
        fileBytes = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        file = directory.appendingPathComponent("segment.m4s")
        try Data(fileBytes).write(to: file)
    }

    func start(_ handler: @escaping HTTPServer.Handler, headerTimeoutSeconds: Int = 30) throws -> HTTPSServer {
        var configuration = HTTPServer.Configuration(address: try ListenAddress("127.0.0.1:0"))
        configuration.tls = (certificate.key, certificate.certificate)
        configuration.headerTimeoutSeconds = headerTimeoutSeconds
        return try HTTPSServer(configuration: configuration, handler: handler)
    }

    /// A handler like the stream server's in small: a file with ranges and caching, a gzipped playlist, 404.
    func segmentHandler() -> HTTPServer.Handler {
        let path = file.path, length = fileBytes.count
        let playlist = Array(String(repeating: "#EXTINF:2.000,\nseg/000001.m4s\n", count: 50).utf8)
        return { request in
            switch request.path {
            case "/segment.m4s":
                let cache = ("Cache-Control", "max-age=31536000, immutable")
                if request.header("range") == "bytes=10-19" {
                    return .now(HTTPResponse(status: 206, headers: [cache, ("Content-Range", "bytes 10-19/\(length)")],
                                             body: .file(path: path, offset: 10, length: 10)))
                }
                return .now(HTTPResponse(status: 200, headers: [cache, ("Content-Type", "video/iso.segment")],
                                         body: .file(path: path, offset: 0, length: length)))
            case "/playlist.m3u8" where request.header("accept-encoding")?.contains("gzip") == true:
                return .now(HTTPResponse(status: 200, headers: [("Content-Type", "application/vnd.apple.mpegurl"),
                                                                ("Content-Encoding", "gzip"), ("Cache-Control", "no-cache")],
                                         body: .bytes(Gzip.compress(playlist) ?? [])))
            default:
                return .now(.text(404, "not found"))
            }
        }
    }

    func curl(_ url: String, _ options: [String], caFile: String? = nil) throws -> Fetched {
        let headersPath = directory.appendingPathComponent("headers-\(UUID().uuidString)").path
        let bodyPath = directory.appendingPathComponent("body-\(UUID().uuidString)").path
        let result = try ExternalTools.run("curl", ["-sS", "--cacert", caFile ?? certificate.certificatePath,
                                                    "-D", headersPath, "-o", bodyPath,
                                                    "-w", "%{http_version} %{http_code}"] + options + [url],
                                           timeoutSeconds: 20)
        guard result.succeeded else { throw ExternalToolError.failed(command: "curl \(url)", result: result) }
        let written = result.stdout.split(separator: " ")
        var headers: [String: String] = [:]
        for line in try String(contentsOfFile: headersPath, encoding: .utf8).split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Fetched(version: String(written.first ?? ""), status: Int(written.last ?? "") ?? 0, headers: headers,
                       body: (try? Data(contentsOf: URL(fileURLWithPath: bodyPath))) ?? Data())
    }

    @Test func http2AndHTTP11GiveTheSameStatusHeadersAndBytes() throws {
        let server = try start(segmentHandler())
        defer { server.stop() }
        let origin = "https://127.0.0.1:\(server.port)"
        let cases: [(path: String, options: [String])] = [
            ("/segment.m4s", []), ("/segment.m4s", ["-H", "Range: bytes=10-19"]), ("/missing", []),
            ("/playlist.m3u8", ["--compressed"]), ("/segment.m4s", ["-I"]),
        ]
        for (path, options) in cases {
            let overH2 = try curl(origin + path, ["--http2"] + options)
            let overH1 = try curl(origin + path, ["--http1.1"] + options)
            #expect(overH2.version == "2", "\(path)")
            #expect(overH1.version == "1.1", "\(path)")
            #expect(overH2.status == overH1.status, "\(path)")
            // With -I curl writes the headers as the body, and the status lines differ.
            if options != ["-I"] { #expect(overH2.body == overH1.body, "\(path) \(options)") }
            for name in ["cache-control", "content-range", "content-encoding", "content-type", "content-length"] {
                #expect(overH2.headers[name] == overH1.headers[name], "\(path) \(options): \(name)")
            }
        }
        let whole = try curl(origin + "/segment.m4s", ["--http2"])
        #expect(whole.status == 200 && whole.body == Data(fileBytes), "a 1 MB file arrives whole over h2")
        let range = try curl(origin + "/segment.m4s", ["--http2", "-H", "Range: bytes=10-19"])
        #expect(range.status == 206 && range.body == Data(fileBytes[10..<20]))
        #expect(try curl(origin + "/missing", ["--http2"]).status == 404)
        let head = try curl(origin + "/segment.m4s", ["--http2", "-I"])
        #expect(head.body.count < 1000 && head.headers["content-length"] == String(fileBytes.count), "HEAD sends no body")
        let playlist = try curl(origin + "/playlist.m3u8", ["--http2", "--compressed"])
        #expect(playlist.headers["content-encoding"] == "gzip" && String(decoding: playlist.body, as: UTF8.self).hasPrefix("#EXTINF:2.000,"))
        #expect(server.answeredCount == 2 * cases.count + 5)
    }

    /// An answer's head as it goes out, field by field: names as the handler spelled them over HTTP/1.1
    /// and in lower case over HTTP/2, the connection's own fields dropped (HTTP/2 forbids them), the
    /// handler's Content-Length kept, and the Date last.
    @Test func theAnswerHeadKeepsTheHandlersFieldsInOrder() throws {
        let server = try start { request in
            .now(HTTPResponse(status: request.path == "/gone" ? 410 : 200, headers: [
                ("X-Mixed-Case", "Value As Given"), ("Connection", "keep-alive"), ("Keep-Alive", "timeout=5"),
                ("Transfer-Encoding", "chunked"), ("CONTENT-LENGTH", "3"), ("Cache-Control", "no-cache"),
            ], body: .bytes(Array("abc".utf8))))
        }
        defer { server.stop() }
        func head(_ path: String, _ version: String) throws -> [String] {
            let result = try ExternalTools.run("curl", ["-sS", "--cacert", certificate.certificatePath, version, "-D", "-",
                                                        "-o", "/dev/null", "https://127.0.0.1:\(server.port)\(path)"],
                                               timeoutSeconds: 20)
            guard result.succeeded else { throw ExternalToolError.failed(command: "curl \(path)", result: result) }
            // curl ends an HTTP/2 status line with a space; the date is now's.
            return result.stdout.split(separator: "\r\n").map { line in
                line.lowercased().hasPrefix("date: ") ? String(line.prefix(6)) : line.trimmingCharacters(in: .whitespaces)
            }
        }
        #expect(try head("/", "--http1.1") == ["HTTP/1.1 200 OK", "X-Mixed-Case: Value As Given", "Keep-Alive: timeout=5",
                                                "CONTENT-LENGTH: 3", "Cache-Control: no-cache", "Date: "])
        #expect(try head("/gone", "--http2") == ["HTTP/2 410", "x-mixed-case: Value As Given", "content-length: 3",
                                                 "cache-control: no-cache", "date: "])
    }

    @Test func nghttpNegotiatesH2ByALPN() throws {
        let server = try start(segmentHandler())
        defer { server.stop() }
        let result = try ExternalTools.run("nghttp", ["-nv", "https://127.0.0.1:\(server.port)/segment.m4s"], timeoutSeconds: 20)
        #expect(result.succeeded, "\(result.stderr)")
        #expect(result.stdout.contains("The negotiated protocol: h2"), "\(result.stdout.prefix(2000))")
        #expect(result.stdout.contains(":status: 200"))
    }

    @Test func fiftyHeldRequestsOnOneConnectionAreAllAnsweredWhenReleased() throws {
        let held = Locked<[@Sendable (HTTPResponse) -> Void]>([])
        let server = try start { request in
            .later { respond in held.withLock { $0.append(respond) } }
        }
        defer { server.stop() }
        let load = try BackgroundProcess("h2load", ["-n50", "-c1", "-m50", "https://127.0.0.1:\(server.port)/playlist.m3u8?_HLS_msn=9"])
        let deadline = Date().addingTimeInterval(10)
        while server.waitingCount < 50 && Date() < deadline { usleep(20_000) }
        #expect(server.waitingCount == 50)
        #expect(server.connectionCount == 1)
        for respond in held.withLock({ $0 }) { respond(.text(200, "#EXTM3U")) }
        let result = load.finish(timeoutSeconds: 10)
        #expect(result.stdout.contains("50 succeeded"), "\(result.stdout)")
        #expect(result.stdout.contains("status codes: 50 2xx"), "\(result.stdout)")
        #expect(server.waitingCount == 0)
        #expect(server.answeredCount == 50)
    }

    /// A file that ends before the length the answer promised: over h2 its stream is reset after the
    /// bytes there are and the next stream on the connection is answered whole; over HTTP/1.1 the
    /// connection closes short. Neither client takes the answer for a whole one.
    @Test func aFileShorterThanPromisedResetsItsStreamAndTheConnectionGoesOn() throws {
        let path = file.path, length = fileBytes.count
        let server = try start { request in
            let promised = request.path == "/short.m4s" ? length + 100_000 : length
            return .now(HTTPResponse(status: 200, headers: [("Content-Type", "video/iso.segment")],
                                     body: .file(path: path, offset: 0, length: promised)))
        }
        defer { server.stop() }
        let origin = "https://127.0.0.1:\(server.port)"
        for version in ["--http2", "--http1.1"] {
            let result = try ExternalTools.run("curl", ["-sS", "--cacert", certificate.certificatePath, version,
                                                        "-o", "/dev/null", "-w", "%{http_code} %{size_download} %{num_connects}\\n",
                                                        origin + "/short.m4s", "-o", "/dev/null", origin + "/whole.m4s"],
                                               timeoutSeconds: 20)
            let lines = result.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            try #require(lines.count == 2, "\(version): \(result.stdout) \(result.stderr)")
            // curl's status is the last transfer's: the first one's failure is in its message.
            let failure = version == "--http2" ? "(92) HTTP/2 stream 1 was not closed cleanly: INTERNAL_ERROR"
                : "(18) transfer closed with 100000 bytes remaining"
            #expect(result.stderr.contains(failure), "\(version): \(result.stderr)")
            #expect(lines[0][0] == "200" && (Int(lines[0][1]) ?? 0) <= length, "\(version): \(lines[0])")
            #expect(lines[1] == ["200", String(length), version == "--http2" ? "0" : "1"],
                    "\(version): the next answer is whole, over h2 on the same connection: \(lines[1])")
        }
    }

    /// A client that stops reading a 1 MB answer leaves under 64 KB unsent in the server's socket
    /// (TCP_NOTSENT_LOWAT): the rest waits in the answer, not in kernel memory, and nothing new on the
    /// connection would queue behind it. Reading again brings the whole body.
    @Test func aReaderThatStopsLeavesLittleUnsentInTheKernelAndGetsTheWholeBodyLater() throws {
        let server = try start(segmentHandler())
        defer { server.stop() }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(client >= 0)
        defer { close(client) }
        // A small receive window, so that what the client does not read stays with the server.
        var receiveBytes: Int32 = 16 * 1024
        setsockopt(client, SOL_SOCKET, SO_RCVBUF, &receiveBytes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(server.port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0)
        let context = SSL_CTX_new(TLS_client_method())
        defer { SSL_CTX_free(context) }
        let ssl = SSL_new(context)
        defer { SSL_free(ssl) }
        SSL_set_fd(ssl, client)
        let alpn: [UInt8] = [8] + Array("http/1.1".utf8)
        SSL_set_alpn_protos(ssl, alpn, UInt32(alpn.count))
        try #require(SSL_connect(ssl) == 1)
        let request = Array("GET /segment.m4s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        try #require(SSL_write(ssl, request, Int32(request.count)) == Int32(request.count))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        func readOnce() -> Bool {
            let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            guard count > 0 else { return false }
            received += buffer[..<Int(count)]
            return true
        }
        try #require(readOnce())
        // The client stops reading; the server writes until its socket takes no more.
        Thread.sleep(forTimeInterval: 0.5)
        let unsent = try #require(Self.unsentBytes(onServerSocketOf: client, port: server.port))
        #expect(unsent < 64 * 1024, "\(unsent) bytes wait unsent in the server's socket")
        let headEnd = try #require(received.firstRange(of: Array("\r\n\r\n".utf8)))
        while received.count - headEnd.upperBound < fileBytes.count, readOnce() {}
        #expect(Array(received[headEnd.upperBound...]) == fileBytes, "the whole body arrives once the client reads again")
    }

    /// SIOCOUTQNSD on the server's end of the connection `client` opened to `port` (the server runs in
    /// this process): bytes in its socket not yet sent.
    static func unsentBytes(onServerSocketOf client: Int32, port: Int) -> Int? {
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(client, $0, &length) }
        }
        let clientPort = UInt16(bigEndian: local.sin_port)
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in descriptors.compactMap({ Int32($0) }) {
            var own = sockaddr_in(), peer = sockaddr_in()
            var ownLength = socklen_t(MemoryLayout<sockaddr_in>.size), peerLength = ownLength
            let named = withUnsafeMutablePointer(to: &own) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &ownLength) }
            }
            let paired = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &peerLength) }
            }
            guard named == 0, paired == 0, own.sin_family == sa_family_t(AF_INET),
                  UInt16(bigEndian: own.sin_port) == UInt16(port), UInt16(bigEndian: peer.sin_port) == clientPort
            else { continue }
            var unsent: Int32 = 0
            // SIOCOUTQNSD (linux/sockios.h): not in Glibc's module.
            guard ioctl(descriptor, 0x894B, &unsent) == 0 else { return nil }
            return Int(unsent)
        }
        return nil
    }

    @Test func aReloadedCertificateServesNewHandshakesWhileAnOpenConnectionGoesOn() throws {
        let held = Locked<[@Sendable (HTTPResponse) -> Void]>([])
        let handler = segmentHandler()
        let server = try start { request in
            guard request.path == "/hold" else { return handler(request) }
            return .later { respond in held.withLock { $0.append(respond) } }
        }
        defer { server.stop() }
        let origin = "https://127.0.0.1:\(server.port)"
        // One curl, one h2 connection: a held request, then a segment on the same connection.
        let open = try BackgroundProcess("curl", ["-sS", "--http2", "--cacert", certificate.certificatePath,
                                                  "-w", "%{http_version} %{http_code} %{num_connects}\n",
                                                  "-o", "/dev/null", origin + "/hold", "-o", "/dev/null", origin + "/segment.m4s"])
        let deadline = Date().addingTimeInterval(10)
        while server.waitingCount < 1 && Date() < deadline { usleep(20_000) }
        #expect(server.waitingCount == 1)

        let second = try Self.certificate(in: directory, name: "second")
        try server.reloadCertificate(key: second.key, certificate: second.certificate)
        #expect(try curl(origin + "/segment.m4s", ["--http2"], caFile: second.certificatePath).status == 200)
        let refused = try ExternalTools.run("curl", ["-sS", "--http2", "--cacert", certificate.certificatePath, "-o", "/dev/null",
                                                     origin + "/segment.m4s"], timeoutSeconds: 20)
        #expect(!refused.succeeded, "the old certificate is no longer offered")
        #expect(throws: HTTPServer.StartError.self) { try server.reloadCertificate(key: second.key, certificate: certificate.certificate) }

        for respond in held.withLock({ $0 }) { respond(.text(200, "released")) }
        let result = open.finish(timeoutSeconds: 10)
        #expect(result.succeeded, "\(result.stderr)")
        #expect(result.stdout == "2 200 1\n2 200 0\n", "both on the connection opened before the reload")
    }

    @Test func aRequestTargetDecodesAsOverCleartextHTTP() throws {
        let seen = Locked<[HTTPRequest]>([])
        let handler: HTTPServer.Handler = { request in
            seen.withLock { $0.append(request) }
            return .now(.text(200, "ok"))
        }
        let cleartext = try HTTPServer(configuration: .init(address: try ListenAddress("127.0.0.1:0")), handler: handler)
        defer { cleartext.stop() }
        let server = try start(handler)
        defer { server.stop() }
        let target = "/a%20b/c+d%2Fe%zz?token=x%2By+z&flag&_HLS_msn=12&_HLS_part=3&%41=%42"
        _ = try ExternalTools.run("curl", ["-sS", "--path-as-is", "-o", "/dev/null", "http://127.0.0.1:\(cleartext.port)\(target)"])
        _ = try curl("https://127.0.0.1:\(server.port)\(target)", ["--http2", "--path-as-is"])
        _ = try curl("https://127.0.0.1:\(server.port)\(target)", ["--http1.1", "--path-as-is"])
        let requests = seen.withLock { $0 }
        try #require(requests.count == 3)
        #expect(requests[0].path == "/a b/c+d/e%zz")
        #expect(requests[0].query == ["token": "x+y z", "flag": "", "_HLS_msn": "12", "_HLS_part": "3", "A": "B"])
        for request in requests.dropFirst() {
            #expect(request.path == requests[0].path)
            #expect(request.query == requests[0].query)
            #expect(request.client == "127.0.0.1")
            #expect(request.header("host") == "127.0.0.1:\(server.port)")
        }
    }

    @Test func aSilentConnectionIsClosedAtTheHeaderDeadlineAndAHugeHeaderGets431() throws {
        let server = try start(segmentHandler(), headerTimeoutSeconds: 1)
        defer { server.stop() }
        let silent = try TestSocket(port: server.port)
        let started = Date()
        var closedAfter: Double?
        while Date().timeIntervalSince(started) < 4 {
            if silent.peerClosed(waitingSeconds: 0.2) {
                closedAfter = Date().timeIntervalSince(started)
                break
            }
        }
        let seconds = try #require(closedAfter, "the silent connection was never closed")
        #expect(seconds >= 0.9 && seconds < 2.5, "closed after \(seconds) s")
        #expect(server.lateHeaderCount == 1)
        let huge = try curl("https://127.0.0.1:\(server.port)/segment.m4s",
                            ["--http1.1", "-H", "X-Huge: " + String(repeating: "a", count: 70_000)])
        #expect(huge.status == 431)
        #expect(server.connectionCount == 0)
    }
}
