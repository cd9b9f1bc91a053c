import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What a finished external process left behind.
public struct ProcessResult: Sendable {
    public let exitStatus: Int32
    public let stdout: String
    public let stderr: String
    /// True when the process was killed because it outlived its timeout.
    public let timedOut: Bool

    public var succeeded: Bool { exitStatus == 0 && !timedOut }

    public init(exitStatus: Int32, stdout: String, stderr: String, timedOut: Bool) {
        self.exitStatus = exitStatus
        self.stdout = stdout
        self.stderr = stderr
        self.timedOut = timedOut
    }
}

/// Why an end-to-end helper could not do its job. Thrown errors fail the calling test.
public enum ExternalToolError: Error, CustomStringConvertible {
    case missingTool(String)
    case missingFile(String)
    case hlscapNotBuilt(String)
    case failed(command: String, result: ProcessResult)
    case unexpectedOutput(command: String, output: String)

    public var description: String {
        switch self {
        case .missingTool(let name):
            return "\(name) is not installed or not on PATH; run `make test`, which installs the test dependencies"
        case .missingFile(let path):
            return "\(path) does not exist; run the tests from a full checkout with `make test`"
        case .hlscapNotBuilt(let path):
            return "no hlscap binary at \(path); run `make test` (it builds first) or set HLSCAP_BIN"
        case .failed(let command, let result):
            let reason = result.timedOut ? "timed out" : "exited with \(result.exitStatus)"
            return "`\(command)` \(reason):\n\(result.stderr)\(result.stdout)"
        case .unexpectedOutput(let command, let output):
            return "`\(command)` printed something unexpected: \(output)"
        }
    }
}

/// Runs external programs (the built hlscap, ffmpeg, ffprobe, the Python checkers in
/// Tests/Tools) for end-to-end tests.
public enum ExternalTools {
    public static let defaultTimeoutSeconds: Double = 120
    /// Time a process gets to exit after SIGTERM before it is killed outright.
    static let terminationGraceSeconds: Double = 5
    /// Headroom over chromium_play.py's own timeout for starting and stopping Chromium.
    static let chromiumStartupSeconds: Double = 45

