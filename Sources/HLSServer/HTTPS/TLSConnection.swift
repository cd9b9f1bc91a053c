import CEpoll
import CSSL
import Glibc

/// What speaks HTTP on a connection once the TLS handshake chose the protocol (`HTTP2Session`,
/// `HTTP1Session`). Called on the loop's thread only.
protocol ConnectionSession: AnyObject {
    /// Takes bytes read from the client; false when the connection must close.
    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool
    /// Appends the next bytes to send to `output`, stopping near `limit` bytes; false when the
    /// connection must close.
    func produce(into output: OutputBuffer, limit: Int) -> Bool
    /// An answer for the request `ticket` names, now or after a wait.
    func deliver(_ response: HTTPResponse, ticket: Int32)
    /// The growing body answering the request `ticket` grew or ended: send on (the loop writes next).
    func resumeBody(ticket: Int32)
    /// Answers every request still waiting with 503: the server stops.
    func answerWaitingBeforeStop()
    /// It reads now (HTTP/1.1 reads no further request while one is being answered).
    var wantsInput: Bool { get }
    /// Nothing more will be read or sent: close once the output is out.
    var isFinished: Bool { get }
    /// No request is open, so the idle timeout applies.
    var isIdle: Bool { get }
    /// Since when an answer's bytes wait on a flow-control window the client keeps shut; nil while
    /// none waits.
    var windowShutSinceSeconds: Double? { get }
}

extension ConnectionSession {
    var windowShutSinceSeconds: Double? { nil }
}

/// One TLS connection: its socket, its `SSL`, what is waiting to be written, and the session that
/// speaks HTTP on it. Output is bounded: the session is asked for more only once what it gave is
/// written, and nothing is read while output waits on a slow reader.
final class TLSConnection {
    static let outputLimit = 64 * 1024
    private static let readSize = 16 * 1024
    /// The most plaintext one TLS record carries.
    static let recordSize = 16 * 1024

    let id: UInt64
    let socket: Int32
    let ssl: OpaquePointer
    /// The context `ssl` was made from, kept while the connection lives: a handshake reads its staple.
    let context: TLSContext
    let client: String?
    /// The client's address and port, for messages.
    let peer: String
    /// Why the connection was refused has been told already: once per connection.
    var refusalReported = false
    var session: ConnectionSession?
    /// When the connection closes for a header that did not come in time; nil while none is owed.
    var headerDeadlineSeconds: Double?
    var lastActivitySeconds: Double
    /// The events epoll watches now.
    var watchedEvents: UInt32 = 0
    /// The last handshake step or write waits for the socket to take bytes.
    private var waitsToWrite = false
    /// A write waits for bytes from the client (TLS records can ask that), or a read to write.
    private var writeWaitsToRead = false
    private var readWaitsToWrite = false
    private let output = OutputBuffer()
    private var buffer = [UInt8](repeating: 0, count: readSize)

    init(id: UInt64, socket: Int32, ssl: OpaquePointer, context: TLSContext, client: String?, peer: String,
         nowSeconds: Double, headerTimeoutSeconds: Double) {
        self.id = id
        self.socket = socket
        self.ssl = ssl
        self.context = context
        self.client = client
        self.peer = peer
        lastActivitySeconds = nowSeconds
        headerDeadlineSeconds = nowSeconds + headerTimeoutSeconds
    }

    deinit {
        SSL_free(ssl)
        close(socket)
    }

    /// Sends close_notify if the socket takes it at once; nothing waits for the client's.
    func closeTLS() {
        guard session != nil else { return }
        ERR_clear_error()
        SSL_shutdown(ssl)
        ERR_clear_error()
    }

    enum Handshake {
        case waiting
        case done(protocol: String?)
        case failed
    }

