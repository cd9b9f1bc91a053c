import Glibc

/// Where the server listens: `ADDR:PORT`, `[IPv6]:PORT`, `:PORT` (every interface) or `localhost:PORT`.
public struct ListenAddress: Sendable, CustomStringConvertible {
    public let host: String
    public let port: Int
    /// The resolved socket address, as bytes of a `sockaddr_storage`.
    let storage: [UInt8]
    let isIPv6: Bool

    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
    }

    public init(_ text: String) throws(Invalid) {
        var host = ""
        var portText = Substring(text)
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw Invalid(description: "\(text) has no port; write [ADDR]:PORT") }
            portText = rest.dropFirst()
        } else if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            portText = text[text.index(after: colon)...]
        } else {
            throw Invalid(description: "\(text) has no port; write ADDR:PORT, such as 127.0.0.1:8080 or :8080")
        }
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw Invalid(description: "\(text) has no valid port (0 to 65535)")
        }
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host.isEmpty ? nil : host, String(port), &hints, &result)
        guard status == 0, let first = result else {
            throw Invalid(description: "\(host.isEmpty ? text : host) is not an address this machine can listen on "
                + "(\(String(cString: gai_strerror(status))))")
        }
        defer { freeaddrinfo(result) }
        // An empty host listens on every interface: prefer IPv6, which also takes IPv4 (dual stack).
        var chosen = first
        if host.isEmpty {
            var candidate: UnsafeMutablePointer<addrinfo>? = first
            while let entry = candidate {
                if entry.pointee.ai_family == AF_INET6 { chosen = entry; break }
                candidate = entry.pointee.ai_next
            }
        }
        var storage = [UInt8](repeating: 0, count: MemoryLayout<sockaddr_storage>.size)
        storage.withUnsafeMutableBytes { buffer in
            buffer.copyMemory(from: UnsafeRawBufferPointer(start: chosen.pointee.ai_addr,
                                                           count: Int(chosen.pointee.ai_addrlen)))
        }
        self.host = host
        self.port = port
        self.storage = storage
        isIPv6 = chosen.pointee.ai_family == AF_INET6
    }

    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
