import HLSBase
import Synchronization

/// Connections whose request headers are late: nginx's `client_header_timeout`.
///
/// libmicrohttpd's own timeout is an idle one, reset by every byte, so a client sending its header a
/// byte a second would hold a connection for as long as it likes. Here each connection owes a
/// complete request header by a deadline counted from when it opened or its last answer was sent;
/// the deadline is lifted while a request is being answered. A connection past it has its socket
/// shut down, which libmicrohttpd takes for the client leaving: it closes the connection itself.
///
/// A pure table with the time passed in. Connections are named by their pointer's bits; a socket is
/// shut down only under the table's lock, and libmicrohttpd reports a close (`closed`) before it
/// closes the socket, so the number cannot meanwhile be another connection's.
final class HeaderDeadlines: Sendable {
    let timeoutSeconds: Double
    /// Open connections: their socket and, while a header is owed, its deadline.
    private let connections = Locked<[Int: (socket: Int32, deadlineSeconds: Double?)]>([:])
    private let dropped = Atomic<Int>(0)

    init(timeoutSeconds: Double) {
        self.timeoutSeconds = timeoutSeconds
    }

    /// Connections dropped so far for a late header.
    var droppedCount: Int { dropped.load(ordering: .sequentiallyConsistent) }

    func opened(_ connection: Int, socket: Int32, nowSeconds: Double) {
        connections.withLock { $0[connection] = (socket, nowSeconds + timeoutSeconds) }
    }

    func headersRead(_ connection: Int) {
        connections.withLock { $0[connection]?.deadlineSeconds = nil }
    }

    /// The answer is sent: the next request's header is owed from now.
    func answered(_ connection: Int, nowSeconds: Double) {
        connections.withLock { $0[connection]?.deadlineSeconds = nowSeconds + timeoutSeconds }
    }

    func closed(_ connection: Int) {
        connections.withLock { _ = $0.removeValue(forKey: connection) }
    }

    /// Hands every socket past its deadline to `drop` (once), under the lock; how many.
    @discardableResult
    func expire(nowSeconds: Double, drop: (Int32) -> Void) -> Int {
        connections.withLock { connections in
            var count = 0
            for (connection, entry) in connections {
                guard let deadline = entry.deadlineSeconds, deadline <= nowSeconds else { continue }
                // Counted before the socket goes, so whoever sees it close also sees it counted.
                dropped.add(1, ordering: .sequentiallyConsistent)
                drop(entry.socket)
                connections[connection]?.deadlineSeconds = nil
                count += 1
            }
            return count
        }
    }
}
