import Foundation
import HLSTestSupport
import Testing

/// contrib/systemd/hlscap-live.service and the fleet's hlscap@.service: systemd accepts them, and
/// their command lines run (the fleet's against a real object store, in PublishS3StoreTests).
@Suite struct ServiceUnitTests {
    static let unit = ExternalTools.repositoryRoot.appendingPathComponent("contrib/systemd/hlscap-live.service")
    static let fleetUnit = ExternalTools.repositoryRoot.appendingPathComponent("contrib/systemd/hlscap@.service")

    static func execStart(_ unit: URL = unit) throws -> [String] {
        let text = try String(contentsOf: unit, encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        return line.dropFirst("ExecStart=".count).split(separator: " ").map(String.init)
    }

    /// The template is verified as an instance of it, hlscap@front.service.
    @Test(arguments: [(unit, "hlscap-live.service"), (fleetUnit, "hlscap@front.service")])
    func systemdVerifiesTheUnit(unit: URL, name: String) throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The unit names the installed binary; verify it against the one just built.
        let text = try String(contentsOf: unit, encoding: .utf8)
            .replacingOccurrences(of: "/usr/local/bin/hlscap", with: try ExternalTools.hlscapBinary().path)
        let copy = directory.appendingPathComponent(name)
        try text.write(to: copy, atomically: true, encoding: .utf8)
        let result = try ExternalTools.run("systemd-analyze", ["verify", copy.path])
        #expect(result.succeeded && result.stderr.isEmpty, "\(result.stdout)\(result.stderr)")
    }

    @Test func itsCommandLineRuns() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var arguments = Array(try Self.execStart().dropFirst())
        #expect(arguments.contains("--resume") && arguments.contains("--low-latency"))
        // The same options with the test source, a temporary directory and any free port.
        let out = try #require(arguments.firstIndex(of: "--out"))
        arguments[out + 1] = directory.appendingPathComponent("live").path
        let serve = try #require(arguments.firstIndex(of: "--serve"))
        arguments[serve + 1] = "127.0.0.1:0"
        for _ in 0..<2 {
            let result = try ExternalTools.runHlscap(arguments + ["--video", "test", "--audio", "test",
                                                                  "--size", "320x180", "--duration", "3"])
            #expect(result.succeeded, "\(result.stderr)")
        }
        let playlist = try String(contentsOf: directory.appendingPathComponent("live/playlist.m3u8"), encoding: .utf8)
        #expect(playlist.contains("#EXT-X-DISCONTINUITY"), "the restart resumed the stream: \(playlist)")
        try ExternalTools.validateStream(directory.appendingPathComponent("live"))
    }
}
