import CMicroHTTPD
import Foundation
import Glibc
import HLSBase
import HLSKit
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd: the only type that holds its pointers.
///
/// One internal thread polls every connection with epoll, so a slow or stuck client costs a file
/// descriptor, never a thread, and never holds up capture or other clients. A request answered
/// `later` is suspended (it takes no polling) until its answer arrives from another thread; so is one
/// whose growing body has no new byte, until the body grows.
/// Connections, idle time and request header sizes are bounded; over the limits libmicrohttpd
/// refuses the connection or answers 431 itself. A request header must also arrive whole within a
/// time limit (`HeaderDeadlines`), checked by a thread of its own.
///
/// Unchecked sendable: `daemon` is written once in `init` and read-only until `stop`, which the
/// `stopped` flag makes run once; the suspended requests and the growing bodies being sent are under
/// their own locks.
public final class HTTPServer: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var address: ListenAddress
        /// Connections held at once; more are refused until some close.
        public var connectionLimit = 1024
        /// A connection with no traffic for this long is closed.
        public var idleTimeoutSeconds = 30
        /// A connection whose request header is not whole this long after it opened, or after its
        /// last answer was sent, is closed, however slowly bytes keep coming.
        public var headerTimeoutSeconds = 30
        /// Memory for one connection's request line and headers: larger requests get 431.
        public var requestMemoryBytes = 64 * 1024
        /// PEM text of a private key and its certificate: HTTPS instead of HTTP.
        public var tls: (key: String, certificate: String)?
        /// A DER OCSP response for the certificate, stapled by the HTTPS server to handshakes that ask
        /// for status (see `OCSPStaple`).
        public var ocspResponse: [UInt8]?
        /// The context made from `tls` and `ocspResponse` already, when the caller checked them so: the
        /// HTTPS server uses it rather than make and check its own.
        public var tlsContext: TLSContext?
        /// Told, in one line and once per connection, why the HTTPS server refused or closed a hostile
        /// client (`https: 127.0.0.1:53312: closed: rapid stream resets (CVE-2023-44487)`); the command
        /// decides where the line goes.
        public var refusalLog: (@Sendable (String) -> Void)?

        public init(address: ListenAddress) {
            self.address = address
        }
    }

    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    public typealias Handler = @Sendable (HTTPRequest) -> HTTPReply

    public let configuration: Configuration
    /// The port the server listens on (the one the kernel chose when the address asked for port 0).
    public private(set) var port = 0
    private let handler: Handler
    private var daemon: OpaquePointer?
    private let suspended = Locked<[ObjectIdentifier: PendingRequest]>([:])
    /// The readers of growing bodies whose responses libmicrohttpd still holds.
    private let growing = Locked<[ObjectIdentifier: GrowingBodyReader]>([:])
    private let stopped = Atomic<Bool>(false)
    private let answered = Atomic<Int>(0)
    fileprivate let deadlines: HeaderDeadlines
    private let stopSweeping = DispatchSemaphore(value: 0)
    private let sweeperDone = DispatchSemaphore(value: 0)

    public init(configuration: Configuration, handler: @escaping Handler) throws(StartError) {
        self.configuration = configuration
        self.handler = handler
        deadlines = HeaderDeadlines(timeoutSeconds: Double(configuration.headerTimeoutSeconds))
        let notifyContext = Unmanaged.passUnretained(deadlines).toOpaque()
        let context = Unmanaged.passUnretained(self).toOpaque()
        var flags = UInt32(MHD_USE_INTERNAL_POLLING_THREAD.rawValue) | UInt32(MHD_USE_EPOLL.rawValue)
            | UInt32(MHD_ALLOW_SUSPEND_RESUME.rawValue)
        if configuration.address.isIPv6 { flags |= UInt32(MHD_USE_DUAL_STACK.rawValue) }
        if configuration.tls != nil, MHD_is_feature_supported(.FEATURE_TLS) != .YES {
            throw StartError(description: "this libmicrohttpd was built without TLS; HTTPS is not available")
        }
        let daemon = configuration.address.storage.withUnsafeBytes { address in
            address.withMemoryRebound(to: sockaddr.self) { socketAddress in
                hlscap_mhd_start(flags, socketAddress.baseAddress, accessHandler, context, completedHandler, context,
                                 connectionHandler, notifyContext,
                                 UInt32(configuration.connectionLimit), UInt32(configuration.idleTimeoutSeconds),
                                 configuration.requestMemoryBytes, configuration.tls?.key, configuration.tls?.certificate)
            }
        }
        guard let daemon else {
            throw StartError(description: "cannot listen on \(configuration.address) (\(String(cString: strerror(errno)))); "
                + "is the port in use, or the address not this machine's?")
        }
        self.daemon = daemon
        port = Int(hlscap_mhd_port(daemon))
        startSweeper()
    }

    /// Drops late headers a few times a second until `stop`; holds the table and the semaphores, not
    /// the server, so the server can still go away.
    private func startSweeper() {
        let deadlines = deadlines, stopSweeping = stopSweeping, sweeperDone = sweeperDone
        let interval = min(0.25, deadlines.timeoutSeconds / 4)
        let thread = Thread {
            while stopSweeping.wait(timeout: .now() + interval) == .timedOut {
                deadlines.expire(nowSeconds: monotonicSeconds()) { socket in _ = shutdown(socket, Int32(SHUT_RDWR)) }
            }
            sweeperDone.signal()
        }
        thread.name = "hlscap-http-headers"
        thread.start()
    }

    deinit { stop() }

    /// Connections open now.
    public var connectionCount: Int {
        guard let daemon, !stopped.load(ordering: .acquiring) else { return 0 }
        return Int(hlscap_mhd_connection_count(daemon))
    }

    /// Requests held for a later answer now.
    public var waitingCount: Int { suspended.withLock { $0.count } }

    /// Responses sent so far.
    public var answeredCount: Int { answered.load(ordering: .relaxed) }

    /// Connections closed so far because their request header came too slowly.
    public var lateHeaderCount: Int { deadlines.droppedCount }

    /// Cleartext HTTP/1.1 has no hostile case of its own but a late header (`lateHeaderCount`).
    public var refusedCount: Int { 0 }

    /// Answers every held request with 503, then closes every connection and the listening socket.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing), let daemon else { return }
        stopSweeping.signal()
        sweeperDone.wait()
        for pending in suspended.withLock({ Array($0.values) }) {
            pending.respond(.text(503, "the server is stopping"))
        }
        for reader in growing.withLock({ Array($0.values) }) { reader.cut() }
        // Resumed connections are taken up by the polling thread before the daemon goes (libmicrohttpd
        // must not stop with a connection suspended).
        let deadline = Date().addingTimeInterval(1)
        while (suspended.withLock { !$0.isEmpty } || growing.withLock { !$0.isEmpty }) && Date() < deadline {
            usleep(5_000)
        }
        MHD_stop_daemon(daemon)
    }

    // MARK: Called on libmicrohttpd's thread

    fileprivate func handle(connection: OpaquePointer, url: String, method: String,
                            requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        guard let existing = requestContext.pointee else {
            // The first call comes with the headers; answering only on the next, once the whole request
            // is read, lets libmicrohttpd keep the connection alive for the next request.
            requestContext.pointee = headersRead
            deadlines.headersRead(Int(bitPattern: connection))
            return .YES
        }
        if existing != headersRead {
            // A held request, resumed: its answer is ready.
            let pending = Unmanaged<PendingRequest>.fromOpaque(existing).takeUnretainedValue()
            guard let response = pending.response.withLock({ $0 }) else { return .YES }
            return queue(response, on: connection)
        }
        let request = HTTPRequest(method: method, path: url,
                                  query: Self.values(of: connection, kind: .GET_ARGUMENT_KIND, lowercased: false),
                                  headers: Self.values(of: connection, kind: .HEADER_KIND, lowercased: true),
                                  client: Self.clientAddress(of: connection))
        switch handler(request) {
        case .now(let response):
            return queue(response, on: connection)
        case .later(let register):
            let pending = PendingRequest(connection: connection, server: self)
            requestContext.pointee = Unmanaged.passRetained(pending).toOpaque()
            MHD_suspend_connection(connection)
            suspended.withLock { $0[ObjectIdentifier(pending)] = pending }
            register { response in pending.respond(response) }
            return .YES
        }
    }

    fileprivate func resume(_ pending: PendingRequest) {
        suspended.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(pending)) }
        MHD_resume_connection(pending.connection.pointer)
    }

    private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        guard let made = make(response, on: connection) else {
            return queue(.text(404, "not found"), on: connection)
        }
        for (name, value) in response.headers {
            // libmicrohttpd chunks a body of unknown size; a length would contradict it.
            if case .growing = response.body, name.lowercased() == "content-length" { continue }
            MHD_add_response_header(made, name, value)
        }
        defer { MHD_destroy_response(made) }
        answered.add(1, ordering: .relaxed)
        return MHD_queue_response(connection, UInt32(response.status), made)
    }

    private func make(_ response: HTTPResponse, on connection: OpaquePointer) -> OpaquePointer? {
        switch response.body {
        case .bytes(let bytes):
            return bytes.withUnsafeBytes { buffer in
                MHD_create_response_from_buffer(buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress),
                                                .RESPMEM_MUST_COPY)
            }
        case .file(let path, let offset, let length):
            // The response owns the descriptor and closes it when sent (or the client goes away).
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            guard let made = MHD_create_response_from_fd_at_offset64(UInt64(length), descriptor, UInt64(offset)) else {
                close(descriptor)
                return nil
            }
            return made
        case .growing(let body):
            let reader = GrowingBodyReader(body: body, connection: connection, readers: growing)
            // The response owns the reader until libmicrohttpd frees it (`releaseReader`).
            let owned = Unmanaged.passRetained(reader)
            guard let made = MHD_create_response_from_callback(hlscap_mhd_size_unknown, Self.growingBlockBytes,
                                                               readGrowingBody, owned.toOpaque(), releaseReader) else {
                reader.close()
                owned.release()
                return nil
            }
            return made
        }
    }

    /// The buffer libmicrohttpd reads a growing body into for an HTTP/1.0 client (chunks use the
    /// connection's own buffer).
    private static let growingBlockBytes = 16 * 1024

    /// The client's numeric address, as `getnameinfo` writes it.
    private static func clientAddress(of connection: OpaquePointer) -> String? {
        guard let address = hlscap_mhd_client_address(connection) else { return nil }
        let length = socklen_t(Int32(address.pointee.sa_family) == AF_INET6 ? MemoryLayout<sockaddr_in6>.size
                                                                             : MemoryLayout<sockaddr_in>.size)
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else { return nil }
        return String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func values(of connection: OpaquePointer, kind: MHD_ValueKind, lowercased: Bool) -> [String: String] {
        final class Collected {
            var values: [String: String] = [:]
            var lowercased = false
        }
        let collected = Collected()
        collected.lowercased = lowercased
        withExtendedLifetime(collected) {
            _ = MHD_get_connection_values(connection, kind, { context, _, key, value in
                guard let context, let key else { return .YES }
                let collected = Unmanaged<Collected>.fromOpaque(context).takeUnretainedValue()
                let name = String(cString: key)
                collected.values[collected.lowercased ? name.lowercased() : name] = value.map { String(cString: $0) } ?? ""
                return .YES
            }, Unmanaged.passUnretained(collected).toOpaque())
        }
        return collected.values
    }
}

