import CEpoll
import CSSL
import Glibc
import HLSBase
import Synchronization

/// Answers that arrive from other threads for requests held on the loop, news of growing bodies, and
/// the loop's wake-up: an eventfd the loop watches. Owns the eventfd, and outlives the loop while a
/// held request's `respond` or a growing body's wake-up still refers to it.
final class ReplyMailbox: Sendable {
    struct Reply {
        enum Event {
            /// The answer to a held request.
            case answer(HTTPResponse)
            /// The growing body of the answer grew or ended.
            case bodyGrew
        }

        let connection: UInt64
        let ticket: Int32
        let event: Event
    }

    let eventDescriptor: Int32
    private let replies = Locked<[Reply]>([])
    private let stopAsked = Atomic<Bool>(false)

    init?() {
        eventDescriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard eventDescriptor >= 0 else { return nil }
    }

    deinit { close(eventDescriptor) }

    func post(_ reply: Reply) {
        // The loop takes every reply at each wake-up: one wake-up is owed only by the first one since.
        let first = replies.withLock { replies in
            replies.append(reply)
            return replies.count == 1
        }
        if first { wake() }
    }

    func askToStop() {
        stopAsked.store(true, ordering: .sequentiallyConsistent)
        wake()
    }

    var isStopAsked: Bool { stopAsked.load(ordering: .sequentiallyConsistent) }

    /// Every reply posted so far; clears the wake-up.
    func take() -> [Reply] {
        var count: UInt64 = 0
        _ = Glibc.read(eventDescriptor, &count, MemoryLayout<UInt64>.size)
        return replies.withLock { replies in
            defer { replies.removeAll() }
            return replies
        }
    }

    private func wake() {
        var one: UInt64 = 1
        _ = Glibc.write(eventDescriptor, &one, MemoryLayout<UInt64>.size)
    }
}

/// The figures `HTTPSServer` reports, written by the loop and read from any thread.
final class HTTPSCounters: Sendable {
    let connections = Atomic<Int>(0)
    let waiting = Atomic<Int>(0)
    let answered = Atomic<Int>(0)
    let lateHeaders = Atomic<Int>(0)
    let refused = Atomic<Int>(0)
}

/// The thread of `HTTPSServer`: accepts connections, runs their TLS handshakes and sessions, calls the
/// handler, and delivers held answers, all on one epoll loop over non-blocking sockets, so a slow
/// client costs a descriptor and bounded buffers, never a thread or another client's time.
///
/// Unchecked sendable: made on the caller's thread, then used by the loop's thread alone.
final class TLSEventLoop: @unchecked Sendable {
    private static let listenerEvent: UInt64 = 0
    private static let mailboxEvent: UInt64 = 1
    private static let sweepIntervalSeconds = 0.25

    private let listener: Int32
    private let epoll: Int32
    private let mailbox: ReplyMailbox
    private let context: Locked<TLSContext>
    private let configuration: HTTPServer.Configuration
    private let handler: HTTPServer.Handler
    private let counters: HTTPSCounters
    private var connections: [UInt64: TLSConnection] = [:]
    private var nextID: UInt64 = 2
    /// Connections with bytes left inside TLS, served again before the loop waits.
    private var readAgain: Set<UInt64> = []
    private var lastSweepSeconds = 0.0

    init(listener: Int32, epoll: Int32, mailbox: ReplyMailbox, context: Locked<TLSContext>,
         configuration: HTTPServer.Configuration, handler: @escaping HTTPServer.Handler, counters: HTTPSCounters) {
        self.listener = listener
        self.epoll = epoll
        self.mailbox = mailbox
        self.context = context
        self.configuration = configuration
        self.handler = handler
        self.counters = counters
    }

