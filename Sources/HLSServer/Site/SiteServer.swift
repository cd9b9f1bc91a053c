import Foundation
import HLSBase
import HLSKit

/// Many streams behind one server: `/NAME/…` is stream NAME, served by its own `StreamServer` as if
/// at the root (playlists, segments, LL-HLS, snapshot, recordings, its player page); `/` is an index
/// of every stream, `/api/v1/streams` and `/api/v1/streams/NAME` say how they are doing as JSON, and
/// `/metrics` has every stream's series with a `stream` label.
///
/// Streams come and go while the server runs (`add`, `remove`). A stream's paths open to its own
/// credentials and to the whole server's; the index, the API and `/metrics` to the server's.
public final class SiteServer: Sendable {
    public struct NameError: Error, CustomStringConvertible, Equatable {
        public var description: String
    }

    private struct Mounted {
        var name: String
        var server: StreamServer
        var status: any StreamStatusSource
        var viewers: ViewerCount
        var order: Int
    }

    /// Counts the requests for the index, the API and `/metrics`, and the connections.
    public let metrics: ServerMetrics
    /// The whole server's credentials; nil lets anyone see the index.
    public let access: AccessControl?
    private let clock: any Scheduler
    /// In their order, then as they were added: the index lists them so.
    private let streams = Locked<[Mounted]>([])

    static let apiPath = "/api/v1/streams"
    static let reloadPath = "/api/v1/reload"

    /// What a reload answers: whether it was done, and JSON saying what it did or why it was refused.
    public struct ReloadAnswer: Sendable {
        public var accepted: Bool
        public var json: String

        public init(accepted: Bool, json: String) {
            self.accepted = accepted
            self.json = json
        }
    }

    /// `POST /api/v1/reload`'s token and what it does; nil answers 404.
    private let reloading = Locked<(token: String, reload: @Sendable () -> ReloadAnswer)?>(nil)
    /// Names a stream cannot take: the server's own paths.
    static let reservedNames: Set<String> = ["api", "metrics", "index"]
    static let longestName = 64

    public init(metrics: ServerMetrics = ServerMetrics(), access: AccessControl? = nil, clock: any Scheduler = SystemClock()) {
        self.metrics = metrics
        self.access = access
        self.clock = clock
    }

    /// Serves `server`'s stream below `/NAME/`; its own `access` still applies, and the server's opens it too.
    /// The index lists streams by `order` (a configuration file's), those of one order as they were added:
    /// streams that start at once are added in whatever order they get going. `replacing` a stream of that
    /// name (one that restarts) serves the new one from now on; without it, the name must be free.
    public func add(_ name: String, server: StreamServer, status: any StreamStatusSource,
                    order: Int = .max, replacing: Bool = false) throws(NameError) {
        try Self.check(name)
        let mounted = Mounted(name: name, server: server.mounted(at: name, siteAccess: access), status: status,
                              viewers: ViewerCount(clock: clock), order: order)
        let added = streams.withLock { streams in
            if let index = streams.firstIndex(where: { $0.name == name }) {
                guard replacing else { return false }
                streams.remove(at: index)
            }
            streams.insert(mounted, at: streams.firstIndex { $0.order > order } ?? streams.endIndex)
            return true
        }
        guard added else { throw NameError(description: "a stream named \(name) is served already") }
    }

    /// Stops serving a stream; false when none has that name. Requests it holds are answered as its
    /// LL-HLS stream times them out.
    @discardableResult
    public func remove(_ name: String) -> Bool {
        streams.withLock { streams in
            guard let index = streams.firstIndex(where: { $0.name == name }) else { return false }
            streams.remove(at: index)
            return true
        }
    }

    /// Answers `POST /api/v1/reload` with `reload()`, called off the server's thread, for a request that
    /// presents `token` (as a bearer token or `?token=`): 200 when it was done, 422 when it was refused,
    /// with its JSON.
    public func answerReloads(token: String, _ reload: @escaping @Sendable () -> ReloadAnswer) {
        reloading.withLock { $0 = (token, reload) }
    }

    /// The streams served, in the index's order.
    public var names: [String] { streams.withLock { $0.map(\.name) } }

    /// A name is one path component: 1 to 64 ASCII letters, digits, `-` and `_`, none of the server's own.
    public static func check(_ name: String) throws(NameError) {
        guard !name.isEmpty, name.count <= longestName, name.allSatisfy(StreamServer.isPlain) else {
            throw NameError(description: "the stream name \"\(name)\" is not 1 to \(longestName) letters, digits, - and _")
        }
        guard !reservedNames.contains(name.lowercased()) else {
            throw NameError(description: "the stream name \(name) is one of the server's own paths (\(reservedNames.sorted().joined(separator: ", "))); choose another")
        }
    }

    private func stream(_ name: Substring) -> Mounted? {
        streams.withLock { streams in streams.first { $0.name == name } }
    }

