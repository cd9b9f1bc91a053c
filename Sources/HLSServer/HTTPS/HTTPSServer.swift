import CEpoll
import CSSL
import Foundation
import Glibc
import HLSBase
import Synchronization

/// An HTTPS server on OpenSSL that speaks HTTP/2 (ALPN `h2`, through nghttp2) and HTTP/1.1 (ALPN
/// `http/1.1` or none) to the same `HTTPServer.Handler` as the cleartext `HTTPServer`.
///
/// One thread (`TLSEventLoop`) runs every connection on epoll over non-blocking sockets; the handler is
/// called there, and answers given later arrive through an eventfd. TLS 1.2 at least; the certificate
/// file may hold a chain; an OCSP response given with it is stapled; `reloadCertificate` swaps the pair
/// (and response) for new handshakes while open connections keep theirs. Connections, idle time, the
/// time to a whole request header (the handshake included) and request header sizes are bounded as in
/// `HTTPServer`.
///
/// Unchecked sendable: the loop's state is its thread's alone; what others touch is atomic or locked.
public final class HTTPSServer: HTTPServing, @unchecked Sendable {
    public let configuration: HTTPServer.Configuration
    public let port: Int
    private let context: Locked<TLSContext>
    private let mailbox: ReplyMailbox
    private let counters = HTTPSCounters()
    private let loopDone = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)

    /// `configuration.tls` must hold the key and certificate.
    public init(configuration: HTTPServer.Configuration, handler: @escaping HTTPServer.Handler) throws(HTTPServer.StartError) {
        self.configuration = configuration
        if let made = configuration.tlsContext {
            context = Locked(made)
        } else {
            guard let tls = configuration.tls else { throw HTTPServer.StartError(description: "HTTPS needs a certificate and key") }
            do {
                context = Locked(try TLSContext(key: tls.key, certificate: tls.certificate,
                                                ocspResponse: configuration.ocspResponse))
            } catch {
                throw HTTPServer.StartError(description: "cannot serve HTTPS: \(error)")
            }
        }
        guard let mailbox = ReplyMailbox() else {
            throw HTTPServer.StartError(description: "cannot make an eventfd (\(String(cString: strerror(errno))))")
        }
        self.mailbox = mailbox
        let (listener, port) = try Self.listen(on: configuration.address)
        self.port = port
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        var listenerEvent = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: 0))
        var mailboxEvent = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: 1))
        guard epoll >= 0, epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &listenerEvent) == 0,
              epoll_ctl(epoll, EPOLL_CTL_ADD, mailbox.eventDescriptor, &mailboxEvent) == 0 else {
            let reason = String(cString: strerror(errno))
            close(listener)
            if epoll >= 0 { close(epoll) }
            throw HTTPServer.StartError(description: "cannot watch sockets with epoll (\(reason))")
        }
        let loop = TLSEventLoop(listener: listener, epoll: epoll, mailbox: mailbox, context: context,
                                configuration: configuration, handler: handler, counters: counters)
        let done = loopDone
        let thread = Thread {
            loop.run()
            done.signal()
        }
        thread.name = "hlscap-https"
        thread.start()
    }

    deinit { stop() }

    public var connectionCount: Int { counters.connections.load(ordering: .relaxed) }
    public var waitingCount: Int { counters.waiting.load(ordering: .relaxed) }
    public var answeredCount: Int { counters.answered.load(ordering: .relaxed) }
    public var lateHeaderCount: Int { counters.lateHeaders.load(ordering: .relaxed) }
    /// Connections refused or closed as hostile so far (each told once through `refusalLog`).
    public var refusedCount: Int { counters.refused.load(ordering: .relaxed) }

    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        mailbox.askToStop()
        loopDone.wait()
    }

    /// Takes a new key and certificate (PEM text, the certificate file possibly a chain) and the OCSP
    /// response to staple with them (nil: none): the next handshakes use them, connections already open
    /// keep the pair they began with. A pair or response that does not load leaves the current ones in place.
    public func reloadCertificate(key: String, certificate: String, ocspResponse: [UInt8]? = nil) throws(HTTPServer.StartError) {
        let replacement: TLSContext
        do {
            replacement = try TLSContext(key: key, certificate: certificate, ocspResponse: ocspResponse)
        } catch {
            throw HTTPServer.StartError(description: "cannot use the new certificate: \(error)")
        }
        use(replacement)
    }

    /// Takes a context made already: the next handshakes use it, connections already open keep theirs.
    public func use(_ replacement: TLSContext) {
        context.withLock { $0 = replacement }
    }

    /// A non-blocking listening socket on `address`, and its port.
    private static func listen(on address: ListenAddress) throws(HTTPServer.StartError) -> (Int32, Int) {
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let listener = socket(family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else {
            throw HTTPServer.StartError(description: "cannot open a socket (\(String(cString: strerror(errno))))")
        }
        var on: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        if address.isIPv6 {
            // Dual stack, as HTTPServer listens: an IPv6 wildcard takes IPv4 clients too.
            var off: Int32 = 0
            setsockopt(listener, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &off, socklen_t(MemoryLayout<Int32>.size))
        }
        let length = socklen_t(address.isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let bound = address.storage.withUnsafeBytes { bytes in
            bind(listener, bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
        }
        guard bound == 0, Glibc.listen(listener, SOMAXCONN) == 0 else {
            let reason = String(cString: strerror(errno))
            close(listener)
            throw HTTPServer.StartError(description: "cannot listen on \(address) (\(reason)); "
                + "is the port in use, or the address not this machine's?")
        }
        var boundAddress = sockaddr_storage()
        var boundLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &boundAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &boundLength) }
        }
        let port = withUnsafePointer(to: &boundAddress) { pointer -> Int in
            pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
        return (listener, port)
    }
}