    /// The checkout's root: the nearest directory above this file that holds Package.swift.
    public static let repositoryRoot: URL = {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
                return directory
            }
            directory.deleteLastPathComponent()
        }
        fatalError("no Package.swift above \(#filePath)")
    }()

    public static var fixturesDirectory: URL { repositoryRoot.appendingPathComponent("Fixtures") }
    public static var toolsDirectory: URL { repositoryRoot.appendingPathComponent("Tests/Tools") }

    /// The hlscap under test: `$HLSCAP_BIN`, else `.build/debug/hlscap` in the checkout.
    public static func hlscapBinary() throws -> URL {
        let binary = ProcessInfo.processInfo.environment["HLSCAP_BIN"].map { URL(fileURLWithPath: $0) }
            ?? repositoryRoot.appendingPathComponent(".build/debug/hlscap")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw ExternalToolError.hlscapNotBuilt(binary.path)
        }
        return binary
    }

    /// Absolute path of `name` found on PATH.
    public static func locate(_ name: String) throws -> URL {
        let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in searchPath.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) {
                return candidate
            }
        }
        throw ExternalToolError.missingTool(name)
    }

    /// Runs `executable` (a path, or a name looked up on PATH) and waits for it; a process
    /// that outlives `timeoutSeconds` gets SIGTERM, then SIGKILL, and reports `timedOut`.
    public static func run(
        _ executable: String,
        _ arguments: [String],
        timeoutSeconds: Double = defaultTimeoutSeconds,
        currentDirectory: URL? = nil,
        environment: [String: String] = [:]
    ) throws -> ProcessResult {
        let executableURL = executable.contains("/") ? URL(fileURLWithPath: executable) : try locate(executable)
        // Output goes to files rather than pipes: a chatty child can never block on a full pipe.
        let outputDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("external-tool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: outputDirectory) }
        let stdoutURL = outputDirectory.appendingPathComponent("stdout")
        let stderrURL = outputDirectory.appendingPathComponent("stderr")
        try Data().write(to: stdoutURL)
        try Data().write(to: stderrURL)
        let stdoutHandle = try FileHandle(forWritingTo: stdoutURL)
        let stderrHandle = try FileHandle(forWritingTo: stderrURL)
        defer {
            try? stdoutHandle.close()
            try? stderrHandle.close()
        }

        let process = Process()
        process.executableURL = executableURL
        process.arguments = arguments
        process.currentDirectoryURL = currentDirectory
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = stdoutHandle
        process.standardError = stderrHandle
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()

        var timedOut = false
        if exited.wait(timeout: .now() + timeoutSeconds) == .timedOut {
            timedOut = true
            process.terminate()
            if exited.wait(timeout: .now() + terminationGraceSeconds) == .timedOut {
                kill(process.processIdentifier, SIGKILL)
                exited.wait()
            }
        }
        return ProcessResult(
            exitStatus: process.terminationStatus,
            stdout: String(decoding: try Data(contentsOf: stdoutURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: stderrURL), as: UTF8.self),
            timedOut: timedOut
        )
    }

    /// Runs the built hlscap with `arguments`.
    public static func runHlscap(_ arguments: [String], timeoutSeconds: Double = defaultTimeoutSeconds,
                                 environment: [String: String] = [:]) throws -> ProcessResult {
        try run(hlscapBinary().path, arguments, timeoutSeconds: timeoutSeconds, currentDirectory: repositoryRoot,
                environment: environment)
    }

    /// Number of frames ffprobe decodes in `stream` (an ffprobe stream specifier: "v:0", "a:0").
    public static func ffprobeFrameCount(path: String, stream: String = "v:0") throws -> Int {
        try ffprobeCount(path: path, stream: stream, counting: "frames")
    }

    /// Number of packets ffprobe reads in `stream`, decoded or not (an edit list may hide some).
    public static func ffprobePacketCount(path: String, stream: String = "v:0") throws -> Int {
        try ffprobeCount(path: path, stream: stream, counting: "packets")
    }

    private static func ffprobeCount(path: String, stream: String, counting unit: String) throws -> Int {
        let arguments = ["-v", "error", "-count_\(unit)", "-select_streams", stream,
                         "-show_entries", "stream=nb_read_\(unit)", "-of", "csv=p=0", path]
        let result = try run("ffprobe", arguments)
        let command = "ffprobe " + arguments.joined(separator: " ")
        guard result.succeeded else { throw ExternalToolError.failed(command: command, result: result) }
        // The HLS demuxer lists each stream twice, under its program and on its own: same count. A stream
        // with side data (a display matrix) gets an empty field after it.
        let output = result.stdout.split(separator: "\n").first.map(String.init) ?? ""
        guard let count = Int(output.trimmingCharacters(in: CharacterSet(charactersIn: ","))) else {
            throw ExternalToolError.unexpectedOutput(command: command, output: output + result.stderr)
        }
        return count
    }

    /// Everything ffmpeg complains about while decoding all of `path`; empty for a clean stream.
    /// An MD5 of each packet of the first video stream of `path`, in order, as ffmpeg reads it without
    /// decoding: two outputs hold the same pictures as they came exactly when these match.
    public static func videoPacketDigests(path: String) throws -> [String] {
        let result = try run("ffmpeg", ["-v", "error", "-i", path, "-map", "0:v:0", "-c", "copy", "-f", "framemd5", "-"])
        guard result.succeeded else { throw ExternalToolError.failed(command: "ffmpeg -f framemd5 \(path)", result: result) }
        return result.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }
            .compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    public static func ffmpegDecodeErrors(path: String) throws -> String {
        let result = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "null", "-"])
        if result.timedOut {
            throw ExternalToolError.failed(command: "ffmpeg -v error -i \(path) -f null -", result: result)
        }
        if result.exitStatus != 0 && result.stderr.isEmpty {
            return "ffmpeg exited with \(result.exitStatus)"
        }
        return result.stderr
    }

    /// A/V sync of a stream that flashes white while a beep starts (Tests/Tools/av_sync.py): `ok` when
    /// every flash has its beep within `maxOffsetMilliseconds`; `report` is the checker's JSON line.
    public static func avSync(path: String, maxOffsetMilliseconds: Double = 10,
                              minimumPairs: Int = 3) throws -> (ok: Bool, report: String) {
        let script = toolsDirectory.appendingPathComponent("av_sync.py")
        let result = try run("python3", [script.path, path, "--max-offset-ms", String(maxOffsetMilliseconds),
                                         "--min-pairs", String(minimumPairs)], timeoutSeconds: 600)
        return (result.succeeded, (result.stdout + result.stderr).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Time from the earliest presentation time to the end of the last-presented packet of `stream`
    /// ("v:0", "a:0"), in seconds: the stream's duration as its container states it. The HLS demuxer
    /// leaves some packet durations unknown: then the last one counts as the average spacing.
    public static func presentationSpanSeconds(path: String, stream: String) throws -> Double {
        let arguments = ["-v", "error", "-select_streams", stream, "-show_entries", "packet=pts_time,duration_time",
                         "-of", "csv=p=0", path]
        let result = try run("ffprobe", arguments)
        let command = "ffprobe " + arguments.joined(separator: " ")
        guard result.succeeded else { throw ExternalToolError.failed(command: command, result: result) }
        let packets = result.stdout.split(separator: "\n").compactMap { line -> (start: Double, duration: Double?)? in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard let start = fields.first.flatMap({ Double($0) }) else { return nil }
            return (start, fields.count > 1 ? Double(fields[1]) : nil)
        }.sorted { $0.start < $1.start }
        guard let first = packets.first, let last = packets.last, packets.count > 1 else {
            throw ExternalToolError.unexpectedOutput(command: command, output: "fewer than two timed packets")
        }
        let spacing = (last.start - first.start) / Double(packets.count - 1)
        return last.start + (last.duration ?? spacing) - first.start
    }

    /// Width and height of the first video stream as ffprobe decodes it.
    public static func ffprobeVideoSize(path: String) throws -> (width: Int, height: Int) {
        let arguments = ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                         "-of", "csv=p=0", path]
        let result = try run("ffprobe", arguments)
        let command = "ffprobe " + arguments.joined(separator: " ")
        guard result.succeeded else { throw ExternalToolError.failed(command: command, result: result) }
        let first = result.stdout.split(separator: "\n").first.map(String.init) ?? ""
        let numbers = first.split(separator: ",").compactMap { Int($0) }
        guard numbers.count == 2 else { throw ExternalToolError.unexpectedOutput(command: command, output: first) }
        return (numbers[0], numbers[1])
    }

    /// What GStreamer decoded from `directory`/playlist.m3u8 (Tests/Tools/gst_decode.py, playbin3 over
    /// loopback HTTP). `ok` is false when gst-launch failed, warned, or decoded nothing; a damaged stream
    /// may still decode short, so compare the counts too.
    public struct GStreamerDecode: Sendable {
        public let ok: Bool
        public let videoFrames: Int
        public let audioSeconds: Double
        public let report: String
    }

    public static func gstreamerDecode(directory: URL, timeoutSeconds: Double = 60) throws -> GStreamerDecode {
        _ = try locate("gst-launch-1.0")
        let decoded = try runJSONTool("gst_decode.py", [directory.path, "--timeout", String(timeoutSeconds)],
                                      timeoutSeconds: timeoutSeconds + terminationGraceSeconds)
        return GStreamerDecode(ok: decoded.ok, videoFrames: decoded.report["video_frames"] as? Int ?? 0,
                               audioSeconds: decoded.report["audio_seconds"] as? Double ?? 0, report: decoded.text)
    }

    /// Runs a Tests/Tools script whose last line of output is a JSON object: `ok` when it exits 0,
    /// `report` that object (empty when there is none), `text` its line and stderr, for messages.
    public static func runJSONTool(_ script: String, _ arguments: [String], timeoutSeconds: Double = 120)
        throws -> (ok: Bool, report: [String: Any], text: String) {
        let result = try run("python3", [toolsDirectory.appendingPathComponent(script).path] + arguments,
                             timeoutSeconds: timeoutSeconds)
        let line = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        let report = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        return (result.succeeded, report, line + result.stderr)
    }

    /// Plays `directory`/playlist.m3u8 in headless Chromium (native HLS) through
    /// Tests/Tools/chromium_play.py, which serves the directory on a free loopback port.
    /// `ok` is true when the video played to the playlist's end; `report` is the checker's
    /// JSON line (and its stderr).
    public static func chromiumPlays(
        directory: URL,
        playlist: String = "playlist.m3u8",
        live: Bool = false,
        throttleKilobitsPerSecond: Int? = nil,
        rate: Double? = nil,
        timeoutSeconds: Double = 60
    ) throws -> (ok: Bool, report: String) {
        try chromiumPlays(source: ["--dir", directory.path, "--playlist", playlist]
                            + (throttleKilobitsPerSecond.map { ["--throttle-kbps", String($0)] } ?? [])
                            + (rate.map { ["--rate", String($0)] } ?? []),
                          live: live ? [] : nil, timeoutSeconds: timeoutSeconds)
    }

    /// Plays `directory`/playlist.m3u8 while it grows: `ok` when Chromium followed the playlist
    /// for `liveSeconds` of media, past what it listed when playback began (chromium_play.py --live).
    public static func chromiumPlaysLive(
        directory: URL,
        playlist: String = "playlist.m3u8",
        liveSeconds: Double,
        throttleKilobitsPerSecond: Int? = nil,
        timeoutSeconds: Double = 60
    ) throws -> (ok: Bool, report: String) {
        try chromiumPlays(source: ["--dir", directory.path, "--playlist", playlist]
                            + (throttleKilobitsPerSecond.map { ["--throttle-kbps", String($0)] } ?? []),
                          live: ["--live-seconds", String(liveSeconds)], timeoutSeconds: timeoutSeconds)
    }

    /// The picture sizes Chromium showed, in order, from a chromium_play.py report, and the media
    /// seconds it played after the last change.
    public static func playedSizes(_ report: String) -> (heights: [Int], secondsAfterLastSwitch: Double) {
        let line = report.split(separator: "\n").first { $0.hasPrefix("{") }.map(String.init) ?? "{}"
        let fields = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        let sizes = fields["sizes"] as? [[String: Any]] ?? []
        let heights = sizes.compactMap { ($0["size"] as? [Int])?.last }
        return (heights, fields["playedAfterSwitch"] as? Double ?? 0)
    }

    /// Plays the playlist at `url`, on a server that also serves the checker's player page
    /// (serve.py and Tests/Tools/origin_server.py do).
    /// `playerPage`: where that page is when the server does not serve it (an object store's bucket).
    public static func chromiumPlays(
        url: String,
        playerPage: String? = nil,
        live: Bool = false,
        timeoutSeconds: Double = 60
    ) throws -> (ok: Bool, report: String) {
        try chromiumPlays(source: ["--url", url] + (playerPage.map { ["--player-page", $0] } ?? []),
                          live: live ? [] : nil, timeoutSeconds: timeoutSeconds)
    }

    /// `live`: nil for VOD, else chromium_play.py's live options after `--live`.
    private static func chromiumPlays(
        source: [String],
        live: [String]?,
        timeoutSeconds: Double
    ) throws -> (ok: Bool, report: String) {
        _ = try locate("chromium")
        let script = toolsDirectory.appendingPathComponent("chromium_play.py")
        guard FileManager.default.fileExists(atPath: script.path) else {
            throw ExternalToolError.missingFile(script.path)
        }
        var arguments = [script.path] + source + ["--timeout", String(timeoutSeconds)]
        if let live {
            arguments += ["--live"] + live
        }
        // A throttled run may take a second attempt (chromium_play.py says why).
        let attempts = source.contains("--throttle-kbps") ? 2.0 : 1.0
        let result = try run("python3", arguments, timeoutSeconds: (timeoutSeconds + chromiumStartupSeconds) * attempts)
        let report = (result.stdout + result.stderr).trimmingCharacters(in: .whitespacesAndNewlines)
        return (result.succeeded, result.timedOut ? "timed out: \(report)" : report)
    }
}

