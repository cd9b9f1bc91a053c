import Foundation
import HLSOutput
import HLSTestSupport
import Testing
@testable import HLSKit

/// Each directory of Fixtures/validate breaks one rule alone: the validator must report that rule,
/// at that place, and no other error.
@Suite struct ValidateRuleFixtureTests {
    static let directory = ExternalTools.fixturesDirectory.appendingPathComponent("validate")

    struct Case: Sendable, CustomStringConvertible {
        var rule: String
        /// `file:line` or `file@offset` of one finding the rule must give.
        var location: String
        var description: String { rule }
    }

    static let cases: [Case] = [
        Case(rule: "header", location: "playlist.m3u8:1"),
        Case(rule: "syntax", location: "playlist.m3u8:8"),
        Case(rule: "playlist-kind", location: "master.m3u8:4"),
        Case(rule: "define-name", location: "playlist.m3u8:3"),
        Case(rule: "define-duplicate", location: "playlist.m3u8:4"),
        Case(rule: "variable-undefined", location: "master.m3u8:5"),
        Case(rule: "version", location: "playlist.m3u8:2"),
        Case(rule: "target-duration", location: "playlist.m3u8:8"),
        Case(rule: "media-sequence", location: "playlist.m3u8:10"),
        Case(rule: "discontinuity-sequence", location: "playlist.m3u8:10"),
        Case(rule: "map", location: "playlist.m3u8:8"),
        Case(rule: "byterange", location: "playlist.m3u8:11"),
        Case(rule: "playlist-type", location: "playlist.m3u8:5"),
        Case(rule: "endlist", location: "playlist.m3u8:15"),
        Case(rule: "program-date-time", location: "playlist.m3u8:11"),
        Case(rule: "bandwidth", location: "master.m3u8:4"),
        Case(rule: "variant-attributes", location: "master.m3u8:4"),
        Case(rule: "rendition-groups", location: "master.m3u8:4"),
        Case(rule: "part-inf", location: "playlist.m3u8:8"),
        Case(rule: "part-duration", location: "playlist.m3u8:10"),
        Case(rule: "server-control", location: "playlist.m3u8:8"),
        Case(rule: "preload-hint", location: "playlist.m3u8:15"),
        Case(rule: "skip", location: "playlist.m3u8:8"),
        Case(rule: "uri", location: "playlist.m3u8:13"),
        Case(rule: "init-section", location: "init.mp4@24"),
        Case(rule: "codecs", location: "master.m3u8:4"),
        Case(rule: "segment-boxes", location: "000002.m4s@92"),
        Case(rule: "tfdt-continuity", location: "000002.m4s@72"),
        Case(rule: "independent-segments", location: "000002.m4s@92"),
        Case(rule: "extinf-duration", location: "../base/seg/000002.m4s"),
        Case(rule: "parameter-sets", location: "000002.m4s@868"),
        // The avcC's SPS has a reserved aspect_ratio_idc: FFmpeg drops it, and every picture with it.
        Case(rule: "parameter-sets", location: "init.mp4@499"),
        Case(rule: "key", location: "playlist.m3u8:10"),
        Case(rule: "apple-iframe-playlists", location: "master.m3u8"),
        Case(rule: "apple-average-bandwidth", location: "master.m3u8:4"),
        Case(rule: "apple-frame-rate", location: "master.m3u8:4"),
        Case(rule: "apple-measured-bandwidth", location: "master.m3u8:4"),
        Case(rule: "apple-program-date-time", location: "playlist.m3u8"),
        Case(rule: "apple-live-window", location: "playlist.m3u8"),
        Case(rule: "apple-discontinuity-sequence", location: "playlist.m3u8:16"),
        Case(rule: "apple-stereo-aac", location: "playlist.m3u8"),
        Case(rule: "apple-idr-interval", location: "playlist.m3u8"),
        Case(rule: "apple-part-hold-back", location: "playlist.m3u8:9"),
        Case(rule: "apple-ll-blocking-reload", location: "playlist.m3u8:8"),
        Case(rule: "apple-ll-preload-hint", location: "playlist.m3u8"),
        Case(rule: "apple-ll-rendition-reports", location: "b.m3u8:29"),
    ]

