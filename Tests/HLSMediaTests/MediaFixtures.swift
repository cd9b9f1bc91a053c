import Foundation

/// Small media files made at test time with the ffmpeg command-line tools, in a fresh
/// temporary directory per test.
struct MediaFixtures {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("HLSMediaTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func removeAll() { try? FileManager.default.removeItem(at: directory) }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    static let videoSource = ["-f", "lavfi", "-i", "testsrc=size=160x120:rate=25:duration=2"]
    static let audioSource = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=2"]
    /// One keyframe a second exactly, so tests know where the keyframes are.
    static let videoEncoding = ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-g", "25", "-keyint_min", "25",
                                "-sc_threshold", "0"]
    static let audioEncoding = ["-c:a", "aac", "-ac", "2"]

    /// 2 s of H.264 160x120 at 25 fps and stereo AAC at 44.1 kHz; `extra` goes before the output.
    @discardableResult
    func makeAudioVideo(_ name: String, extra: [String] = []) throws -> String {
        try ffmpeg(Self.videoSource + Self.audioSource + Self.videoEncoding + Self.audioEncoding + extra, output: name)
    }

    @discardableResult
    func makeVideoOnly(_ name: String) throws -> String {
        try ffmpeg(Self.videoSource + Self.videoEncoding, output: name)
    }

    @discardableResult
    func makeAudioOnly(_ name: String) throws -> String {
        try ffmpeg(Self.audioSource + Self.audioEncoding, output: name)
    }

    /// Copies `source` into another container without re-encoding.
    @discardableResult
    func remux(_ source: String, to name: String, extra: [String] = []) throws -> String {
        try ffmpeg(["-i", source, "-c", "copy"] + extra, output: name)
    }

    /// Writes the first `percent` of `source`, plus `extraBytes`, to `name`.
    @discardableResult
    func truncate(_ source: String, to name: String, percent: Int, extraBytes: Int = 0) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: source))
        return try write(data.prefix(data.count * percent / 100 + extraBytes), to: name)
    }

    @discardableResult
    func write(_ data: Data, to name: String) throws -> String {
        try data.write(to: URL(fileURLWithPath: path(name)))
        return path(name)
    }

    @discardableResult
    func ffmpeg(_ arguments: [String], output name: String) throws -> String {
        _ = try run("/usr/bin/ffmpeg", ["-nostdin", "-hide_banner", "-loglevel", "error", "-y"] + arguments + [path(name)])
        return path(name)
    }
}

struct ToolFailure: Error, CustomStringConvertible {
    var description: String
}

/// Runs a tool to completion and returns its standard output.
func run(_ executable: String, _ arguments: [String]) throws -> Data {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    let errors = FileManager.default.temporaryDirectory.appendingPathComponent("tool-\(UUID().uuidString).log")
    _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: errors) }
    process.standardOutput = output
    process.standardError = try FileHandle(forWritingTo: errors)
    try process.run()
    // Read before waiting so a full pipe cannot stall the tool.
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        let errorText = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        throw ToolFailure(description: "\(executable) \(arguments.joined(separator: " ")) failed: \(errorText)")
    }
    return data
}