/// A connection pointer handed to the thread that answers a held request; libmicrohttpd allows
/// `MHD_resume_connection` from any thread.
struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// The reader of one growing body for libmicrohttpd: hands it the bytes there are, and when there are
/// none yet, suspends the connection (libmicrohttpd allows that from a content reader) until the body's
/// wake-up resumes it, so that a waiting body costs no polling.
///
/// Unchecked sendable: the connection pointer is used by the two calls libmicrohttpd allows, suspend on
/// its thread, resume from any, both under the lock that says which state the connection is in.
final class GrowingBodyReader: @unchecked Sendable {
    private struct State {
        var suspended = false
        /// The server stops: the body is cut.
        var cut = false
    }

    private let body: GrowingBody
    private let connection: ConnectionHandle
    private let readers: Locked<[ObjectIdentifier: GrowingBodyReader]>
    private let state = Locked(State())
    private var watch = 0

    init(body: GrowingBody, connection: OpaquePointer, readers: Locked<[ObjectIdentifier: GrowingBodyReader]>) {
        self.body = body
        self.connection = ConnectionHandle(pointer: connection)
        self.readers = readers
        // Watched before the first read, so that no growth falls between a read that finds nothing and
        // the suspension; the body holds the reader until `close` (and a wake-up under way, after it).
        watch = body.watch { self.resume() }
        readers.withLock { $0[ObjectIdentifier(self)] = self }
    }