    static func validate(_ name: String) throws -> ValidationReport {
        let url = try StreamValidator.playlistURL(forTarget: directory.appendingPathComponent(name).path)
        return try StreamValidator(loader: FileLoader()).validate(url)
    }

    @Test func theValidStreamHasNoFinding() throws {
        let report = try Self.validate("base")
        #expect(report.findings.isEmpty, "\(report.text)")
        #expect(report.playlistCount == 3)
        #expect(report.segmentCount == 6)  // three segments and three I-frame ranges
    }

    @Test(arguments: cases)
    func eachFixtureBreaksItsRuleAlone(testCase: Case) throws {
        let report = try Self.validate(testCase.rule)
        let ofRule = report.findings.filter { $0.rule == testCase.rule }
        #expect(!ofRule.isEmpty, "\(report.text)")
        #expect(ofRule.contains { $0.location == testCase.location }, "\(ofRule.map(\.location))")
        let severity = ValidationRule.all.first { $0.id == testCase.rule }?.severity
        #expect(ofRule.allSatisfy { $0.severity == severity })
        #expect(report.findings.allSatisfy { $0.rule == testCase.rule }, "\(report.text)")
    }

    @Test func everyRuleHasAFixtureAndATestCase() throws {
        let directories = Set(try FileManager.default.contentsOfDirectory(atPath: Self.directory.path))
            .subtracting(["base", "later", "make-fixtures.py"])
        #expect(directories == Set(ValidationRule.all.map(\.id)))
        #expect(Set(Self.cases.map(\.rule)) == Set(ValidationRule.all.map(\.id).filter { !$0.hasPrefix("live-") }))
    }

    @Test func findingsNameTheRuleAndWhereItIsWritten() throws {
        let report = try Self.validate("target-duration")
        let finding = try #require(report.errors.first)
        #expect(finding.reference == "RFC 8216bis 4.4.3.1")
        #expect(report.text.contains("error: playlist.m3u8:8: [target-duration, RFC 8216bis 4.4.3.1] EXTINF 1.0 rounds to 1 s"))
        #expect(report.text.hasSuffix("INVALID (3 errors, 0 warnings; read 1 playlist, 3 segments)\n"))
    }

    @Test func jsonCarriesEveryField() throws {
        let report = try Self.validate("segment-boxes")
        let object = try JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [String: Any]
        let findings = try #require(object?["findings"] as? [[String: Any]])
        #expect(findings.count == 1)
        #expect(findings.first?["rule"] as? String == "segment-boxes")
        #expect(findings.first?["byteOffset"] as? Int == 92)
        #expect(findings.first?["severity"] as? String == "error")
        #expect(findings.first?["file"] as? String == "000002.m4s")
    }

    @Test func samplingReadsOnlyTheFirstSegmentsButChecksTheOthersExist() throws {
        let url = try StreamValidator.playlistURL(forTarget: Self.directory.appendingPathComponent("uri").path)
        let report = try StreamValidator(loader: FileLoader(), options: .init(sampleSegments: 1)).validate(url)
        #expect(report.segmentCount == 1)
        #expect(report.errors.map(\.location) == ["playlist.m3u8:13"])
        let tfdt = try StreamValidator.playlistURL(forTarget: Self.directory.appendingPathComponent("tfdt-continuity").path)
        #expect(try StreamValidator(loader: FileLoader(), options: .init(sampleSegments: 1)).validate(tfdt).findings.isEmpty)
    }

    @Test func aMissingTargetIsALoadErrorNotAFinding() {
        #expect(throws: LoadError.self) {
            try StreamValidator.playlistURL(forTarget: Self.directory.appendingPathComponent("nothing-here").path)
        }
        #expect(throws: LoadError.self) {
            try StreamValidator(loader: FileLoader()).validate(Self.directory.appendingPathComponent("base/none.m3u8"))
        }
    }
}
