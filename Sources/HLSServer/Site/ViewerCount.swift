import HLSBase

/// Viewers of a stream: distinct clients (address and user agent) that fetched one of its playlists,
/// segments or parts within the last `windowSeconds`. A player reloads its playlist at least once a
/// target duration, so a viewer who left drops out within the window. Behind a CDN the CDN is the client.
final class ViewerCount: Sendable {
    static let windowSeconds: Int64 = 30

    private let clock: any Scheduler
    /// When each client was last seen, in microseconds on the clock.
    private let lastSeen = Locked<[String: Int64]>([:])

    init(clock: any Scheduler) {
        self.clock = clock
    }

    /// Notes a request for the stream's media; other requests (the page, the snapshot) do not make a viewer.
    func note(_ request: HTTPRequest) {
        guard let client = request.client, Self.isMedia(request.path) else { return }
        let now = clock.monotonicMicroseconds()
        lastSeen.withLock { $0[client + " " + (request.header("User-Agent") ?? "")] = now }
    }

    static func isMedia(_ path: String) -> Bool {
        path.hasSuffix(".m3u8") || path.hasSuffix(".m4s") || path.hasSuffix(".mp4")
    }

    var count: Int {
        let oldest = clock.monotonicMicroseconds() - Self.windowSeconds * 1_000_000
        return lastSeen.withLock { seen in
            seen = seen.filter { $0.value >= oldest }
            return seen.count
        }
    }
}