    public func handle(_ request: HTTPRequest) -> HTTPReply {
        let components = request.path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        // "/cam1/…" splits into "", "cam1/…".
        if components.count == 2, components[0].isEmpty, !components[1].isEmpty {
            let first = components[1].prefix { $0 != "/" }
            if let mounted = stream(first) {
                guard first.count < components[1].count else {
                    // The player page's relative URLs need the folder's slash.
                    var location = request.path + "/"
                    if !request.query.isEmpty { location += "?" + Self.query(request.query) }
                    return answer(.page, HTTPResponse(status: 308, headers: [("Location", location)] + ServerHeaders.noStore))
                }
                return counted(mounted.server.handle(request), request: request, viewers: mounted.viewers)
            }
        }
        if request.path == Self.reloadPath { return handleReload(request) }
        switch request.method {
        case "GET", "HEAD":
            break
        case "OPTIONS":
            return answer(.page, HTTPResponse(status: 204, headers: ServerHeaders.cors + [
                ("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS"),
                ("Access-Control-Allow-Headers", "Authorization"), ("Access-Control-Max-Age", "86400"),
            ]))
        default:
            return answer(.other, .text(405, "only GET and HEAD", headers: [("Allow", "GET, HEAD, OPTIONS")] + ServerHeaders.noStore))
        }
        let kind: ServerMetrics.RequestKind = request.path == "/metrics" ? .metrics : .page
        if let access, access.protects(request.path) {
            switch access.decide(request) {
            case .missing:
                return answer(kind, .text(401, "credentials required", headers: [("WWW-Authenticate", "Bearer")] + ServerHeaders.noStore))
            case .refused:
                return answer(kind, .text(403, "forbidden", headers: ServerHeaders.noStore))
            case .allowed:
                break
            }
        }
        switch request.path {
        case "/", "/index.html":
            return answer(.page, HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8"),
                                                                     ("Cache-Control", "no-cache")] + ServerHeaders.cors,
                                              body: .bytes(Array(SiteIndexPage.html(statuses(), credentials: Self.credentials(request.query)).utf8))))
        case "/metrics":
            return answer(.metrics, HTTPResponse(status: 200, headers: [
                ("Content-Type", "text/plain; version=0.0.4; charset=utf-8"), ("Cache-Control", "no-store"),
            ], body: .bytes(Array(renderMetrics().utf8))))
        case Self.apiPath, Self.apiPath + "/":
            return answer(.page, json(SiteAPI.list(statuses())))
        case let path where path.hasPrefix(Self.apiPath + "/"):
            let name = path.dropFirst(Self.apiPath.count + 1)
            guard let entry = statuses().first(where: { $0.name == name }) else {
                return answer(.page, .text(404, "no stream named \(name)", headers: ServerHeaders.noStore))
            }
            return answer(.page, json(SiteAPI.one(entry)))
        default:
            return answer(.other, .text(404, "not found", headers: ServerHeaders.noStore))
        }
    }

    private func handleReload(_ request: HTTPRequest) -> HTTPReply {
        guard let (token, reload) = reloading.withLock({ $0 }) else {
            return answer(.other, .text(404, "not found", headers: ServerHeaders.noStore))
        }
        guard request.method == "POST" else {
            return answer(.other, .text(405, "only POST", headers: [("Allow", "POST")] + ServerHeaders.noStore))
        }
        switch AccessControl(token: token).decide(request) {
        case .missing:
            return answer(.page, .text(401, "credentials required", headers: [("WWW-Authenticate", "Bearer")] + ServerHeaders.noStore))
        case .refused:
            return answer(.page, .text(403, "forbidden", headers: ServerHeaders.noStore))
        case .allowed:
            // Off the server's thread: a reload waits for the one before it, while every other request goes on.
            return .later { [metrics] respond in
                DispatchQueue.global().async {
                    let outcome = reload()
                    let status = outcome.accepted ? 200 : 422
                    metrics.count(.page, status: status)
                    respond(HTTPResponse(status: status, headers: [
                        ("Content-Type", "application/json"), ("Cache-Control", "no-store"),
                    ], body: .bytes(Array(outcome.json.utf8))))
                }
            }
        }
    }

    /// A client that was answered with media is watching; one refused is not.
    private func counted(_ reply: HTTPReply, request: HTTPRequest, viewers: ViewerCount) -> HTTPReply {
        switch reply {
        case .now(let response):
            if response.status < 400 { viewers.note(request) }
            return reply
        case .later(let register):
            return .later { respond in
                register { response in
                    if response.status < 400 { viewers.note(request) }
                    respond(response)
                }
            }
        }
    }

    private func answer(_ kind: ServerMetrics.RequestKind, _ response: HTTPResponse) -> HTTPReply {
        metrics.count(kind, status: response.status)
        return .now(response)
    }

    private func json(_ text: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")]
                        + ServerHeaders.cors, body: .bytes(Array(text.utf8)))
    }

    /// A stream as the index, the API and the metrics show it.
    struct Entry {
        var name: String
        var status: StreamStatus
        var viewers: Int
        var recordings: Bool
        fileprivate var metrics: ServerMetrics
    }

    /// Every stream's status, read outside the table's lock: a source may take its own locks.
    func statuses() -> [Entry] {
        streams.withLock { $0 }.map {
            Entry(name: $0.name, status: $0.status.status(), viewers: $0.viewers.count,
                  recordings: $0.server.recordings != nil, metrics: $0.server.metrics)
        }
    }

    /// The server's connections and requests, then every stream's series with its name as the first label.
    func renderMetrics() -> String {
        var families = metrics.families().filter { SiteMetrics.serverFamilies.contains($0.name) }
        for entry in statuses() {
            let own = entry.metrics.families().filter { !ServerMetrics.serverWideFamilies.contains($0.name) }
            families = SiteMetrics.merge(families, own + SiteMetrics.families(entry.status, viewers: entry.viewers),
                                         stream: entry.name)
        }
        return ServerMetrics.render(families)
    }

    /// The credentials a request brought in its query (a token, a signed URL's fields), for the links of
    /// the page it gets.
    static func credentials(_ query: [String: String]) -> String {
        Self.query(query.filter { ["token", "prefix", "expires", "signature"].contains($0.key) })
    }

    /// Query arguments as a URL's query, in order of name.
    static func query(_ arguments: [String: String]) -> String {
        arguments.sorted { $0.key < $1.key }
            .map { PercentEncoding.encode($0.key) + "=" + PercentEncoding.encode($0.value) }.joined(separator: "&")
    }
}