    /// On libmicrohttpd's thread: bytes from `offset`, the end, or 0 with the connection suspended.
    func read(from offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        state.withLock { state in
            guard !state.cut else { return hlscap_mhd_reader_error }
            switch body.read(from: Int(offset), into: buffer) {
            case .bytes(let count):
                return count
            case .finished:
                return hlscap_mhd_reader_end
            case .abandoned:
                // The connection closes without the last chunk: no client takes the bytes for a whole body.
                return hlscap_mhd_reader_error
            case .waiting:
                state.suspended = true
                MHD_suspend_connection(connection.pointer)
                return 0
            }
        }
    }

    /// From the producing thread: the body grew or ended.
    private func resume() {
        let suspended = state.withLock { state in
            defer { state.suspended = false }
            return state.suspended
        }
        if suspended { MHD_resume_connection(connection.pointer) }
    }

    /// The server stops: the body ends as an abandoned one would.
    func cut() {
        state.withLock { $0.cut = true }
        resume()
    }

    /// libmicrohttpd is done with the response.
    func close() {
        body.unwatch(watch)
        _ = readers.withLock { $0.removeValue(forKey: ObjectIdentifier(self)) }
    }
}

private let readGrowingBody: MHD_ContentReaderCallback = { context, offset, buffer, size in
    guard let context, let buffer else { return hlscap_mhd_reader_error }
    return Unmanaged<GrowingBodyReader>.fromOpaque(context).takeUnretainedValue()
        .read(from: offset, into: UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(buffer), count: size))
}

