import Foundation
import HLSTestSupport

/// An hlscap process that serves a stream (`hlscap live --serve`, `hlscap serve`) on a port the
/// kernel chose, and the URLs it prints.
struct ServedStream {
    let process: BackgroundProcess
    /// `http://127.0.0.1:PORT/`.
    let base: URL
    /// The playlist viewers open.
    let entry: URL

    static let startupSeconds = 30.0

    /// Starts hlscap with `arguments` (which listen on port 0) and waits for its "serving … at URL" line.
    static func start(_ arguments: [String]) throws -> ServedStream {
        let process = try ExternalTools.startHlscap(arguments)
        let deadline = Date(timeIntervalSinceNow: startupSeconds)
        while Date() < deadline && process.isRunning {
            if let line = process.stderr.split(separator: "\n").first(where: { $0.contains("hlscap: serving ") }),
               let range = line.range(of: " at "),
               let entry = URL(string: String(line[range.upperBound...].split(separator: " ")[0])) {
                let base = entry.deletingLastPathComponent()
                return ServedStream(process: process, base: base, entry: entry)
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        process.send(SIGKILL)
        throw ServeFailure(message: "hlscap printed no serving line: \(process.stderr)")
    }

    struct ServeFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    var port: Int { base.port ?? 0 }

    /// Fetches `path` (relative to the base); the status, headers and body.
    func get(_ path: String, headers: [String: String] = [:], method: String = "GET")
        throws -> (status: Int, headers: [String: String], body: Data) {
        try Self.fetch(URL(string: base.absoluteString + path)!, headers: headers, method: method)
    }

    /// One request with curl, which sends paths as they are (`--path-as-is`) and accepts any certificate.
    static func fetch(_ url: URL, headers: [String: String] = [:], method: String = "GET")
        throws -> (status: Int, headers: [String: String], body: Data) {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("fetch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let head = work.appendingPathComponent("head")
        let body = work.appendingPathComponent("body")
        var arguments = ["-s", "-k", "--path-as-is", "-D", head.path, "-o", body.path, "--max-time", "20",
                         method == "HEAD" ? "-I" : "-X", url.absoluteString]
        if method != "HEAD" { arguments.insert(method, at: arguments.count - 1) }
        for (name, value) in headers { arguments += ["-H", "\(name): \(value)"] }
        let result = try ExternalTools.run("curl", arguments, timeoutSeconds: 30)
        guard let headText = try? String(contentsOf: head, encoding: .utf8), !headText.isEmpty else {
            throw ServeFailure(message: "no HTTP answer from \(url): \(result.stderr)")
        }
        let lines = headText.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, fields, (try? Data(contentsOf: body)) ?? Data())
    }

    /// The Prometheus samples of `/metrics`, read with the reference parser.
    func metrics() throws -> [String: Double] {
        let result = try ExternalTools.run("python3", [
            ExternalTools.toolsDirectory.appendingPathComponent("metrics_check.py").path,
            base.appendingPathComponent("metrics").absoluteString,
        ], timeoutSeconds: 30)
        guard result.succeeded,
              let samples = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Double] else {
            throw ServeFailure(message: "/metrics: \(result.stdout) \(result.stderr)")
        }
        return samples
    }

    /// Resident memory (kB) and open file descriptors of the serving process.
    func footprint() -> (residentKilobytes: Int, descriptors: Int) {
        let pid = process.processIdentifier
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let resident = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
            .flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[1]) } ?? 0
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count ?? 0
        return (resident, descriptors)
    }
}

/// The hls.js module the latency tests play with (scripts/fetch-hlsjs.sh, run by `make deps`).
enum HLSJS {
    static var path: String { ExternalTools.repositoryRoot.appendingPathComponent(".build/hlsjs/hls.js").path }
}
