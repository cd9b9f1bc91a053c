import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HLSBase
import HLSKit
import Testing
@testable import HLSServer

/// Many streams behind one server: each below `/NAME/`, the index at `/`, the API and the metrics.
@Suite struct SiteServerTests {
    /// A status a test sets.
    final class FixedStatus: StreamStatusSource {
        let current: Locked<StreamStatus>

        init(_ status: StreamStatus = StreamStatus(state: .live, input: "test source")) {
            current = Locked(status)
        }

        func status() -> StreamStatus { current.withLock { $0 } }
    }

    /// A stream folder whose playlist names `tag`, so that a test sees which stream answered.
    static func streamFolder(_ tag: String) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("site-\(tag)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("seg"), withIntermediateDirectories: true)
        try "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MAP:URI=\"init.mp4\"\n#EXTINF:2.000,\nseg/\(tag).m4s\n"
            .write(to: root.appendingPathComponent("playlist.m3u8"), atomically: true, encoding: .utf8)
        try Data(tag.utf8).write(to: root.appendingPathComponent("seg/\(tag).m4s"))
        try Data("INIT".utf8).write(to: root.appendingPathComponent("init.mp4"))
        return root
    }

    static func get(_ site: SiteServer, _ path: String, query: [String: String] = [:], headers: [String: String] = [:],
                    client: String? = "192.0.2.1") throws -> HTTPResponse {
        try #require(StreamServerTests.answer(site.handle(HTTPRequest(method: "GET", path: path, query: query,
                                                                       headers: headers, client: client))))
    }

    static func text(_ response: HTTPResponse) -> String { StreamServerAccessTests.text(response) }

    static func body(_ response: HTTPResponse) throws -> [UInt8] {
        switch response.body {
        case .bytes(let bytes): return bytes
        case .file(let path, let offset, let length):
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            return Array(data[offset..<offset + length])
        case .growing(let growing):
            var bytes = [UInt8](repeating: 0, count: growing.count)
            _ = bytes.withUnsafeMutableBytes { growing.read(from: 0, into: $0) }
            return bytes
        }
    }

    static func json(_ response: HTTPResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(try body(response))) as? [String: Any])
    }

    @Test func eachStreamIsServedBelowItsName() throws {
        let one = try Self.streamFolder("one"), two = try Self.streamFolder("two")
        defer { for folder in [one, two] { try? FileManager.default.removeItem(at: folder) } }
        let site = SiteServer()
        try site.add("cam1", server: StreamServer(root: one.path, metrics: ServerMetrics()), status: FixedStatus())
        try site.add("cam2", server: StreamServer(root: two.path, metrics: ServerMetrics()), status: FixedStatus())

        #expect(Self.text(try Self.get(site, "/cam1/playlist.m3u8")).contains("seg/one.m4s"))
        #expect(Self.text(try Self.get(site, "/cam2/playlist.m3u8")).contains("seg/two.m4s"))
        #expect(try Self.body(try Self.get(site, "/cam2/seg/two.m4s")) == Array("two".utf8))
        #expect(try Self.get(site, "/cam1/seg/two.m4s").status == 404)
        // The player page, as `--serve` has it at its root, and its folder's slash added.
        let page = try Self.get(site, "/cam1/")
        #expect(page.status == 200 && Self.text(page).contains("hlscap preview"))
        let bare = try Self.get(site, "/cam1", query: ["token": "a b"])
        #expect(bare.status == 308 && bare.header("Location") == "/cam1/?token=a%20b")
        for path in ["/cam3/playlist.m3u8", "/cam1/../cam2/playlist.m3u8", "/cam1/.hidden.m3u8", "/CAM1/playlist.m3u8", "//cam1/"] {
            #expect(try Self.get(site, path).status == 404, "\(path)")
        }
        // Each stream counts its own requests.
        #expect(try Self.get(site, "/cam1/metrics").status == 200)
    }

    @Test func aBlockingReloadBelowAStreamIsAnsweredWhenItsPartArrives() throws {
        let folder = try Self.streamFolder("ll")
        defer { try? FileManager.default.removeItem(at: folder) }
        let stream = StreamServerTests.stream()
        let site = SiteServer()
        try site.add("cam1", server: StreamServer(root: folder.path, lowLatency: stream, metrics: stream.metrics),
                     status: FixedStatus())
        let reply = site.handle(HTTPRequest(method: "GET", path: "/cam1/playlist.m3u8",
                                            query: ["_HLS_msn": "1", "_HLS_part": "0"]))
        guard case .later = reply else {
            Issue.record("the part does not exist yet: the request must wait")
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) {
            stream.addPart(rendition: 0, position: .init(sequenceNumber: 1, part: 0), durationSeconds: 0.333,
                           independent: true, bytes: [1, 2, 3])
        }
        let response = try #require(StreamServerTests.answer(reply))
        #expect(response.status == 200)
        #expect(Self.text(response).contains("#EXT-X-PART:DURATION=0.333,URI=\"part/000001.0.m4s\""))
        #expect(try Self.body(try Self.get(site, "/cam1/part/000001.0.m4s")) == [1, 2, 3])
    }

    @Test func aStreamOpensToItsOwnTokenAndToTheServers() throws {
        let one = try Self.streamFolder("one"), two = try Self.streamFolder("two")
        defer { for folder in [one, two] { try? FileManager.default.removeItem(at: folder) } }
        let site = SiteServer(access: AccessControl(token: "all", metricsToken: "scrape"))
        try site.add("cam1", server: StreamServer(root: one.path, metrics: ServerMetrics(), access: AccessControl(token: "one")),
                     status: FixedStatus())
        try site.add("cam2", server: StreamServer(root: two.path, metrics: ServerMetrics()), status: FixedStatus())

        #expect(try Self.get(site, "/cam1/playlist.m3u8").status == 401)
        #expect(try Self.get(site, "/cam1/playlist.m3u8", query: ["token": "two"]).status == 403)
        let own = try Self.get(site, "/cam1/playlist.m3u8", query: ["token": "one"])
        #expect(own.status == 200 && Self.text(own).contains("seg/one.m4s?token=one"))
        let servers = try Self.get(site, "/cam1/playlist.m3u8", query: ["token": "all"])
        #expect(servers.status == 200 && Self.text(servers).contains("seg/one.m4s?token=all"))
        // A stream without a token of its own asks for the server's; its neighbour's does not open it.
        #expect(try Self.get(site, "/cam2/playlist.m3u8").status == 401)
        #expect(try Self.get(site, "/cam2/playlist.m3u8", query: ["token": "one"]).status == 403)
        #expect(try Self.get(site, "/cam2/seg/two.m4s", headers: ["authorization": "Bearer all"]).status == 200)
        // The index and the API ask for the server's token, /metrics for its own.
        #expect(try Self.get(site, "/").status == 401)
        #expect(try Self.get(site, "/api/v1/streams", query: ["token": "one"]).status == 403)
        #expect(try Self.get(site, "/api/v1/streams", query: ["token": "all"]).status == 200)
        #expect(try Self.get(site, "/metrics", query: ["token": "all"]).status == 403)
        #expect(try Self.get(site, "/metrics", query: ["token": "scrape"]).status == 200)
        let index = try Self.get(site, "/", query: ["token": "all"])
        #expect(index.status == 200 && Self.text(index).contains("href=\"cam1/?token=all\""))
    }

    @Test func aURLSignedForOneStreamOpensOnlyThatStream() throws {
        let one = try Self.streamFolder("one"), two = try Self.streamFolder("two")
        defer { for folder in [one, two] { try? FileManager.default.removeItem(at: folder) } }
        let now = StreamServerAccessTests.now
        let site = SiteServer(access: AccessControl(signingKey: StreamServerAccessTests.key, clock: { now }))
        try site.add("cam1", server: StreamServer(root: one.path, metrics: ServerMetrics()), status: FixedStatus())
        try site.add("cam2", server: StreamServer(root: two.path, metrics: ServerMetrics()), status: FixedStatus())
        let signed = StreamServerAccessTests.signed("/cam1/")
        #expect(try Self.get(site, "/cam1/seg/one.m4s", query: signed).status == 200)
        #expect(try Self.get(site, "/cam1/", query: signed).status == 200)
        #expect(try Self.get(site, "/cam2/seg/two.m4s", query: signed).status == 403)
    }

    static func status(_ state: StreamStatus.State, bitsPerSecond: Int? = nil) -> StreamStatus {
        StreamStatus(state: state, input: "rtsp://camera.local/stream",
                     renditions: [.init(name: "720p", width: 1280, height: 720, bitsPerSecond: 2_400_000),
                                  .init(name: "audio", bitsPerSecond: 128_000)],
                     bitsPerSecond: bitsPerSecond, lastSegmentAgeSeconds: 1.25, framesDropped: 3,
                     errors: ["the camera did not answer for 5 s"],
                     recording: .init(folder: "/srv/rec/cam1", filesDeleted: 2),
                     publishBacklog: .init(files: 4, mediaSeconds: 8, failures: 1))
    }

    /// Two streams, one recording, one stopped with a reason that needs escaping.
    static func twoCameras() throws -> (SiteServer, [URL]) {
        let one = try Self.streamFolder("one"), two = try Self.streamFolder("two")
        let site = SiteServer()
        try site.add("door", server: StreamServer(root: one.path, metrics: ServerMetrics(),
                                                  recordings: RecordingRanges(root: one.path)),
                     status: FixedStatus(Self.status(.live, bitsPerSecond: 4_200_000)))
        try site.add("yard", server: StreamServer(root: two.path, metrics: ServerMetrics()),
                     status: FixedStatus(Self.status(.stopped(reason: "the disk is full: <no space>"))))
        return (site, [one, two])
    }

    @Test func theIndexShowsEveryStream() throws {
        let (site, folders) = try Self.twoCameras()
        defer { for folder in folders { try? FileManager.default.removeItem(at: folder) } }
        _ = try Self.get(site, "/door/playlist.m3u8", client: "192.0.2.7")
        let page = try Self.get(site, "/")
        #expect(page.status == 200 && page.header("Content-Type") == "text/html; charset=utf-8")
        let html = Self.text(page)
        #expect(html.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"))
        #expect(html.contains("hlscap: 2 streams"))
        let door = try #require(html.range(of: "id=\"stream-door\"")), yard = try #require(html.range(of: "id=\"stream-yard\""))
        #expect(door.lowerBound < yard.lowerBound, "in the order they were added")
        #expect(html.contains("<img src=\"door/snapshot.jpg\""))
        #expect(html.contains("<span class=\"state live\">live</span>"))
        #expect(html.contains("4.2 Mb/s · 1 viewer · last segment 1.2 s ago · 3 frames dropped · 4 files to upload"))
        #expect(html.contains("<span class=\"state stopped\">stopped</span>"))
        #expect(html.contains("the disk is full: &lt;no space&gt;") && !html.contains("<no space>"))
        #expect(html.contains("<a href=\"door/\">watch</a><a href=\"door/#timeline\">recordings</a>"))
        #expect(html.contains("<a href=\"yard/\">watch</a></div>"), "no recordings link without recordings")
        // Nothing is fetched from another site.
        #expect(!html.contains("http://") && !html.contains("https://"))
    }

    @Test func theAPISaysHowEachStreamIsDoing() throws {
        let (site, folders) = try Self.twoCameras()
        defer { for folder in folders { try? FileManager.default.removeItem(at: folder) } }
        let list = try Self.get(site, "/api/v1/streams")
        #expect(list.status == 200 && list.header("Content-Type") == "application/json")
        let streams = try #require(try Self.json(list)["streams"] as? [[String: Any]])
        #expect(streams.map { $0["name"] as? String } == ["door", "yard"])
        let door = streams[0]
        #expect(door["path"] as? String == "/door/" && door["state"] as? String == "live" && door["reason"] is NSNull)
        #expect(door["input"] as? String == "rtsp://camera.local/stream")
        #expect(door["bitsPerSecond"] as? Int == 4_200_000 && door["lastSegmentAgeSeconds"] as? Double == 1.25)
        #expect(door["framesDropped"] as? Int == 3 && door["viewers"] as? Int == 0 && door["recordings"] as? Bool == true)
        #expect(door["errors"] as? [String] == ["the camera did not answer for 5 s"])
        let renditions = try #require(door["renditions"] as? [[String: Any]])
        #expect(renditions.map { $0["name"] as? String } == ["720p", "audio"])
        #expect(renditions[0]["height"] as? Int == 720 && renditions[1]["height"] is NSNull)
        #expect((door["recording"] as? [String: Any])?["folder"] as? String == "/srv/rec/cam1")
        let backlog = try #require(door["publishBacklog"] as? [String: Any])
        #expect(backlog["files"] as? Int == 4 && backlog["mediaSeconds"] as? Double == 8 && backlog["failures"] as? Int == 1)

        let yard = try Self.json(try Self.get(site, "/api/v1/streams/yard"))
        #expect(yard["state"] as? String == "stopped" && yard["reason"] as? String == "the disk is full: <no space>")
        #expect(yard["bitsPerSecond"] is NSNull && yard["recordings"] as? Bool == false)
        #expect(try Self.get(site, "/api/v1/streams/gate").status == 404)
    }

    @Test func viewersAreClientsWhoFetchedMediaLately() throws {
        let folder = try Self.streamFolder("one")
        defer { try? FileManager.default.removeItem(at: folder) }
        let clock = VirtualClock()
        let site = SiteServer(clock: clock)
        try site.add("cam1", server: StreamServer(root: folder.path, metrics: ServerMetrics(), access: AccessControl(token: "t")),
                     status: FixedStatus())
        for (client, agent) in [("192.0.2.1", "a"), ("192.0.2.1", "a"), ("192.0.2.1", "b"), ("2001:db8::2", "a")] {
            _ = try Self.get(site, "/cam1/seg/one.m4s", query: ["token": "t"], headers: ["user-agent": agent], client: client)
        }
        // Refused, or only the page and the picture: not watching.
        _ = try Self.get(site, "/cam1/playlist.m3u8", client: "192.0.2.9")
        _ = try Self.get(site, "/cam1/", query: ["token": "t"], client: "192.0.2.10")
        #expect(site.statuses().first?.viewers == 3)
        clock.advance(bySeconds: 20)
        _ = try Self.get(site, "/cam1/playlist.m3u8", query: ["token": "t"], headers: ["user-agent": "a"], client: "192.0.2.1")
        clock.advance(bySeconds: 15)
        #expect(site.statuses().first?.viewers == 1)
    }

    @Test func namesAreOnePlainPathComponentAndNotTheServersOwn() throws {
        let folder = try Self.streamFolder("one")
        defer { try? FileManager.default.removeItem(at: folder) }
        let site = SiteServer()
        let server = StreamServer(root: folder.path, metrics: ServerMetrics())
        for name in ["", "a/b", "..", "café", "api", "Metrics", String(repeating: "x", count: 65)] {
            #expect(throws: SiteServer.NameError.self, "\(name)") { try site.add(name, server: server, status: FixedStatus()) }
        }
        try site.add("cam-1_a", server: server, status: FixedStatus())
        #expect(throws: SiteServer.NameError(description: "a stream named cam-1_a is served already")) {
            try site.add("cam-1_a", server: server, status: FixedStatus())
        }
        #expect(site.names == ["cam-1_a"])
    }

    @Test func theIndexListsStreamsInTheirOrderWhateverOrderTheyStartIn() throws {
        let folder = try Self.streamFolder("one")
        defer { try? FileManager.default.removeItem(at: folder) }
        let site = SiteServer()
        let server = StreamServer(root: folder.path, metrics: ServerMetrics())
        for (name, order) in [("c", 2), ("a", 0), ("late", Int.max), ("b", 1), ("a2", 0)] {
            try site.add(name, server: server, status: FixedStatus(), order: order)
        }
        #expect(site.names == ["a", "a2", "b", "c", "late"])
        site.remove("b")
        try site.add("b", server: server, status: FixedStatus(), order: 1)
        #expect(site.names == ["a", "a2", "b", "c", "late"])
    }

    /// A stream that restarts (a changed configuration) takes its name over; the one before is no longer served.
    @Test func aRestartedStreamReplacesTheOneBefore() throws {
        let one = try Self.streamFolder("one"), two = try Self.streamFolder("two")
        defer { for folder in [one, two] { try? FileManager.default.removeItem(at: folder) } }
        let site = SiteServer()
        try site.add("cam", server: StreamServer(root: one.path, metrics: ServerMetrics()),
                     status: FixedStatus(StreamStatus(state: .stopped(reason: "restarting"), input: "old")), order: 1)
        try site.add("other", server: StreamServer(root: one.path, metrics: ServerMetrics()), status: FixedStatus(), order: 2)
        try site.add("cam", server: StreamServer(root: two.path, metrics: ServerMetrics()),
                     status: FixedStatus(StreamStatus(state: .live, input: "new")), order: 1, replacing: true)
        #expect(site.names == ["cam", "other"])
        #expect(Self.text(try Self.get(site, "/cam/playlist.m3u8")).contains("seg/two.m4s"))
        #expect(site.statuses().first?.status.input == "new")
    }

    static func metricsSamples(_ text: String) -> [String] {
        text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
    }

    @Test func everyStreamsSeriesHasItsNameAsALabel() throws {
        let (site, folders) = try Self.twoCameras()
        defer { for folder in folders { try? FileManager.default.removeItem(at: folder) } }
        _ = try Self.get(site, "/door/playlist.m3u8")
        _ = try Self.get(site, "/api/v1/streams")
        let text = Self.text(try Self.get(site, "/metrics"))
        let samples = Self.metricsSamples(text)
        #expect(samples.contains("hlscap_http_requests_total{stream=\"door\",kind=\"playlist\"} 1"))
        #expect(samples.contains("hlscap_http_requests_total{stream=\"yard\",kind=\"playlist\"} 0"))
        #expect(samples.contains("hlscap_http_requests_total{kind=\"page\"} 1"), "the server's own requests")
        #expect(samples.contains("hlscap_stream_state{stream=\"yard\",state=\"stopped\"} 1"))
        #expect(samples.contains("hlscap_stream_state{stream=\"door\",state=\"stopped\"} 0"))
        #expect(samples.contains("hlscap_stream_viewers{stream=\"door\"} 1"))
        // One family per name, and every series but the server's own names its stream.
        let declared = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }
        #expect(Set(declared).count == declared.count)
        let serverWide = ["hlscap_http_requests_total{kind=", "hlscap_http_responses_total{code=", "hlscap_http_connections ",
                          "hlscap_http_refused_connections_total ", "hlscap_http_late_header_connections_total "]
        for sample in samples where !serverWide.contains(where: sample.hasPrefix) {
            #expect(sample.contains("{stream=\"door\"") || sample.contains("{stream=\"yard\""), "\(sample)")
        }
        #expect(samples.filter { $0.hasPrefix("hlscap_http_connections") } == ["hlscap_http_connections 0"])
    }

    /// Streams added and removed while clients fetch over HTTP, and `/metrics` read by Prometheus's own parser.
    @Test func streamsComeAndGoWhileTheServerRuns() throws {
        let one = try Self.streamFolder("one"), two = try Self.streamFolder("two")
        defer { for folder in [one, two] { try? FileManager.default.removeItem(at: folder) } }
        let site = SiteServer()
        try site.add("cam1", server: StreamServer(root: one.path, metrics: ServerMetrics()), status: FixedStatus())
        let http = try HTTPServer(configuration: .init(address: try ListenAddress("127.0.0.1:0")), handler: site.handle)
        defer { http.stop() }
        site.metrics.follow(http)
        let base = "http://127.0.0.1:\(http.port)"
        #expect(try Self.fetch(base + "/cam1/playlist.m3u8").status == 200)
        #expect(try Self.fetch(base + "/cam2/playlist.m3u8").status == 404)

        // Clients keep asking for the first stream while the second comes and goes.
        let failures = Locked(0)
        let stop = Locked(false)
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            while !stop.withLock({ $0 }) {
                if (try? Self.fetch(base + "/cam1/seg/one.m4s"))?.status != 200 { failures.withLock { $0 += 1 } }
            }
        }
        for _ in 0..<5 {
            try site.add("cam2", server: StreamServer(root: two.path, metrics: ServerMetrics()), status: FixedStatus())
            let added = try Self.fetch(base + "/cam2/playlist.m3u8")
            #expect(added.status == 200 && added.text.contains("seg/two.m4s"))
            #expect(site.remove("cam2"))
            #expect(try Self.fetch(base + "/cam2/playlist.m3u8").status == 404)
        }
        stop.withLock { $0 = true }
        group.wait()
        #expect(failures.withLock { $0 } == 0)
        #expect(!site.remove("cam2"))
        // The viewer is the test's own client, seen by its address.
        #expect(site.statuses().first?.viewers == 1)

        let parsed = try Self.prometheusParse(base + "/metrics")
        #expect(parsed["hlscap_http_requests_total{kind=segment,stream=cam1}"] as? Double ?? 0 > 0, "\(parsed)")
        #expect(parsed["hlscap_stream_state{state=live,stream=cam1}"] as? Double == 1, "\(parsed)")
        #expect(parsed["hlscap_http_connections"] as? Double ?? 0 >= 1, "\(parsed)")
        #expect(parsed["hlscap_http_refused_connections_total"] as? Double == 0, "\(parsed)")
    }

    @Test func aReloadIsAPostWithTheAdminToken() throws {
        let site = SiteServer(access: AccessControl(token: "all"))
        func post(_ headers: [String: String] = [:], method: String = "POST") throws -> HTTPResponse {
            try #require(StreamServerTests.answer(site.handle(HTTPRequest(method: method, path: "/api/v1/reload",
                                                                          headers: headers))))
        }
        // Without an admin token, there is no reload by HTTP.
        #expect(try post(["authorization": "Bearer all"]).status == 404)
        let reloads = Locked(0)
        site.answerReloads(token: "admin") {
            let count = reloads.withLock { count in
                count += 1
                return count
            }
            return SiteServer.ReloadAnswer(accepted: count == 1, json: count == 1 ? "{\"added\":[]}\n" : "{\"errors\":[]}\n")
        }
        #expect(try post().status == 401)
        // The viewers' token is not the admin's.
        #expect(try post(["authorization": "Bearer all"]).status == 403)
        #expect(try post(["authorization": "Bearer admin"], method: "GET").status == 405)
        #expect(reloads.withLock { $0 } == 0)
        let done = try post(["authorization": "Bearer admin"])
        #expect(done.status == 200 && Self.text(done) == "{\"added\":[]}\n")
        #expect(done.headers.contains { $0.0 == "Content-Type" && $0.1 == "application/json" })
        #expect(try post(["authorization": "Bearer admin"]).status == 422)
        #expect(reloads.withLock { $0 } == 2)
    }

    static func fetch(_ url: String) throws -> (status: Int, text: String) {
        let result = Locked<(Int, String)?>(nil)
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: URL(string: url)!) { data, response, _ in
            result.withLock { $0 = ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data ?? Data(), as: UTF8.self)) }
            done.signal()
        }.resume()
        _ = done.wait(timeout: .now() + 10)
        return try #require(result.withLock { $0 }, "\(url) did not answer")
    }

    /// `/metrics` through `Tests/Tools/metrics_check.py` (prometheus_client's parser): the samples by name and labels.
    static func prometheusParse(_ url: String) throws -> [String: Any] {
        let tool = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tools/metrics_check.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", tool.path, url]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(String(decoding: data, as: UTF8.self))")
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
