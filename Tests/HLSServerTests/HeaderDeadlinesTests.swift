import Foundation
import Glibc
import Testing
@testable import HLSServer

@Suite struct HeaderDeadlinesTests {
    @Test func aHeaderOwedPastItsDeadlineDropsTheSocketOnce() {
        let deadlines = HeaderDeadlines(timeoutSeconds: 10)
        deadlines.opened(1, socket: 7, nowSeconds: 100)
        deadlines.opened(2, socket: 8, nowSeconds: 105)
        var dropped: [Int32] = []
        #expect(deadlines.expire(nowSeconds: 109.9) { dropped.append($0) } == 0)
        #expect(deadlines.expire(nowSeconds: 110) { dropped.append($0) } == 1)
        #expect(deadlines.expire(nowSeconds: 111) { dropped.append($0) } == 0)
        #expect(dropped == [7])
        #expect(deadlines.droppedCount == 1)
    }

    @Test func aRequestBeingAnsweredOwesNothingAndTheNextOneOwesFromTheAnswer() {
        let deadlines = HeaderDeadlines(timeoutSeconds: 10)
        var dropped: [Int32] = []
        deadlines.opened(1, socket: 7, nowSeconds: 0)
        deadlines.headersRead(1)
        // A long answer (a suspended blocking reload, a slow reader of a segment) is never cut.
        #expect(deadlines.expire(nowSeconds: 500) { dropped.append($0) } == 0)
        deadlines.answered(1, nowSeconds: 500)
        #expect(deadlines.expire(nowSeconds: 509) { dropped.append($0) } == 0)
        #expect(deadlines.expire(nowSeconds: 510) { dropped.append($0) } == 1)
        #expect(dropped == [7])
    }

    @Test func aClosedConnectionIsForgotten() {
        let deadlines = HeaderDeadlines(timeoutSeconds: 1)
        deadlines.opened(1, socket: 7, nowSeconds: 0)
        deadlines.closed(1)
        deadlines.answered(1, nowSeconds: 0)
        #expect(deadlines.expire(nowSeconds: 100) { _ in Issue.record("a closed socket must not be touched") } == 0)
    }

    /// A client that sends its header a byte at a time, faster than the idle timeout, is closed at
    /// the header deadline.
    @Test func theServerClosesATricklingHeaderAtItsDeadline() throws {
        var configuration = HTTPServer.Configuration(address: try ListenAddress("127.0.0.1:0"))
        configuration.idleTimeoutSeconds = 30
        configuration.headerTimeoutSeconds = 1
        let server = try HTTPServer(configuration: configuration) { _ in .now(.text(200, "ok")) }
        defer { server.stop() }
        let trickling = try TestSocket(port: server.port)
        let started = Date()
        var closedAfter: Double?
        for byte in "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8 {
            trickling.send([byte])
            if trickling.peerClosed(waitingSeconds: 0.2) {
                closedAfter = Date().timeIntervalSince(started)
                break
            }
        }
        let seconds = try #require(closedAfter, "the trickling header was never cut")
        #expect(seconds >= 0.9 && seconds < 2.5, "closed after \(seconds) s")
        #expect(server.lateHeaderCount == 1)
    }
}

/// A blocking TCP client socket on loopback, for the server tests.
final class TestSocket {
    let descriptor: Int32

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
    }

    deinit { close(descriptor) }

    func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// True when the server closed its end (end of stream or reset) within `waitingSeconds`.
    func peerClosed(waitingSeconds: Double) -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(waitingSeconds * 1000)) > 0 else { return false }
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, 0) <= 0
    }
}