/// A process left running in the background (hlscap live, a checker) until it exits by itself or
/// is signalled; its output goes to files, read back at any time.
public final class BackgroundProcess: @unchecked Sendable {
    public let command: String
    private let process = Process()
    private let outputDirectory: URL
    /// Signalled once on exit, and signalled again by every wait that takes it, so it stays open.
    private let exited = DispatchSemaphore(value: 0)

    /// Starts `executable` (a path, or a name looked up on PATH) with `environment` added to this
    /// process's own.
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                currentDirectory: URL = ExternalTools.repositoryRoot) throws {
        command = ([executable] + arguments).joined(separator: " ")
        outputDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("background-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        let stdoutHandle = try Self.outputHandle(outputDirectory.appendingPathComponent("stdout"))
        let stderrHandle = try Self.outputHandle(outputDirectory.appendingPathComponent("stderr"))
        defer {
            try? stdoutHandle.close()
            try? stderrHandle.close()
        }
        process.executableURL = executable.contains("/") ? URL(fileURLWithPath: executable)
            : try ExternalTools.locate(executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.currentDirectoryURL = currentDirectory
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = stdoutHandle
        process.standardError = stderrHandle
        process.terminationHandler = { [exited] _ in exited.signal() }
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: outputDirectory)
    }

    private static func outputHandle(_ url: URL) throws -> FileHandle {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        return try FileHandle(forWritingTo: url)
    }

    public var isRunning: Bool { process.isRunning }
    public var processIdentifier: Int32 { process.processIdentifier }
    public var stdout: String { output("stdout") }
    public var stderr: String { output("stderr") }

    private func output(_ name: String) -> String {
        (try? String(contentsOf: outputDirectory.appendingPathComponent(name), encoding: .utf8)) ?? ""
    }

    /// Sends `signal` (SIGINT, SIGTERM, SIGKILL) unless the process has already exited.
    public func send(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Waits up to `timeoutSeconds` for the process to exit by itself; nil while it still runs.
    public func waitForExit(timeoutSeconds: Double) -> ProcessResult? {
        guard exited.wait(timeout: .now() + timeoutSeconds) == .success else { return nil }
        exited.signal()
        return ProcessResult(exitStatus: process.terminationStatus, stdout: stdout, stderr: stderr, timedOut: false)
    }

    /// Waits for the exit; a process that outlives `timeoutSeconds` is killed and reports `timedOut`.
    public func finish(timeoutSeconds: Double) -> ProcessResult {
        if let result = waitForExit(timeoutSeconds: timeoutSeconds) { return result }
        send(SIGKILL)
        exited.wait()
        exited.signal()
        return ProcessResult(exitStatus: process.terminationStatus, stdout: stdout, stderr: stderr, timedOut: true)
    }
}

/// What Tests/Tools/live_poller.py saw of a live stream directory.
public struct LivePollerReport: Decodable, Sendable {
    public struct Removal: Decodable, Sendable {
        public let uri: String
        public let leftAt: Double
        public let goneAt: Double?
        public let retention: Double
    }

    public let polls: Int
    public let versions: Int
    public let segments: Int
    public let firstSequence: Int?
    public let lastSequence: Int?
    public let targetDuration: Int?
    public let endList: Bool
    public let removals: [Removal]
    /// The init section and every segment the poller saw, in order, as one fMP4.
    public let concatenated: String?
    public let violations: [String]
}

extension ExternalTools {
    /// Starts the built hlscap in the background.
    public static func startHlscap(_ arguments: [String], environment: [String: String] = [:]) throws -> BackgroundProcess {
        try BackgroundProcess(hlscapBinary().path, arguments, environment: environment)
    }

    /// Starts Tests/Tools/live_poller.py on `directory`: it copies into `copyDirectory` and ends by
    /// itself once the playlist has ENDLIST and removed segments have outlived their retention time.
    public static func startLivePoller(directory: URL, copyDirectory: URL,
                                       timeoutSeconds: Double = defaultTimeoutSeconds) throws -> BackgroundProcess {
        let script = toolsDirectory.appendingPathComponent("live_poller.py")
        return try BackgroundProcess("python3", [
            script.path, directory.path, "--report", copyDirectory.path + ".json",
            "--copy-dir", copyDirectory.path, "--timeout", String(timeoutSeconds)])
    }

    /// The report of a poller started by `startLivePoller`, once it has exited.
    public static func livePollerReport(copyDirectory: URL) throws -> LivePollerReport {
        let data = try Data(contentsOf: URL(fileURLWithPath: copyDirectory.path + ".json"))
        return try JSONDecoder().decode(LivePollerReport.self, from: data)
    }

    /// Checks a stream that is no longer written: the playlist parses, every file it lists is
    /// complete, and it has ENDLIST (one read of live_poller.py).
    public static func checkFinishedLiveStream(directory: URL, copyDirectory: URL) throws -> LivePollerReport {
        let poller = try startLivePoller(directory: directory, copyDirectory: copyDirectory)
        let result = poller.finish(timeoutSeconds: defaultTimeoutSeconds)
        guard !result.timedOut else { throw ExternalToolError.failed(command: poller.command, result: result) }
        try validateStream(directory)
        return try livePollerReport(copyDirectory: copyDirectory)
    }
}

extension ExternalTools {
    /// A self-signed certificate for 127.0.0.1 with a P-256 key (quick to make), as NAME.pem and
    /// NAME.key in `directory`; NAME is also its common name, so two made apart tell apart.
    public static func selfSignedCertificate(in directory: URL, name: String = "server") throws -> (certificate: String, key: String) {
        let key = directory.appendingPathComponent("\(name).key").path
        let certificate = directory.appendingPathComponent("\(name).pem").path
        let made = try run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                       "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=\(name)",
                                       "-addext", "subjectAltName=IP:127.0.0.1"])
        guard made.succeeded else { throw ExternalToolError.failed(command: "openssl req", result: made) }
        return (certificate, key)
    }
}

