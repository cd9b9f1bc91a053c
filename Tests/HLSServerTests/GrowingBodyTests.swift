import Foundation
import Glibc
import HLSBase
import HLSTestSupport
import Testing
@testable import HLSServer

/// A growing body over each transport, with curl: the first bytes reach the client before the body is
/// whole, the whole body follows, and the connection serves the next request; an abandoned body leaves
/// the client with an incomplete response; HEAD does not wait for the body.
@Suite(.serialized) struct GrowingBodyTests {
    enum Transport: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case cleartext, https1, h2
        var testDescription: String { rawValue }
        var curlVersion: String { self == .h2 ? "--http2" : "--http1.1" }
    }

    let directory: URL
    let certificate: PEMPair
    let first: [UInt8]
    let rest: [UInt8]
    let plain = Array("plain answer\n".utf8)

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("growing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        certificate = try HTTPSServerTests.certificate(in: directory, name: "growing")
        var generator = SeededGenerator(state: 35)
        first = (0..<1000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        // More than one h2 stream window (65,535 bytes): the rest goes out as the client opens it.
        rest = (0..<300_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// A server whose `/part` is answered later with `body` (as a part asked for before it begins), and
    /// `/plain` at once.
    func start(_ transport: Transport, body: GrowingBody) throws -> any HTTPServing {
        let plain = plain
        let handler: HTTPServer.Handler = { request in
            guard request.path == "/part" else { return .now(HTTPResponse(status: 200, body: .bytes(plain))) }
            return .later { respond in
                respond(HTTPResponse(status: 200, headers: [("Content-Type", "video/iso.segment"), ("Content-Length", "1")],
                                     body: .growing(body)))
            }
        }
        var configuration = HTTPServer.Configuration(address: try ListenAddress("127.0.0.1:0"))
        guard transport != .cleartext else { return try HTTPServer(configuration: configuration, handler: handler) }
        configuration.tls = (certificate.key, certificate.certificate)
        return try HTTPSServer(configuration: configuration, handler: handler)
    }

    func origin(_ transport: Transport, _ server: any HTTPServing) -> String {
        (transport == .cleartext ? "http" : "https") + "://127.0.0.1:\(server.port)"
    }

    /// curl in the background, writing each body to its file as it arrives and, per transfer, its
    /// status, connections opened, Transfer-Encoding and Content-Length.
    func curl(_ transport: Transport, _ arguments: [String]) throws -> BackgroundProcess {
        try BackgroundProcess("curl", ["-sS", "-N", "--cacert", certificate.certificatePath, transport.curlVersion,
                                       "-w", "%{http_code}|%{num_connects}|%header{transfer-encoding}|%header{content-length}\n"]
                                  + arguments)
    }

    func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// The bytes in `path` once it holds `count` of them (or after 5 s).
    func bytes(in path: String, reaching count: Int) -> Data {
        let deadline = Date().addingTimeInterval(5)
        var bytes = Data()
        repeat {
            bytes = FileManager.default.contents(atPath: path) ?? Data()
            if bytes.count >= count { break }
            usleep(10_000)
        } while Date() < deadline
        return bytes
    }

    func contents(_ name: String) -> Data? { FileManager.default.contents(atPath: file(name)) }

    /// This process's threads now.
    static func threads() -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [])
    }

    /// The CPU time `threads` have used so far.
    static func cpuSeconds(of threads: Set<String>) -> Double {
        threads.reduce(0) { total, thread in
            guard let stat = try? String(contentsOfFile: "/proc/self/task/\(thread)/stat", encoding: .utf8),
                  let nameEnd = stat.lastIndex(of: ")") else { return total }
            // utime and stime, fields 14 and 15 of stat: 12th and 13th after the name.
            let fields = stat[stat.index(after: nameEnd)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return total }
            return total + (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }
    }

    @Test(arguments: Transport.allCases) func theFirstBytesArriveBeforeTheBodyIsWholeAndTheConnectionGoesOn(
        _ transport: Transport
    ) throws {
        let body = GrowingBody()
        let before = Self.threads()
        let server = try start(transport, body: body)
        defer { server.stop() }
        let serverThreads = Self.threads().subtracting(before)
        let origin = origin(transport, server)
        let client = try curl(transport, ["-o", file("part"), origin + "/part", "-o", file("plain"), origin + "/plain"])

        body.append(first)
        #expect(bytes(in: file("part"), reaching: first.count) == Data(first), "the first piece arrives alone")
        let cpuBefore = Self.cpuSeconds(of: serverThreads)
        usleep(300_000)
        let waitingCPU = Self.cpuSeconds(of: serverThreads) - cpuBefore
        #expect(waitingCPU < 0.1, "a body waiting on its producer takes no polling: \(waitingCPU) s of CPU in 0.3 s")
        #expect(client.isRunning, "the body is not over")
        for start in stride(from: 0, to: rest.count, by: 50_000) {
            body.append(Array(rest[start..<min(start + 50_000, rest.count)]))
        }
        body.finish()

        let result = client.finish(timeoutSeconds: 10)
        #expect(result.succeeded, "\(result.stderr)")
        let chunked = transport == .h2 ? "" : "chunked"
        #expect(result.stdout == "200|1|\(chunked)|\n200|0||\(plain.count)\n",
                "no length for the growing body, chunked over HTTP/1.1, the next request on the same connection")
        #expect(contents("part") == Data(first + rest))
        #expect(contents("plain") == Data(plain))
        #expect(server.answeredCount == 2)
    }

    @Test(arguments: Transport.allCases) func anAbandonedBodyLeavesTheClientWithAnIncompleteResponse(_ transport: Transport) throws {
        let body = GrowingBody()
        let server = try start(transport, body: body)
        defer { server.stop() }
        let client = try curl(transport, ["-o", file("part"), origin(transport, server) + "/part"])

        body.append(first)
        #expect(bytes(in: file("part"), reaching: first.count) == Data(first))
        body.abandon()
        body.append(rest)

        let result = client.finish(timeoutSeconds: 10)
        #expect(!result.timedOut)
        // 18: the connection closed before the last chunk; 92: the stream was reset (INTERNAL_ERROR).
        #expect(result.exitStatus == (transport == .h2 ? 92 : 18), "\(result.stderr)")
        #expect(contents("part") == Data(first))
        #expect(!body.isFinished && body.count == first.count, "bytes after abandon are ignored")
    }

    @Test(arguments: Transport.allCases) func stoppingTheServerCutsABodyWaitingOnItsProducer(_ transport: Transport) throws {
        let body = GrowingBody()
        let server = try start(transport, body: body)
        let client = try curl(transport, ["-o", file("part"), origin(transport, server) + "/part"])
        body.append(first)
        #expect(bytes(in: file("part"), reaching: first.count) == Data(first))
        let started = Date()
        server.stop()
        #expect(Date().timeIntervalSince(started) < 0.9, "no wait for a producer that will not finish")
        let result = client.finish(timeoutSeconds: 5)
        #expect(!result.timedOut && result.exitStatus != 0, "\(result.stderr)")
        #expect(contents("part") == Data(first))
    }

    @Test(arguments: Transport.allCases) func headGetsTheHeadWithoutWaitingForTheBody(_ transport: Transport) throws {
        let body = GrowingBody()
        body.append(first)
        let server = try start(transport, body: body)
        defer { server.stop() }
        let result = try ExternalTools.run("curl", ["-sS", "-I", "--cacert", certificate.certificatePath, transport.curlVersion,
                                                    "-w", "%{http_code}|%header{content-length}", "-o", "/dev/null",
                                                    origin(transport, server) + "/part"], timeoutSeconds: 5)
        #expect(result.succeeded, "\(result.stderr)")
        #expect(result.stdout == "200|")
    }

    @Test func anHTTP10ClientGetsTheBodyThenTheConnectionCloses() throws {
        for transport in [Transport.cleartext, .https1] {
            let body = GrowingBody()
            body.append(first)
            body.finish()
            let server = try start(transport, body: body)
            defer { server.stop() }
            let result = try ExternalTools.run("curl", ["-sS", "--http1.0", "--cacert", certificate.certificatePath,
                                                        "-w", "%{http_code}|%header{transfer-encoding}",
                                                        "-o", file("part10"), origin(transport, server) + "/part"],
                                               timeoutSeconds: 5)
            // With no length and no chunks, curl ends only when the server closes.
            #expect(result.succeeded && !result.timedOut, "\(transport): \(result.stderr)")
            #expect(result.stdout == "200|", "\(transport)")
            #expect(contents("part10") == Data(first), "\(transport)")
        }
    }

    /// Over h2 a stream whose body waits on its producer holds up no other stream of the connection.
    @Test func anotherStreamIsAnsweredWhileAGrowingBodyWaits() throws {
        let body = GrowingBody()
        let server = try start(.h2, body: body)
        defer { server.stop() }
        let origin = origin(.h2, server)
        let client = try curl(.h2, ["--parallel", "-o", file("part"), origin + "/part",
                                    "-o", file("plain"), origin + "/plain"])
        body.append(first)
        #expect(bytes(in: file("part"), reaching: first.count) == Data(first))
        #expect(bytes(in: file("plain"), reaching: plain.count) == Data(plain), "answered while the part waits")
        #expect(client.isRunning && server.connectionCount == 1)
        body.append(rest)
        body.finish()
        let result = client.finish(timeoutSeconds: 10)
        #expect(result.succeeded, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false)[1] }.sorted()
                == ["0", "1"], "one connection: \(result.stdout)")
        #expect(contents("part") == Data(first + rest))
    }

    @Test func readersAtTheirOwnOffsetsAreWokenOnEveryChange() {
        let body = GrowingBody()
        let wakes = Locked(0)
        let watch = body.watch { wakes.withLock { $0 += 1 } }
        var buffer = [UInt8](repeating: 0, count: 4)
        func read(from offset: Int) -> GrowingBody.Read {
            buffer.withUnsafeMutableBytes { body.read(from: offset, into: $0) }
        }
        #expect(read(from: 0) == .waiting)
        body.append([1, 2, 3, 4, 5, 6])
        #expect(read(from: 0) == .bytes(4) && buffer == [1, 2, 3, 4])
        #expect(read(from: 4) == .bytes(2) && buffer.prefix(2) == [5, 6])
        #expect(read(from: 6) == .waiting)
        body.finish()
        body.append([7])
        #expect(read(from: 6) == .finished && body.isWhole(at: 6) && !body.isWhole(at: 5))
        #expect(body.count == 6 && body.isFinished)
        body.unwatch(watch)
        body.abandon()
        #expect(wakes.withLock { $0 } == 2, "append and finish, not what came after the end")

        let cut = GrowingBody()
        cut.append([1, 2])
        cut.abandon()
        #expect(buffer.withUnsafeMutableBytes { cut.read(from: 0, into: $0) } == .abandoned, "an abandoned body gives no more bytes")
        #expect(!cut.isFinished)
        #expect(HTTPResponse.Body.growing(cut) == .growing(cut) && HTTPResponse.Body.growing(cut) != .growing(body))
    }
}
