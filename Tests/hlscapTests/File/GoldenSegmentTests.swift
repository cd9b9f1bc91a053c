import Foundation
import HLSTestSupport
import Testing

/// Copy mode is a pure function of the input: the bytes of every file must match Fixtures/golden.
/// After an intended muxer change, `make golden` rewrites them.
@Suite struct GoldenSegmentTests {
    /// Fixtures/golden/<name>-<ext>/ holds the stream made from Fixtures/<name>.<ext>.
    static let goldenDirectories: [String] = {
        let golden = ExternalTools.fixturesDirectory.appendingPathComponent("golden")
        return ((try? FileManager.default.contentsOfDirectory(atPath: golden.path)) ?? []).sorted()
    }()

    @Test func everyGoldenStreamHasBeenGenerated() {
        #expect(Self.goldenDirectories.count >= 12, "run `make golden` to write Fixtures/golden")
    }

    @Test(arguments: goldenDirectories)
    func packagingReproducesTheGoldenBytes(golden: String) throws {
        let dash = try #require(golden.lastIndex(of: "-"))
        let fixture = golden[..<dash] + "." + golden[golden.index(after: dash)...]
        let stream = try PackagedStream.package(String(fixture))
        defer { stream.remove() }
        let expectedDirectory = ExternalTools.fixturesDirectory.appendingPathComponent("golden/\(golden)")
        let expectedFiles = PackagedStream.files(below: expectedDirectory)
        #expect(stream.files() == expectedFiles)
        for file in expectedFiles {
            let expected = Array(try Data(contentsOf: expectedDirectory.appendingPathComponent(file)))
            let actual = try stream.bytes(file)
            #expect(actual == expected, "\(golden)/\(file) differs from the golden bytes")
        }
    }
}
