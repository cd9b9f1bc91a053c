import Foundation
import Glibc
import HLSCrypto
import HLSEngine
import HLSKit
import HLSMedia

/// `--listen rtmp://ADDR:PORT/APP/KEY`: takes one RTMP publisher (OBS, ffmpeg, an encoder) at a time.
///
/// libavformat's RTMP listener takes whatever stream name a client publishes, and any second client
/// once the first has gone, so hlscap listens on the address itself and passes each connection through
/// to libavformat's listener on a loopback port, reading what the client sends on the way
/// (`RTMPPublishInspector`): a connection while a publisher is on, one to another application, or one
/// whose `publish` names another stream key is closed before its `publish` command reaches libavformat,
/// with one line saying why.
final class RTMPListener: @unchecked Sendable {
    /// The address as messages name it: the key left out.
    let name: String
    /// Where libavformat listens, for `MediaSource`.
    let internalURL: String
    private let app: String
    private let key: String
    private let socket: Int32
    private let internalPort: Int
    private let lock = NSLock()
    private var publishing = false
    private var handedOn = 0
    private let report: @Sendable (String) -> Void

    /// How long a client may take to name its stream before it is closed.
    static let publishDeadlineSeconds = 10.0

    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    /// Binds the address; `report` is told each connection refused.
    init(address: RTMPListenAddress, report: @escaping @Sendable (String) -> Void) throws(Refusal) {
        let (url, host, port) = (address.url, address.host, address.port)
        app = address.app
        key = address.key
        name = "rtmp://\(host):\(port)/\(app)/…"
        self.report = report
        socket = try Self.bind(host: host, port: port, url: url)
        internalPort = try Self.freeLoopbackPort()
        internalURL = "rtmp://127.0.0.1:\(internalPort)/\(app)/\(key)"
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Connections handed to libavformat's listener so far.
    var connectionsHandedOn: Int { lock.withLock { handedOn } }

    private static func bind(host: String, port: Int, url: String) throws(Refusal) -> Int32 {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host == "0.0.0.0" || host.isEmpty ? nil : host, String(port), &hints, &result) == 0,
              let address = result else {
            throw Refusal(description: "--listen \(url): \(host) is not an address this machine can listen on")
        }
        defer { freeaddrinfo(result) }
        let descriptor = Glibc.socket(address.pointee.ai_family, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        guard descriptor >= 0, Glibc.bind(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0,
              Glibc.listen(descriptor, 8) == 0 else {
            let reason = String(cString: strerror(errno))
            if descriptor >= 0 { close(descriptor) }
            throw Refusal(description: "--listen \(url): cannot listen on \(host):\(port) (\(reason)); choose another port")
        }
        return descriptor
    }

    /// A loopback port nothing listens on now, for libavformat to listen on.
    private static func freeLoopbackPort() throws(Refusal) -> Int {
        let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                Glibc.bind(descriptor, generic, length) == 0 && getsockname(descriptor, generic, &length) == 0
            }
        }
        guard bound else { throw Refusal(description: "no free loopback port for the RTMP listener") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private func acceptLoop() {
        while true {
            var peer = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = withUnsafeMutablePointer(to: &peer) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(socket, $0, &length) }
            }
            guard client >= 0 else {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            let from = Self.describe(peer)
            let busy = lock.withLock {
                defer { publishing = true }
                return publishing
            }
            if busy {
                report("refused a second publisher from \(from): one publisher at a time")
                close(client)
                continue
            }
            Thread.detachNewThread { [self] in
                pass(client, from: from)
                lock.withLock { publishing = false }
            }
        }
    }

    /// Passes one client through to libavformat's listener, closing both ends if it names another
    /// application or stream key.
    private func pass(_ client: Int32, from: String) {
        defer { close(client) }
        guard let server = connectInternal() else {
            report("refused a publisher from \(from): the stream is not ready to take one")
            return
        }
        defer { close(server) }
        lock.withLock { handedOn += 1 }
        var inspector: RTMPPublishInspector? = RTMPPublishInspector()
        let deadline = Date(timeIntervalSinceNow: Self.publishDeadlineSeconds)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var descriptors = [pollfd(fd: client, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: server, events: Int16(POLLIN), revents: 0)]
        while true {
            if inspector != nil, Date() > deadline {
                report("refused a publisher from \(from): it named no stream within \(Int(Self.publishDeadlineSeconds)) s")
                return
            }
            let ready = poll(&descriptors, 2, 1000)
            if ready < 0, errno != EINTR { return }
            for index in 0..<2 where descriptors[index].revents != 0 {
                let source = descriptors[index].fd
                let target = index == 0 ? server : client
                let count = read(source, &buffer, buffer.count)
                guard count > 0 else { return }
                if index == 0, var reading = inspector {
                    do {
                        if case .publish(let app, let streamName)? = try reading.feed(buffer[0..<count]) {
                            if let app, app != self.app {
                                report("refused a publisher from \(from): it connected to application “\(app)”, not “\(self.app)”")
                                return
                            }
                            guard Digest.constantTimeEqual(Array(streamName.utf8), Array(key.utf8)) else {
                                report("refused a publisher from \(from): wrong stream key")
                                return
                            }
                            inspector = nil
                        } else {
                            inspector = reading
                        }
                    } catch {
                        report("refused a connection from \(from): \(error)")
                        return
                    }
                }
                guard Self.writeAll(target, buffer[0..<count]) else { return }
            }
        }
    }

    /// libavformat listens only while the stream waits for a publisher: a connection that comes between
    /// two is held until it does, for a few seconds.
    private func connectInternal() -> Int32? {
        for _ in 0..<50 {
            let descriptor = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(internalPort).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            if connected { return descriptor }
            close(descriptor)
            usleep(100_000)
        }
        return nil
    }

    private static func writeAll(_ descriptor: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    private static func describe(_ peer: sockaddr_storage) -> String {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        var copy = peer
        let status = withUnsafePointer(to: &copy) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, socklen_t(MemoryLayout<sockaddr_storage>.size), &host, socklen_t(host.count),
                            &service, socklen_t(service.count), NI_NUMERICHOST | NI_NUMERICSERV)
            }
        }
        return status == 0 ? "\(String(nulTerminated: host)):\(String(nulTerminated: service))" : "a client"
    }
}
