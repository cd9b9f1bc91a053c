/// A running server, whichever protocols it speaks: `HTTPServer` (HTTP/1.1 on libmicrohttpd) or
/// `HTTPSServer` (TLS with HTTP/2 and HTTP/1.1). Both call one `HTTPServer.Handler`.
public protocol HTTPServing: AnyObject, Sendable {
    /// The port the server listens on (the one the kernel chose when the address asked for port 0).
    var port: Int { get }
    /// Connections open now.
    var connectionCount: Int { get }
    /// Requests held for a later answer now.
    var waitingCount: Int { get }
    /// Responses sent so far.
    var answeredCount: Int { get }
    /// Connections closed so far because their request header came too slowly.
    var lateHeaderCount: Int { get }
    /// Connections refused or closed so far as hostile (HTTP/2 floods and resets, more streams than
    /// allowed, a window kept shut), each told once in the server's log.
    var refusedCount: Int { get }
    /// Answers every held request with 503, then closes every connection and the listening socket.
    func stop()
}

extension HTTPServer: HTTPServing {}
