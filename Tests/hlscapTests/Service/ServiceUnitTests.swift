import Foundation
import HLSTestSupport
import Testing

/// contrib/systemd/hlscap-live.service, the fleet's hlscap@.service and hlscap run's hlscap.service: systemd
/// accepts them, and their command lines run (the fleet's against a real object store, in PublishS3StoreTests;
/// hlscap run's file and its reload in RunCheckTests and RunReloadTests). `make install` puts them in place.
@Suite struct ServiceUnitTests {
    static let unit = ExternalTools.repositoryRoot.appendingPathComponent("contrib/systemd/hlscap-live.service")
    static let fleetUnit = ExternalTools.repositoryRoot.appendingPathComponent("contrib/systemd/hlscap@.service")
    static let runUnit = ExternalTools.repositoryRoot.appendingPathComponent("contrib/systemd/hlscap.service")

    static func execStart(_ unit: URL = unit) throws -> [String] {
        let text = try String(contentsOf: unit, encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        return line.dropFirst("ExecStart=".count).split(separator: " ").map(String.init)
    }

    /// The template is verified as an instance of it, hlscap@front.service.
    @Test(arguments: [(unit, "hlscap-live.service"), (fleetUnit, "hlscap@front.service"), (runUnit, "hlscap.service")])
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

    @Test func theRunServiceReloadsWithSIGHUP() throws {
        #expect(try Self.execStart(Self.runUnit) == ["/usr/local/bin/hlscap", "run", "/etc/hlscap/hlscap.yml"])
        let text = try String(contentsOf: Self.runUnit, encoding: .utf8)
        #expect(text.split(separator: "\n").contains("ExecReload=/bin/kill -HUP $MAINPID"))
    }

    /// `make install`'s copying, with the debug binary instead of the release build it makes first.
    @Test func installPutsTheBinaryTheUnitAndTheExampleBelowDESTDIR() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func install() throws -> ProcessResult {
            try ExternalTools.run("make", ["-s", "-C", ExternalTools.repositoryRoot.path, "install-files",
                                           "HLSCAP_INSTALL_BIN=" + (try ExternalTools.hlscapBinary().path),
                                           "DESTDIR=" + directory.path, "PREFIX=/usr"], timeoutSeconds: 60)
        }
        let first = try install()
        try #require(first.succeeded, "\(first.stdout)\(first.stderr)")
        let binary = directory.appendingPathComponent("usr/bin/hlscap")
        #expect(FileManager.default.isExecutableFile(atPath: binary.path))
        let unit = try String(contentsOf: directory.appendingPathComponent("usr/lib/systemd/system/hlscap.service"), encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/bin/hlscap run /etc/hlscap/hlscap.yml\n"), "\(unit)")
        let config = directory.appendingPathComponent("etc/hlscap/hlscap.yml")
        #expect(try Data(contentsOf: config) == Data(contentsOf: ExternalTools.repositoryRoot.appendingPathComponent("contrib/hlscap.yml")))
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("usr/share/doc/hlscap/docs/run.md").path))
        // The installed unit verifies against the installed binary.
        let verified = directory.appendingPathComponent("hlscap.service")
        try unit.replacingOccurrences(of: "/usr/bin/hlscap", with: binary.path).write(to: verified, atomically: true, encoding: .utf8)
        let result = try ExternalTools.run("systemd-analyze", ["verify", verified.path])
        #expect(result.succeeded && result.stderr.isEmpty, "\(result.stdout)\(result.stderr)")
        // A file that is there is the operator's: installing again keeps it.
        try "# edited\n".write(to: config, atomically: true, encoding: .utf8)
        #expect(try install().succeeded)
        #expect(try String(contentsOf: config, encoding: .utf8) == "# edited\n")
    }
}
