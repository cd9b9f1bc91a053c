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

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("hlscap-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
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