private let releaseReader: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    let reader = Unmanaged<GrowingBodyReader>.fromOpaque(context)
    reader.takeUnretainedValue().close()
    reader.release()
}

/// A request held for a later answer. Unchecked sendable: the answer is under its lock and is set once.
final class PendingRequest: @unchecked Sendable {
    let connection: ConnectionHandle
    let response = Locked<HTTPResponse?>(nil)
    private unowned let server: HTTPServer

    init(connection: OpaquePointer, server: HTTPServer) {
        self.connection = ConnectionHandle(pointer: connection)
        self.server = server
    }

    /// The first answer wins; later ones (a timeout racing the part) are dropped.
    func respond(_ answer: HTTPResponse) {
        let first = response.withLock { stored in
            guard stored == nil else { return false }
            stored = answer
            return true
        }
        if first { server.resume(self) }
    }
}

private let accessHandler: MHD_AccessHandlerCallback = { context, connection, url, method, _, _, uploadSize, requestContext in
    guard let context, let connection, let url, let method, let requestContext else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    // A request body is not read: nothing here takes uploads.
    if let uploadSize { uploadSize.pointee = 0 }
    return server.handle(connection: connection, url: String(cString: url), method: String(cString: method),
                         requestContext: requestContext)
}

/// Marks a request whose headers were read, before any answer; never a `PendingRequest`. A
/// constant address, never dereferenced.
nonisolated(unsafe) private let headersRead = UnsafeMutableRawPointer(bitPattern: 1)!

private let completedHandler: MHD_RequestCompletedCallback = { context, connection, requestContext, _ in
    if let context, let connection {
        Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().deadlines
            .answered(Int(bitPattern: connection), nowSeconds: monotonicSeconds())
    }
    guard let requestContext, let pending = requestContext.pointee, pending != headersRead else { return }
    Unmanaged<PendingRequest>.fromOpaque(pending).release()
    requestContext.pointee = nil
}

private let connectionHandler: MHD_NotifyConnectionCallback = { context, connection, _, event in
    guard let context, let connection else { return }
    let deadlines = Unmanaged<HeaderDeadlines>.fromOpaque(context).takeUnretainedValue()
    switch event {
    case .CONNECTION_NOTIFY_STARTED:
        deadlines.opened(Int(bitPattern: connection), socket: hlscap_mhd_connection_socket(connection),
                         nowSeconds: monotonicSeconds())
    default:
        deadlines.closed(Int(bitPattern: connection))
    }
}

private func monotonicSeconds() -> Double {
    Double(DispatchTime.now().uptimeNanoseconds) / 1e9
}
