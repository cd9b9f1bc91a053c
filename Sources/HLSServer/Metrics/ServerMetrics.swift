import HLSBase
import HLSKit

/// Counters for `GET /metrics`, in the Prometheus text exposition format (version 0.0.4).
///
/// The server counts its own requests here; the stream's figures (frames, segments, uploads) come from
/// whoever follows the stream, as it reports them (`report`).
public final class ServerMetrics: Sendable {
    /// One metric family: a name, its help line, counter or gauge, and samples by label set.
    public struct Family: Sendable {
        public enum Kind: String, Sendable {
            case counter, gauge
        }

        public var name: String
        public var help: String
        public var kind: Kind
        public var samples: [(labels: [(String, String)], value: Double)]

        public init(name: String, help: String, kind: Kind, samples: [(labels: [(String, String)], value: Double)]) {
            self.name = name
            self.help = help
            self.kind = kind
            self.samples = samples
        }

        public init(name: String, help: String, kind: Kind, value: Double) {
            self.init(name: name, help: help, kind: kind, samples: [([], value)])
        }
    }

    /// What a request was for, as counted.
    public enum RequestKind: String, Sendable, CaseIterable {
        case playlist, blockingPlaylist = "blocking_playlist", part, segment, initSection = "init", page, metrics, picture, other
    }

    private struct Counts {
        var requests: [RequestKind: Int] = [:]
        var statuses: [Int: Int] = [:]
        var parts = 0
        var waiting = 0
        var waited = 0
        var picturesMade = 0
    }

    /// Connections are the whole HTTP server's, never one stream's.
    static let connectionsFamily = "hlscap_http_connections"
    static let refusedFamily = "hlscap_http_refused_connections_total"
    static let lateHeadersFamily = "hlscap_http_late_header_connections_total"
    /// The families of the server as a whole, not of one stream.
    static let serverWideFamilies: Set<String> = [connectionsFamily, refusedFamily, lateHeadersFamily]

    private struct ServerCounts {
        var connections = 0
        var refused = 0
        var lateHeaders = 0
    }

    private let counts = Locked(Counts())
    /// The server's connection counts, read when the metrics are rendered.
    private let server = Locked<(@Sendable () -> ServerCounts?)?>(nil)
    private let reported = Locked<[Family]>([])

    public init() {}

    func count(_ kind: RequestKind, status: Int) {
        counts.withLock { counts in
            counts.requests[kind, default: 0] += 1
            counts.statuses[status, default: 0] += 1
        }
    }

    func countPart() { counts.withLock { $0.parts += 1 } }
    func countPictureMade() { counts.withLock { $0.picturesMade += 1 } }
    func beginWait() { counts.withLock { $0.waiting += 1 } }
    func endWait() {
        counts.withLock { counts in
            counts.waiting -= 1
            counts.waited += 1
        }
    }

    /// The server whose connections, refusals and late headers are counted (held weakly).
    public func follow(_ http: any HTTPServing) {
        server.withLock {
            $0 = { [weak http] in
                http.map { ServerCounts(connections: $0.connectionCount, refused: $0.refusedCount, lateHeaders: $0.lateHeaderCount) }
            }
        }
    }

    /// The stream's families, rendered after the server's own until the next report replaces them.
    public func report(_ families: [Family]) {
        reported.withLock { $0 = families }
    }

    /// The exposition text.
    public func render() -> String {
        Self.render(families())
    }

    /// Families in the order they are exposed: the server's, then the engine's.
    func families() -> [Family] {
        let counts = counts.withLock { $0 }
        let serverCounts = server.withLock { $0 }?() ?? ServerCounts()
        var families = [
            Family(name: "hlscap_http_requests_total", help: "HTTP requests answered, by what they asked for",
                   kind: .counter, samples: RequestKind.allCases.map { ([("kind", $0.rawValue)], Double(counts.requests[$0] ?? 0)) }),
            Family(name: "hlscap_http_responses_total", help: "HTTP responses, by status code", kind: .counter,
                   samples: counts.statuses.keys.sorted().map { ([("code", String($0))], Double(counts.statuses[$0]!)) }),
            Family(name: Self.connectionsFamily, help: "client connections open now", kind: .gauge,
                   value: Double(serverCounts.connections)),
            Family(name: Self.refusedFamily,
                   help: "connections refused or closed as hostile (HTTP/2 floods and resets, too many streams, a window kept shut)",
                   kind: .counter, value: Double(serverCounts.refused)),
            Family(name: Self.lateHeadersFamily, help: "connections closed because their request header came too slowly",
                   kind: .counter, value: Double(serverCounts.lateHeaders)),
            Family(name: "hlscap_blocking_requests_waiting", help: "blocking reloads and part requests held now",
                   kind: .gauge, value: Double(counts.waiting)),
            Family(name: "hlscap_blocking_requests_total", help: "blocking reloads and part requests that were held",
                   kind: .counter, value: Double(counts.waited)),
            Family(name: "hlscap_parts_total", help: "LL-HLS parts made available, every rendition", kind: .counter,
                   value: Double(counts.parts)),
            Family(name: "hlscap_pictures_made_total",
                   help: "JPEGs decoded and encoded for /snapshot.jpg and thumbnails (not those served from the cache)",
                   kind: .counter, value: Double(counts.picturesMade)),
        ]
        families += reported.withLock { $0 }
        return families
    }

    /// Families as exposition text.
    static func render(_ families: [Family]) -> String {
        families.map(render).joined()
    }

    private static func render(_ family: Family) -> String {
        var text = "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) \(family.kind.rawValue)\n"
        for sample in family.samples {
            let labels = sample.labels.isEmpty ? ""
                : "{" + sample.labels.map { "\($0.0)=\"\(escaped($0.1))\"" }.joined(separator: ",") + "}"
            text += "\(family.name)\(labels) \(number(sample.value))\n"
        }
        return text
    }

    private static func escaped(_ value: String) -> String {
        // Label values are names (streams, renditions, kinds): most have nothing to escape.
        guard value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\n") })
        else { return value }
        return value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
