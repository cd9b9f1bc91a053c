import Foundation
import HLSKit
import HLSTestSupport

/// A stream that the built hlscap wrote into a fresh temporary directory, read back for checks.
struct PackagedStream {
    let directory: URL
    let result: ProcessResult

    /// Packages `Fixtures/<fixture>` with `hlscap file … --copy` plus `extraArguments`.
    static func package(_ fixture: String, extraArguments: [String] = [],
                        environment: [String: String] = [:]) throws -> PackagedStream {
        let directory = try temporaryDirectory()
        let input = ExternalTools.fixturesDirectory.appendingPathComponent(fixture).path
        let result = try ExternalTools.runHlscap(["file", input, "--copy", "--out", directory.path] + extraArguments,
                                                 environment: environment)
        guard result.succeeded else { throw ExternalToolError.failed(command: "hlscap file \(fixture)", result: result) }
        try ExternalTools.validateStream(directory)
        return PackagedStream(directory: directory, result: result)
    }

    /// A fresh folder for one test, inside the test process's own folder, which goes when the process exits:
    /// a folder kept for the whole run (a stream packaged once and read by many tests) or left by a failed
    /// test is not left behind in the temporary directory.
    static func temporaryDirectory() throws -> URL {
        let url = processDirectory.appendingPathComponent(UUID().uuidString, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private static let processDirectoryPrefix = "hlscap-tests-"

    /// `hlscap-tests-<pid>`; made once, removed at exit with everything in it. Those of test processes that
    /// are gone without exiting (killed at a time limit) are removed when the next one starts.
    private static let processDirectory: URL = {
        let parent = FileManager.default.temporaryDirectory
        for name in (try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? [] {
            guard name.hasPrefix(processDirectoryPrefix), let pid = pid_t(name.dropFirst(processDirectoryPrefix.count)),
                  kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(at: parent.appendingPathComponent(name))
        }
        atexit { try? FileManager.default.removeItem(at: PackagedStream.ownProcessDirectory) }
        return ownProcessDirectory
    }()

    private static var ownProcessDirectory: URL {
        FileManager.default.temporaryDirectory.appendingPathComponent(processDirectoryPrefix + "\(getpid())", isDirectory: true)
    }

    var playlistURL: URL { directory.appendingPathComponent("playlist.m3u8") }

    func playlist() throws -> MediaPlaylist {
        try MediaPlaylist.parse(String(contentsOf: playlistURL, encoding: .utf8))
    }

    func bytes(_ relativePath: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(relativePath)))
    }

    /// Every file below the directory, as sorted relative paths.
    func files() -> [String] {
        Self.files(below: directory)
    }

    static func files(below directory: URL) -> [String] {
        let base = directory.standardizedFileURL.path + "/"
        let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey])
        var paths: [String] = []
        while let url = enumerator?.nextObject() as? URL {
            if (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true {
                paths.append(String(url.standardizedFileURL.path.dropFirst(base.count)))
            }
        }
        return paths.sorted()
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}
