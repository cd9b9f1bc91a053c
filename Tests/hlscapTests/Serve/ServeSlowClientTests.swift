import Foundation
import HLSTestSupport
import Testing

/// `hlscap serve` under a slowloris (Tests/Tools/slow_clients.py): a thousand connections that send
/// a request header a byte a second, and others that send nothing.
@Suite(.serialized) struct ServeSlowClientTests {
    /// The JSON report of slow_clients.py, read as numbers.
    struct Report {
        let json: [String: Any]
        let text: String

        func kind(_ name: String, _ field: String) -> Int { (json[name] as? [String: Any])?[field] as? Int ?? -1 }
        func closedAfter(_ name: String, _ field: String) -> Double? {
            ((json[name] as? [String: Any])?["closedAfterSeconds"] as? [String: Any])?[field] as? Double
        }
        /// The most client connections the server held at once: its sockets less those it had before
        /// (the listening one, any it inherited).
        var mostConnectionsHeld: Int {
            let sockets = json["serverSockets"] as? [String: Any]
            return (sockets?["max"] as? Int ?? -1) - (sockets?["before"] as? Int ?? 0)
        }
        var played: Bool { (json["play"] as? [String: Any])?["ok"] as? Bool ?? false }
        var playSeconds: Double { (json["play"] as? [String: Any])?["seconds"] as? Double ?? .infinity }
        var recoverySeconds: Double? { json["recoverySeconds"] as? Double }
    }

    static func slowClients(_ served: ServedStream, _ arguments: [String], ready: URL? = nil) throws -> BackgroundProcess {
        try BackgroundProcess("python3", [ExternalTools.toolsDirectory.appendingPathComponent("slow_clients.py").path,
                                          "127.0.0.1:\(served.port)", "--pid", String(served.process.processIdentifier),
                                          "--play", "/master.m3u8"] + arguments + (ready.map { ["--ready", $0.path] } ?? []))
    }

    static func report(of tool: BackgroundProcess, timeoutSeconds: Double) -> Report {
        let result = tool.finish(timeoutSeconds: timeoutSeconds)
        let line = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let json = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        return Report(json: json, text: line + result.stderr)
    }

    /// With 1,000 connections trickling a header and 20 silent ones attached, a player still starts at
    /// once (the tool's own client and ffprobe); the silent ones are closed at the idle timeout, the
    /// trickling ones, which the idle timeout never closes, at the header deadline; then the server
    /// answers as before.
    @Test func aThousandSlowHeadersNeitherStopAPlayerNorStayForever() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = try ServeCommandTests.packaged([], in: directory)
        let served = try ServedStream.start(["serve", stream.path, "--listen", "127.0.0.1:0", "--max-clients", "1100",
                                             "--idle-timeout", "3", "--header-timeout", "8"])
        defer { served.process.send(SIGTERM) }
        let ready = directory.appendingPathComponent("ready")
        let tool = try Self.slowClients(served, ["--trickle", "1000", "--silent", "20", "--hold", "11"], ready: ready)
        let deadline = Date(timeIntervalSinceNow: 15)
        while !FileManager.default.fileExists(atPath: ready.path) && Date() < deadline && tool.isRunning {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let started = Date()
        let probe = try ExternalTools.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0",
                                                      served.base.appendingPathComponent("master.m3u8").absoluteString],
                                          timeoutSeconds: 20)
        let probeSeconds = Date().timeIntervalSince(started)
        #expect(probe.succeeded && probe.stdout.contains("video") && probe.stdout.contains("audio"), "\(probe.stderr)")
        #expect(probeSeconds < 3, "ffprobe took \(probeSeconds) s with the slow clients attached")

        let report = Self.report(of: tool, timeoutSeconds: 40)
        #expect(report.kind("trickle", "opened") == 1000 && report.kind("silent", "opened") == 20, "\(report.text)")
        #expect(report.mostConnectionsHeld >= 1020, "all were attached at once: \(report.text)")
        #expect(report.played && report.playSeconds < 3, "\(report.text)")
        #expect(report.kind("silent", "closed") == 20, "\(report.text)")
        #expect((report.closedAfter("silent", "min") ?? 0) >= 2 && (report.closedAfter("silent", "max") ?? 99) < 6,
                "the silent ones close at the idle timeout: \(report.text)")
        #expect(report.kind("trickle", "closed") == 1000, "\(report.text)")
        #expect((report.closedAfter("trickle", "min") ?? 0) >= 7 && (report.closedAfter("trickle", "max") ?? 99) < 10.5,
                "the trickling ones outlive the idle timeout and close at the header deadline: \(report.text)")
        #expect((report.recoverySeconds ?? 99) < 2, "\(report.text)")
        #expect(served.process.isRunning)
    }

    /// With --max-clients 50, 1,000 silent connections: the server holds 50 sockets, never more, and
    /// the player waits; once they go, it answers at once.
    @Test func maxClientsIsHeldToAndTheServerRecovers() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = try ServeCommandTests.packaged([], in: directory)
        let served = try ServedStream.start(["serve", stream.path, "--listen", "127.0.0.1:0", "--max-clients", "50"])
        defer { served.process.send(SIGTERM) }
        let tool = try Self.slowClients(served, ["--silent", "1000", "--hold", "4", "--probe-timeout", "2"])
        let report = Self.report(of: tool, timeoutSeconds: 40)
        #expect(report.kind("silent", "opened") + report.kind("silent", "failed") == 1000, "\(report.text)")
        #expect(report.mostConnectionsHeld == 50, "\(report.text)")
        #expect(!report.played, "a 51st client waits: \(report.text)")
        #expect((report.recoverySeconds ?? 99) < 2, "\(report.text)")
        #expect(try served.get("master.m3u8").status == 200)
        #expect(served.process.isRunning)
    }
}