    /// Runs until the mailbox asks it to stop; then answers held requests with 503 and closes all.
    func run() {
        // A write to a socket the client closed must fail with EPIPE, not kill the process; the signal
        // is blocked on this thread only, where every TLS write happens.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        while !mailbox.isStopAsked {
            let timeoutMilliseconds: Int32 = readAgain.isEmpty ? Int32(Self.sweepIntervalSeconds * 1000) : 0
            let count = epoll_wait(epoll, &events, Int32(events.count), timeoutMilliseconds)
            let now = Self.nowSeconds()
            if count > 0 {
                for event in events.prefix(Int(count)) {
                    switch event.data.u64 {
                    case Self.listenerEvent: accept(nowSeconds: now)
                    case Self.mailboxEvent: deliverReplies(nowSeconds: now)
                    case let id:
                        guard let connection = connections[id] else { continue }
                        if event.events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
                            close(connection)
                        } else {
                            service(connection, nowSeconds: now)
                        }
                    }
                }
            }
            for id in readAgain {
                readAgain.remove(id)
                if let connection = connections[id] { service(connection, nowSeconds: now) }
            }
            if now - lastSweepSeconds >= Self.sweepIntervalSeconds {
                lastSweepSeconds = now
                sweep(nowSeconds: now)
            }
        }
        shutDown()
    }

    private func shutDown() {
        let now = Self.nowSeconds()
        deliverReplies(nowSeconds: now)
        for connection in connections.values {
            connection.session?.answerWaitingBeforeStop()
            _ = connection.write(nowSeconds: now)
        }
        for connection in Array(connections.values) { close(connection) }
        Glibc.close(listener)
        Glibc.close(epoll)
    }

    private func accept(nowSeconds: Double) {
        for _ in 0..<64 {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let socket = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    hlscap_accept_nonblocking(listener, $0, &length)
                }
            }
            guard socket >= 0 else { return }
            let context = self.context.withLock { $0 }
            guard connections.count < configuration.connectionLimit, let ssl = SSL_new(context.pointer) else {
                Glibc.close(socket)
                continue
            }
            guard SSL_set_fd(ssl, socket) == 1 else {
                SSL_free(ssl)
                Glibc.close(socket)
                continue
            }
            SSL_set_accept_state(ssl)
            var on: Int32 = 1
            setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            // The socket takes more only once less than a TLS record of what it holds is still unsent:
            // bytes wait in the answer, not in the kernel. Less memory in socket buffers, new bytes
            // (a part, another h2 stream) queued behind less, and the bytes go out in the server's
            // own writes rather than in the client's acknowledgements.
            var unsentLimit = Int32(TLSConnection.recordSize)
            setsockopt(socket, Int32(IPPROTO_TCP), TCP_NOTSENT_LOWAT, &unsentLimit, socklen_t(MemoryLayout<Int32>.size))
            let client = Self.numericHost(address)
            let peer = Self.peer(host: client, address: address)
            let connection = TLSConnection(id: nextID, socket: socket, ssl: ssl, context: context, client: client,
                                           peer: peer, nowSeconds: nowSeconds,
                                           headerTimeoutSeconds: Double(configuration.headerTimeoutSeconds))
            nextID += 1
            var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: connection.id))
            guard epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event) == 0 else { continue }
            connection.watchedEvents = EPOLLIN.rawValue
            connections[connection.id] = connection
            counters.connections.store(connections.count, ordering: .relaxed)
        }
    }

    /// Moves a connection on as far as its socket allows: handshake, reading, writing.
    private func service(_ connection: TLSConnection, nowSeconds: Double) {
        if connection.session == nil {
            switch connection.continueHandshake() {
            case .failed:
                return close(connection)
            case .waiting:
                return watch(connection)
            case .done(let name):
                connection.lastActivitySeconds = nowSeconds
                if name == "h2" {
                    guard let session = HTTP2Session(connection: connection, loop: self,
                                                      headerLimitBytes: configuration.requestMemoryBytes) else {
                        return close(connection)
                    }
                    connection.session = session
                } else {
                    connection.session = HTTP1Session(connection: connection, loop: self,
                                                      headerLimitBytes: configuration.requestMemoryBytes,
                                                      headerTimeoutSeconds: Double(configuration.headerTimeoutSeconds))
                }
            }
        }
        var more = false
        guard connection.write(nowSeconds: nowSeconds), connection.read(nowSeconds: nowSeconds, more: &more),
              connection.write(nowSeconds: nowSeconds) else {
            return close(connection)
        }
        if let session = connection.session, session.isFinished, connection.isDrained {
            return close(connection)
        }
        if more { readAgain.insert(connection.id) }
        watch(connection)
    }

    private func watch(_ connection: TLSConnection) {
        let wanted = connection.wantedEvents
        guard wanted != connection.watchedEvents else { return }
        var event = epoll_event(events: wanted, data: epoll_data_t(u64: connection.id))
        guard epoll_ctl(epoll, EPOLL_CTL_MOD, connection.socket, &event) == 0 else { return close(connection) }
        connection.watchedEvents = wanted
    }

    private func close(_ connection: TLSConnection) {
        guard connections.removeValue(forKey: connection.id) != nil else { return }
        readAgain.remove(connection.id)
        connection.closeTLS()
        // The session refers to its connection; dropping it frees both, and the descriptor.
        connection.session = nil
        counters.connections.store(connections.count, ordering: .relaxed)
    }

    private func deliverReplies(nowSeconds: Double) {
        for reply in mailbox.take() {
            guard let connection = connections[reply.connection], let session = connection.session else { continue }
            switch reply.event {
            case .answer(let response): session.deliver(response, ticket: reply.ticket)
            case .bodyGrew: session.resumeBody(ticket: reply.ticket)
            }
            service(connection, nowSeconds: nowSeconds)
        }
    }

    /// Closes connections whose handshake or request header is late, those whose client keeps its
    /// window shut on an answer, and idle ones.
    private func sweep(nowSeconds: Double) {
        let idleSeconds = Double(configuration.idleTimeoutSeconds)
        for connection in Array(connections.values) {
            if let deadline = connection.headerDeadlineSeconds, deadline <= nowSeconds {
                counters.lateHeaders.add(1, ordering: .relaxed)
                close(connection)
            } else if let shut = connection.session?.windowShutSinceSeconds, nowSeconds - shut >= idleSeconds {
                refuse(connection, "closed: flow-control window kept shut \(configuration.idleTimeoutSeconds) s on an answer")
                close(connection)
            } else if connection.session?.isIdle ?? true, nowSeconds - connection.lastActivitySeconds >= idleSeconds {
                close(connection)
            }
        }
    }

    // MARK: For the sessions

    /// A whole request from `connection`: the handler's answer goes to the session now, or later
    /// through the mailbox.
    func dispatch(_ request: HTTPRequest, from connection: TLSConnection, ticket: Int32) {
        switch handler(request) {
        case .now(let response):
            connection.session?.deliver(response, ticket: ticket)
        case .later(let register):
            counters.waiting.add(1, ordering: .relaxed)
            let answer = AnswerOnce(mailbox: mailbox, counters: counters, connection: connection.id, ticket: ticket)
            register { response in answer.respond(response) }
        }
    }

    func countAnswer() { counters.answered.add(1, ordering: .relaxed) }

    /// What a growing body sent on `connection` for the request `ticket` calls when it grows or ends,
    /// on the producing thread: the session resumes the body on this loop's thread.
    func bodyWakeUp(for connection: TLSConnection, ticket: Int32) -> @Sendable () -> Void {
        let mailbox = mailbox, id = connection.id
        return { mailbox.post(.init(connection: id, ticket: ticket, event: .bodyGrew)) }
    }

    /// Tells why a hostile client is refused or closed, the first time only for its connection.
    func refuse(_ connection: TLSConnection, _ reason: @autoclosure () -> String) {
        guard !connection.refusalReported else { return }
        connection.refusalReported = true
        counters.refused.add(1, ordering: .relaxed)
        configuration.refusalLog?("https: \(connection.peer): \(reason())")
    }

    /// `host:port`, `[host]:port` for IPv6, for messages.
    private static func peer(host: String?, address: sockaddr_storage) -> String {
        var address = address
        let isIPv6 = Int32(address.ss_family) == AF_INET6
        let port = withUnsafePointer(to: &address) { pointer in
            isIPv6 ? pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
                   : pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
        let name = host ?? "?"
        return isIPv6 ? "[\(name)]:\(port)" : "\(name):\(port)"
    }

    private static func numericHost(_ address: sockaddr_storage) -> String? {
        var address = address
        let length = socklen_t(Int32(address.ss_family) == AF_INET6 ? MemoryLayout<sockaddr_in6>.size
                                                                      : MemoryLayout<sockaddr_in>.size)
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST)
            }
        }
        guard status == 0 else { return nil }
        return String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The `respond` a held request's handler gets: the first answer goes to the loop, later ones (a
/// timeout racing the part) are dropped.
final class AnswerOnce: Sendable {
    private let mailbox: ReplyMailbox
    private let counters: HTTPSCounters
    private let connection: UInt64
    private let ticket: Int32
    private let answered = Atomic<Bool>(false)

    init(mailbox: ReplyMailbox, counters: HTTPSCounters, connection: UInt64, ticket: Int32) {
        self.mailbox = mailbox
        self.counters = counters
        self.connection = connection
        self.ticket = ticket
    }

    func respond(_ response: HTTPResponse) {
        guard !answered.exchange(true, ordering: .acquiringAndReleasing) else { return }
        counters.waiting.subtract(1, ordering: .relaxed)
        mailbox.post(.init(connection: connection, ticket: ticket, event: .answer(response)))
    }
}

extension TLSEventLoop {
    static func nowSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