    func continueHandshake() -> Handshake {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            waitsToWrite = false
            var selected: UnsafePointer<UInt8>?
            var length: UInt32 = 0
            SSL_get0_alpn_selected(ssl, &selected, &length)
            guard let selected, length > 0 else { return .done(protocol: nil) }
            return .done(protocol: String(decoding: UnsafeBufferPointer(start: selected, count: Int(length)), as: UTF8.self))
        }
        switch outcome(of: result) {
        case .wantsRead: waitsToWrite = false
        case .wantsWrite: waitsToWrite = true
        case .failed: return .failed
        }
        return .waiting
    }

    /// Whether the output is all written.
    var isDrained: Bool { output.isDrained }

    /// Reads what the socket has (a bounded amount, so one busy client cannot hold the loop) into the
    /// session; false when the connection must close. `more`: it stopped with bytes left inside TLS.
    func read(nowSeconds: Double, more: inout Bool) -> Bool {
        guard let session else { return true }
        for _ in 0..<4 {
            guard session.wantsInput, isDrained, !session.isFinished else { return true }
            ERR_clear_error()
            readWaitsToWrite = false
            let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if count > 0 {
                lastActivitySeconds = nowSeconds
                guard buffer.withUnsafeBytes({ session.receive(UnsafeRawBufferPointer(rebasing: $0.prefix(Int(count)))) })
                else { return false }
                // A read that did not fill the buffer and left nothing inside TLS most likely emptied the
                // socket: epoll (level-triggered) wakes the loop for anything more, which saves the read
                // that would only say EAGAIN.
                if Int(count) < buffer.count && SSL_has_pending(ssl) == 0 { return true }
                continue
            }
            switch outcome(of: count) {
            case .wantsRead: return true
            case .wantsWrite: readWaitsToWrite = true; return true
            case .failed: return false
            }
        }
        more = SSL_has_pending(ssl) == 1
        return true
    }

    /// Writes the session's output until the socket takes no more; false when the connection must close.
    func write(nowSeconds: Double) -> Bool {
        guard let session else { return true }
        // Corked while more than a record waits, so that TCP sends full segments rather than one a
        // record; uncorked (which sends what is left) whenever the writing stops.
        var corked = false
        defer { if corked { setCork(false) } }
        while true {
            if isDrained {
                output.reset(keepingCapacityUpTo: Self.outputLimit * 2)
                guard session.produce(into: output, limit: Self.outputLimit) else { return false }
                if output.isDrained { return true }
            }
            let unsent = output.unsent
            if !corked, unsent.count > Self.recordSize {
                corked = true
                setCork(true)
            }
            ERR_clear_error()
            let count = SSL_write(ssl, unsent.baseAddress, Int32(unsent.count))
            waitsToWrite = false
            writeWaitsToRead = false
            if count > 0 {
                output.consume(Int(count))
                lastActivitySeconds = nowSeconds
                continue
            }
            switch outcome(of: count) {
            case .wantsRead: writeWaitsToRead = true; return true
            case .wantsWrite: waitsToWrite = true; return true
            case .failed: return false
            }
        }
    }

    private func setCork(_ on: Bool) {
        var value: Int32 = on ? 1 : 0
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_CORK, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    private enum Outcome {
        case wantsRead, wantsWrite, failed
    }

    /// After a TLS call that did not complete: what it waits for, or that it failed (the client
    /// left, closed TLS, or broke the protocol).
    private func outcome(of result: Int32) -> Outcome {
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ: return .wantsRead
        case SSL_ERROR_WANT_WRITE: return .wantsWrite
        default:
            ERR_clear_error()
            return .failed
        }
    }

    /// The events to watch: reading while the handshake or the session wants bytes, writing while
    /// output waits.
    var wantedEvents: UInt32 {
        guard let session else { return waitsToWrite ? EPOLLOUT.rawValue : EPOLLIN.rawValue }
        let reads = session.wantsInput && isDrained && !session.isFinished
        var events: UInt32 = 0
        if !isDrained && !writeWaitsToRead || reads && readWaitsToWrite { events |= EPOLLOUT.rawValue }
        if reads && !readWaitsToWrite || !isDrained && writeWaitsToRead { events |= EPOLLIN.rawValue }
        return events
    }
}