/// A certificate authority made by openssl in a folder (NAME.pem, NAME.key) that signs certificates for
/// 127.0.0.1 and answers for them as an OCSP responder would, in files, as `openssl ocsp -respout` does.
public struct TestAuthority {
    /// The authority's own certificate.
    public let certificate: String
    private let key: String
    private let directory: URL

    public init(in directory: URL, name: String = "authority") throws {
        self.directory = directory
        key = directory.appendingPathComponent("\(name).key").path
        certificate = directory.appendingPathComponent("\(name).pem").path
        try Self.openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                          "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=\(name)"])
    }

    /// A certificate for 127.0.0.1 with a P-256 key, signed by the authority: NAME.pem holds it then the
    /// authority's certificate (as Let's Encrypt's fullchain.pem), NAME.key its key; NAME is its common name.
    public func issue(name: String) throws -> (certificate: String, key: String) {
        let leafKey = directory.appendingPathComponent("\(name).key").path
        let request = directory.appendingPathComponent("\(name).csr").path
        let leaf = directory.appendingPathComponent("\(name).leaf.pem").path
        let chain = directory.appendingPathComponent("\(name).pem").path
        try Self.openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", leafKey,
                          "-out", request, "-subj", "/CN=\(name)", "-addext", "subjectAltName=IP:127.0.0.1"])
        try Self.openssl(["x509", "-req", "-in", request, "-CA", certificate, "-CAkey", key, "-days", "1",
                          "-copy_extensions", "copy", "-out", leaf])
        try (String(contentsOfFile: leaf, encoding: .utf8) + String(contentsOfFile: certificate, encoding: .utf8))
            .write(toFile: chain, atomically: true, encoding: .utf8)
        return (chain, leafKey)
    }

    /// The authority's OCSP response about the first certificate in `certificateFile`, signed by the authority
    /// itself, with nextUpdate a day on: NAME.der. `revoked` says the certificate is revoked, else good;
    /// `madeDaysAgo` makes it as if then (faketime), so that 2 gives one that expired a day ago.
    public func ocspResponse(for certificateFile: String, name: String, revoked: Bool = false,
                             madeDaysAgo: Int = 0) throws -> String {
        let serial = try ExternalTools.run("openssl", ["x509", "-noout", "-serial", "-in", certificateFile])
        guard serial.succeeded, let hex = serial.stdout.split(separator: "=").last?.trimmingCharacters(in: .whitespacesAndNewlines) else {
            throw ExternalToolError.failed(command: "openssl x509 -serial", result: serial)
        }
        // openssl ca's index: status, expiry, revocation time, serial, file, subject.
        let index = directory.appendingPathComponent("\(name).index").path
        let formatter = DateFormatter()
        formatter.dateFormat = "yyMMddHHmmss'Z'"
        formatter.timeZone = TimeZone(identifier: "UTC")
        let expiry = formatter.string(from: Date().addingTimeInterval(86_400))
        let status = revoked ? "R\t\(expiry)\t\(formatter.string(from: Date()))" : "V\t\(expiry)\t"
        try "\(status)\t\(hex)\tunknown\t/CN=\(name)\n".write(toFile: index, atomically: true, encoding: .utf8)
        let response = directory.appendingPathComponent("\(name).der").path
        let ocsp = ["ocsp", "-index", index, "-rsigner", certificate, "-rkey", key, "-CA", certificate,
                    "-issuer", certificate, "-cert", certificateFile, "-ndays", "1", "-respout", response]
        try Self.openssl(ocsp, at: madeDaysAgo == 0 ? nil : "\(madeDaysAgo) days ago")
        return response
    }

    /// `at` runs it under faketime, at a time such as "2 days ago".
    private static func openssl(_ arguments: [String], at: String? = nil) throws {
        let result = try at.map { try ExternalTools.run("faketime", [$0, "openssl"] + arguments) }
            ?? ExternalTools.run("openssl", arguments)
        guard result.succeeded else { throw ExternalToolError.failed(command: "openssl \(arguments[0])", result: result) }
    }
}

/// A certificate (with its chain) and its key as the PEM text a server is given, read from the files
/// openssl wrote, and where the certificate file is for a client to trust.
public struct PEMPair: Sendable {
    public let key: String
    public let certificate: String
    public let certificatePath: String

    public init(files: (certificate: String, key: String)) throws {
        certificatePath = files.certificate
        key = try String(contentsOfFile: files.key, encoding: .utf8)
        certificate = try String(contentsOfFile: files.certificate, encoding: .utf8)
    }
}
