import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `hlscap live --serve --low-latency`, measured from outside: the LL-HLS flows of RFC 8216bis 6.2.5,
/// glass-to-glass latency in Chromium, 200 clients at once, a CDN edge in front, metrics, and other
/// players.
@Suite(.serialized) struct LowLatencyTests {
    static let source = LiveStream.testSource + ["--serve", "127.0.0.1:0"]
    /// How long Chromium is watched, and how long the 200 clients load the server: `make latency` sets
    /// both to 60 s, the test suite runs 15 s of each.
    static let latencySeconds = Int(ProcessInfo.processInfo.environment["HLSCAP_LATENCY_SECONDS"] ?? "") ?? 15
    static let loadSeconds = Int(ProcessInfo.processInfo.environment["HLSCAP_LOAD_SECONDS"] ?? "") ?? 15

    static func summaryFigures(_ stdout: String) -> (segments: Int, frames: Int, dropped: Int)? {
        let words = stdout.split(whereSeparator: { $0 == " " || $0 == "," })
        func number(before word: String) -> Int? {
            words.firstIndex(of: Substring(word)).flatMap { $0 > 0 ? Int(words[$0 - 1]) : nil }
        }
        guard let segments = number(before: "segments"), let frames = number(before: "frames"),
              let dropped = number(before: "dropped") else { return nil }
        return (segments, frames, dropped)
    }

    @Test func theLowLatencyFlowsWorkAndOtherPlayersPlayTheStream() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        // A window long enough for a delta update to skip segments (CAN-SKIP-UNTIL is 12 s).
        let served = try ServedStream.start(["live"] + Self.source + [
            "--low-latency", "--duration", "45", "--window", "12", "--out", stream.path, "--quiet"])
        defer { served.process.send(SIGKILL) }
        let playlist = served.entry.absoluteString

        let flows = try ExternalTools.runJSONTool("llhls_client.py", [playlist, "--parts", "20"])
        #expect(flows.ok, "\(flows.text)")
        let blocking = try #require(flows.report["blocking"] as? [String: Any])
        print("LL-HLS: a blocking reload answered \(blocking["reloadAfterPartMs"] ?? "?") ms at most after its part")
        let hint = try #require(flows.report["hint"] as? [String: Any])
        print("LL-HLS: a hinted part's first bytes came \(hint["firstBytesBeforeWholeMs"] ?? "?") ms before its last (median)")

        // The served playlist is valid LL-HLS, and ffmpeg and GStreamer (which ignore parts) play it.
        let validation = try ExternalTools.validateStream(playlist, ["--sample", "2"])
        #expect(validation.succeeded, "\(validation.stdout)\(validation.stderr)")
        // Followed live: every update keeps the live rules, and blocking reloads answer in time.
        let followed = try ExternalTools.validateStream(playlist, ["--live", "8", "--sample", "1"])
        #expect(followed.succeeded, "\(followed.stdout)\(followed.stderr)")
        let ffmpeg = try ExternalTools.run("ffmpeg", ["-v", "error", "-i", playlist, "-t", "4", "-f", "null", "-"],
                                           timeoutSeconds: 60)
        #expect(ffmpeg.succeeded && ffmpeg.stderr.isEmpty, "\(ffmpeg.stderr)")
        let gstreamer = try ExternalTools.runJSONTool("gst_decode.py", ["--url", playlist, "--timeout", "60"], timeoutSeconds: 70)
        #expect(gstreamer.ok, "\(gstreamer.text)")
        #expect((gstreamer.report["video_frames"] as? Int ?? 0) > 60, "\(gstreamer.text)")

