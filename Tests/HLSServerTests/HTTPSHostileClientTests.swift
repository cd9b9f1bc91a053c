import Foundation
import HLSBase
import HLSTestSupport
import Testing
@testable import HLSServer

/// Hostile HTTP/2 clients, written with Python's h2 (Tests/Tools/h2_hostile.py), against the HTTPS
/// server in this process, each beside a viewer asking for a playlist every 100 ms on its own
/// connection: the attacker is closed (or its extra streams refused) soon, the process's memory
/// barely grows, the viewer is answered every time and quickly, and one line says why.
@Suite(.serialized) struct HTTPSHostileClientTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        /// What the one line about the attacker says.
        let logged: String
        /// The attacker is closed within this many seconds (the idle timeout is 2 s).
        let closedWithinSeconds: Double
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "rapid-reset", logged: "closed: rapid stream resets (CVE-2023-44487)", closedWithinSeconds: 1.5),
        Case(name: "continuation", logged: "closed: CONTINUATION flood (CVE-2024-28182)", closedWithinSeconds: 1.5),
        Case(name: "hpack-bomb", logged: "(HPACK bomb)", closedWithinSeconds: 1.5),
        Case(name: "settings-flood", logged: "closed: SETTINGS or PING flood", closedWithinSeconds: 1.5),
        Case(name: "ping-flood", logged: "closed: SETTINGS or PING flood", closedWithinSeconds: 1.5),
        Case(name: "zero-window", logged: "closed: flow-control window kept shut 2 s", closedWithinSeconds: 3.5),
        Case(name: "stream-limit", logged: "refused streams over the limit of 100", closedWithinSeconds: 3.5),
    ]
    static let idleTimeoutSeconds = 2
    static let rssGrowthLimitKB = 32 * 1024
    static let viewerLatencyLimitMilliseconds = 500.0

    let directory: URL
    let certificate: PEMPair

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("https-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        certificate = try HTTPSServerTests.certificate(in: directory, name: "hostile")
    }

    /// A playlist-sized answer and a 1 MB segment, both from memory.
    static func handler() -> HTTPServer.Handler {
        let playlist = Array(("#EXTM3U\n" + String(repeating: "#EXTINF:2.000,\nseg/000001.m4s\n", count: 20)).utf8)
        let segment = [UInt8](repeating: 0x5a, count: 1 << 20)
        return { request in
            switch request.path {
            case "/playlist.m3u8":
                return .now(HTTPResponse(status: 200, headers: [("Content-Type", "application/vnd.apple.mpegurl")],
                                         body: .bytes(playlist)))
            case "/segment.m4s":
                return .now(HTTPResponse(status: 200, headers: [("Content-Type", "video/iso.segment")], body: .bytes(segment)))
            default:
                return .now(.text(404, "not found"))
            }
        }
    }

    @Test(arguments: cases) func aHostileClientIsClosedWhileAViewerKeepsBeingAnswered(_ hostile: Case) throws {
        let lines = Locked<[String]>([])
        var configuration = HTTPServer.Configuration(address: try ListenAddress("127.0.0.1:0"))
        configuration.tls = (certificate.key, certificate.certificate)
        configuration.idleTimeoutSeconds = Self.idleTimeoutSeconds
        configuration.refusalLog = { line in lines.withLock { $0.append(line) } }
        let server = try HTTPSServer(configuration: configuration, handler: Self.handler())
        defer { server.stop() }

        let tool = ExternalTools.toolsDirectory.appendingPathComponent("h2_hostile.py").path
        // Debian's python3-h2 is for Debian's Python.
        let result = try ExternalTools.run("/usr/bin/python3", [tool, "127.0.0.1:\(server.port)", "--case", hostile.name,
                                                                "--path", "/segment.m4s", "--viewer-path", "/playlist.m3u8",
                                                                "--seconds", "4",
                                                                "--pid", String(ProcessInfo.processInfo.processIdentifier)],
                                           timeoutSeconds: 30)
        try #require(result.succeeded, "\(result.stdout)\(result.stderr)")
        let line = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let report = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")

        #expect(report["closed"] as? Bool == true, "\(line)")
        let seconds = try #require(report["seconds"] as? Double)
        #expect(seconds < hostile.closedWithinSeconds, "\(line)")
        if hostile.name == "stream-limit" {
            #expect((report["refusedStreams"] as? Int ?? 0) >= 300 - Int(HTTP2Session.streamLimit), "\(line)")
        }
        let rss = try #require(report["rssKB"] as? [Int])
        #expect(rss[1] - rss[0] < Self.rssGrowthLimitKB, "\(line)")
        let viewer = try #require(report["viewer"] as? [String: Any])
        #expect(viewer["failures"] as? Int == 0, "\(line)")
        #expect((viewer["requests"] as? Int ?? 0) >= 20, "a request every 100 ms for 4 s: \(line)")
        #expect((viewer["maxMilliseconds"] as? Double ?? .infinity) < Self.viewerLatencyLimitMilliseconds, "\(line)")

        let logged = lines.withLock { $0 }
        #expect(logged.count == 1, "\(logged)")
        #expect(logged.first?.hasPrefix("https: 127.0.0.1:") == true && logged.first?.contains(hostile.logged) == true,
                "\(logged)")
        #expect(server.refusedCount == 1)
        // Counted in /metrics too, server-wide.
        let metrics = ServerMetrics()
        metrics.follow(server)
        #expect(metrics.render().contains("\nhlscap_http_refused_connections_total 1\n"), "\(metrics.render())")
    }
}