        // After ENDLIST the server stays a moment: its metrics match the summary the run printed.
        var metrics: [String: Double] = [:]
        let deadline = Date(timeIntervalSinceNow: 60)
        while Date() < deadline, served.process.isRunning {
            let text = (try? String(contentsOf: stream.appendingPathComponent("playlist.m3u8"), encoding: .utf8)) ?? ""
            if text.contains("#EXT-X-ENDLIST"), let read = try? served.metrics() { metrics = read }
            if !metrics.isEmpty { break }
            Thread.sleep(forTimeInterval: 0.2)
        }
        let result = served.process.finish(timeoutSeconds: LiveStream.stopSeconds)
        #expect(result.exitStatus == 0, "\(result.stderr)")
        let summary = try #require(Self.summaryFigures(result.stdout), "\(result.stdout)")
        #expect(metrics["hlscap_segments_total"] == Double(summary.segments), "\(metrics)")
        #expect(metrics["hlscap_frames_captured_total{rendition=video}"] == Double(summary.frames), "\(metrics)")
        #expect(metrics["hlscap_frames_dropped_total{rendition=video}"] == Double(summary.dropped), "\(metrics)")
        #expect((metrics["hlscap_parts_total"] ?? 0) >= Double(summary.segments * 5), "\(metrics)")
        #expect((metrics["hlscap_http_requests_total{kind=blocking_playlist}"] ?? 0) >= 20, "\(metrics)")
    }

    /// The players `latencyInChromium` measures: without parts, with the default 334 ms parts over
    /// HTTP/1.1, and with 200 ms parts over https, where Chromium speaks h2.
    enum LatencyCase: String, CaseIterable, Sendable {
        case segments, parts334, parts200OverHTTP2

        var options: [String] {
            switch self {
            case .segments: []
            case .parts334: ["--low-latency"]
            case .parts200OverHTTP2: ["--low-latency", "--part-duration", "0.2"]
            }
        }
    }

    /// Glass to glass: the wall clock minus the capture time of the frame Chromium shows, over
    /// `latencySeconds`.
    @Test(arguments: LatencyCase.allCases)
    func latencyInChromium(_ latencyCase: LatencyCase) throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let https = latencyCase == .parts200OverHTTP2
        var options = latencyCase.options
        var trust: [String] = []
        if https {
            let (certificate, key) = try ExternalTools.selfSignedCertificate(in: directory)
            options += ["--tls-cert", certificate, "--tls-key", key]
            trust = ["--ca-file", certificate]
        }
        let served = try ServedStream.start(["live"] + Self.source + options + [
            "--duration", String(Self.latencySeconds + 30), "--out", directory.appendingPathComponent("stream").path,
            "--quiet"])
        defer { served.process.send(SIGKILL) }
        // Without parts the playlist exists once the first segment does; a player starts then.
        let deadline = Date(timeIntervalSinceNow: 20)
        while Date() < deadline, (try? served.get("playlist.m3u8").status) != 200 { Thread.sleep(forTimeInterval: 0.2) }
        let probe = try ExternalTools.runJSONTool("latency_probe.py", [served.entry.absoluteString, "--hlsjs", HLSJS.path,
                                                                "--seconds", String(Self.latencySeconds)]
                                                    + (https ? ["--any-certificate"] : []),
                                                 timeoutSeconds: Double(Self.latencySeconds) + 90)
        #expect(probe.ok, "\(probe.text)")
        let median = try #require(probe.report["medianSeconds"] as? Double, "\(probe.text)")
        let p95 = try #require(probe.report["p95Seconds"] as? Double, "\(probe.text)")
        let protocols = (probe.report["streamFiles"] as? [String: [String: Int]] ?? [:]).keys.sorted()
        print("glass-to-glass \(latencyCase) (\(protocols.joined(separator: ", "))): median \(median) s, p95 \(p95) s, "
            + "stalls \(probe.report["stalls"] ?? "?") in \(Self.latencySeconds) s; hls.js aims at "
            + "\(probe.report["targetLatencySeconds"] ?? "?") s behind its live edge and plays "
            + "\(probe.report["playerMedianSeconds"] ?? "?") s behind it")
        #expect(!https || protocols == ["h2"], "\(probe.text)")
        try ExternalTools.validateStream(served.entry, ["--sample", "1"] + trust)
        switch latencyCase {
        case .segments: #expect(median <= 6, "\(probe.text)")
        case .parts334: #expect(median <= 1.5 && p95 <= 2.5, "\(probe.text)")
        // The aim is 0.9 s p50 with no stall in 60 s (`make latency`); a loaded test machine is held
        // to what 334 ms parts are held to.
        case .parts200OverHTTP2: #expect(median <= 1.5 && p95 <= 2.5, "\(probe.text)")
        }
    }

    /// 200 clients doing blocking reloads and part GETs for `loadSeconds`: no error, answers within
    /// 50 ms of the part (p99), no frame dropped, memory flat, no descriptor left open.
    @Test func twoHundredClientsDoNotDisturbCapture() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let served = try ServedStream.start(["live"] + Self.source + [
            "--low-latency", "--duration", String(Self.loadSeconds + 20),
            "--out", directory.appendingPathComponent("stream").path, "--quiet"])
        defer { served.process.send(SIGKILL) }
        Thread.sleep(forTimeInterval: 4)
        let before = served.footprint()
        let load = try BackgroundProcess("python3", [
            ExternalTools.toolsDirectory.appendingPathComponent("load_clients.py").path, served.entry.absoluteString,
            "--clients", "200", "--seconds", String(Self.loadSeconds)])
        var resident: [Int] = []
        while load.isRunning {
            resident.append(served.footprint().residentKilobytes)
            Thread.sleep(forTimeInterval: 2)
        }
        let outcome = load.finish(timeoutSeconds: 10)
        let line = outcome.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let report = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        #expect(outcome.succeeded, "\(line) \(outcome.stderr)")
        let waits = try #require(report["waitAfterAvailabilityMs"] as? [String: Any], "\(line)")
        let p99 = try #require(waits["p99"] as? Double, "\(line)")
        print("200 clients: \(report["requests"] ?? 0) requests, wait after availability p50 \(waits["p50"] ?? "?") ms, "
            + "p99 \(p99) ms; resident \(resident.first ?? 0)…\(resident.max() ?? 0) kB")
        #expect(p99 <= 50, "\(line)")
        // Flat: the second half of the run holds no more than the first half's peak and a little.
        let half = resident.count / 2
        let firstPeak = resident.prefix(half).max() ?? 0
        #expect((resident.suffix(from: half).max() ?? 0) <= firstPeak + 8 * 1024, "\(resident)")
        Thread.sleep(forTimeInterval: 1)
        #expect(served.footprint().descriptors <= before.descriptors + 2, "descriptors \(before.descriptors) before")
        // Stopped now rather than at its duration, which only bounds the run.
        served.process.send(SIGINT)
        let result = served.process.finish(timeoutSeconds: 120)
        #expect(result.exitStatus == 0, "\(result.stderr)")
        let summary = try #require(Self.summaryFigures(result.stdout), "\(result.stdout)")
        #expect(summary.dropped == 0, "\(result.stdout)")
        try ExternalTools.validateStream(directory.appendingPathComponent("stream"))
    }

    /// nginx with the shipped configuration in front: 100 clients through it, and hlscap sees about
    /// one request per part and per playlist position, not one per client.
    @Test func aCachingEdgeFansOut() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let served = try ServedStream.start(["live"] + Self.source + [
            "--low-latency", "--duration", "40", "--out", directory.appendingPathComponent("stream").path, "--quiet"])
        defer { served.process.send(SIGKILL) }
        let edge = try BackgroundProcess("python3", [
            ExternalTools.toolsDirectory.appendingPathComponent("cdn_edge.py").path, "--upstream", String(served.port),
            "--logs", directory.appendingPathComponent("edge").path])
        defer { edge.send(SIGTERM) }
        let deadline = Date(timeIntervalSinceNow: 15)
        var edgeURL: String?
        while Date() < deadline, edge.isRunning, edgeURL == nil {
            edgeURL = edge.stdout.split(separator: " ").dropFirst().first.map(String.init)
            Thread.sleep(forTimeInterval: 0.1)
        }
        let base = try #require(edgeURL, "\(edge.stderr)")
        let before = try served.metrics()
        let load = try ExternalTools.runJSONTool("load_clients.py", [base + "playlist.m3u8", "--clients", "100", "--seconds", "20"],
                                         timeoutSeconds: 60)
        #expect(load.ok, "\(load.text)")
        let after = try served.metrics()
        let upstream = { (kind: String) in
            (after["hlscap_http_requests_total{kind=\(kind)}"] ?? 0) - (before["hlscap_http_requests_total{kind=\(kind)}"] ?? 0)
        }
        let parts = Double(load.report["parts"] as? Int ?? 0)
        let clientRequests = Double(load.report["requests"] as? Int ?? 0)
        print("edge: \(Int(clientRequests)) client requests, upstream \(Int(upstream("blocking_playlist"))) blocking "
            + "reloads and \(Int(upstream("part"))) parts for \(Int(parts)) parts")
        #expect(parts > 30 && clientRequests > 100 * parts, "\(load.text)")
        #expect(upstream("part") <= parts * 1.2 && upstream("blocking_playlist") <= parts * 1.2, "\(after)")
        // What the edge hands out is as valid as what the origin does.
        try ExternalTools.validateStream(base + "playlist.m3u8", ["--sample", "1"])
    }

    /// Requests outside the stream, oversized headers and idle connections past the limit are refused
    /// while capture goes on undisturbed.
    @Test func badRequestsAreRefusedWithoutDisturbingCapture() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("secret".utf8).write(to: directory.appendingPathComponent("secret.m3u8"))
        let served = try ServedStream.start(["live"] + Self.source + [
            "--low-latency", "--max-clients", "100", "--duration", "25",
            "--out", directory.appendingPathComponent("stream").path, "--quiet"])
        defer { served.process.send(SIGKILL) }
        Thread.sleep(forTimeInterval: 3)
        for path in ["../secret.m3u8", "%2e%2e/secret.m3u8", "seg/..%2f..%2fsecret.m3u8", ".playlist.m3u8.tmp",
                     "playlist.m3u8/", "seg//000001.m4s", "etc/passwd", "part/000001.99999.m4s"] {
            let answer = try ServedStream.fetch(URL(string: served.base.absoluteString + path)!)
            #expect(answer.status == 404, "\(path): \(answer.status)")
        }
        #expect(try served.get("playlist.m3u8", method: "POST").status == 405)
        let huge = String(repeating: "x", count: 100_000)
        #expect(try served.get("playlist.m3u8", headers: ["X-Padding": huge]).status == 431)
        // 1,000 idle connections beyond the limit of 100.
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        for _ in 0..<1100 {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(served.port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            if connected == 0 { sockets.append(descriptor) } else { close(descriptor) }
        }
        Thread.sleep(forTimeInterval: 2)
        let metrics = try? served.metrics()
        #expect((metrics?["hlscap_http_connections"] ?? 0) <= 101, "connections held: \(String(describing: metrics))")
        sockets.forEach { close($0) }
        sockets = []
        Thread.sleep(forTimeInterval: 1)
        #expect(try served.get("playlist.m3u8").status == 200)
        let result = served.process.finish(timeoutSeconds: LiveStream.stopSeconds)
        #expect(result.exitStatus == 0, "\(result.stderr)")
        let summary = try #require(Self.summaryFigures(result.stdout), "\(result.stdout)")
        #expect(summary.dropped == 0, "\(result.stdout)")
        try ExternalTools.validateStream(directory.appendingPathComponent("stream"))
    }

    /// With a ladder every media playlist reports every other rendition, and the audio rendition has parts.
    @Test func aLadderReportsItsOtherRenditions() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let served = try ServedStream.start(["live"] + Self.source + [
            "--low-latency", "--ladder", "360p,240p", "--duration", "10",
            "--out", directory.appendingPathComponent("stream").path, "--quiet"])
        defer { served.process.send(SIGKILL) }
        Thread.sleep(forTimeInterval: 5)
        let expected = ["360p/playlist.m3u8": ["../240p/playlist.m3u8", "../audio/playlist.m3u8"],
                        "240p/playlist.m3u8": ["../360p/playlist.m3u8", "../audio/playlist.m3u8"],
                        "audio/playlist.m3u8": ["../360p/playlist.m3u8", "../240p/playlist.m3u8"]]
        for (path, reports) in expected {
            let answer = try served.get(path)
            let text = String(decoding: answer.body, as: UTF8.self)
            #expect(answer.status == 200 && text.contains("#EXT-X-PART:"), "\(path): \(text)")
            for report in reports {
                #expect(text.contains("#EXT-X-RENDITION-REPORT:URI=\"\(report)\",LAST-MSN="), "\(path): \(text)")
            }
        }
        try ExternalTools.validateStream(served.base.appendingPathComponent("master.m3u8"), ["--sample", "1"])
        let result = served.process.finish(timeoutSeconds: LiveStream.stopSeconds)
        #expect(result.exitStatus == 0, "\(result.stderr)")
    }

    @Test func httpsServesWithTheGivenCertificate() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (certificate, key) = try ExternalTools.selfSignedCertificate(in: directory)
        let served = try ServedStream.start(["live"] + Self.source + [
            "--low-latency", "--tls-cert", certificate, "--tls-key", key, "--duration", "12",
            "--out", directory.appendingPathComponent("stream").path, "--quiet"])
        defer { served.process.send(SIGKILL) }
        #expect(served.base.scheme == "https")
        // Chromium plays the preview page once the stream has a segment (the page reads its codecs from the
        // stream), its requests over HTTP/2 (ALPN h2).
        let listed = Date().addingTimeInterval(LiveStream.startupSeconds)
        while Date() < listed, (try? served.get("playlist.m3u8"))
            .map({ String(decoding: $0.body, as: UTF8.self).contains("#EXTINF:") }) != true {
            Thread.sleep(forTimeInterval: 0.2)
        }
        let played = try ExternalTools.runJSONTool("latency_probe.py", [served.base.absoluteString, "--preview",
                                                                        "--seconds", "3", "--any-certificate"],
                                                   timeoutSeconds: 60)
        #expect(played.ok, "\(played.text)")
        #expect(played.report["protocols"] as? [String] == ["h2"], "\(played.text)")
        let answer = try served.get("playlist.m3u8")
        #expect(answer.status == 200 && String(decoding: answer.body, as: UTF8.self).contains("#EXT-X-PART-INF"))
        let result = served.process.finish(timeoutSeconds: LiveStream.stopSeconds)
        #expect(result.exitStatus == 0, "\(result.stderr)")
        try ExternalTools.validateStream(directory.appendingPathComponent("stream"))
    }
}
