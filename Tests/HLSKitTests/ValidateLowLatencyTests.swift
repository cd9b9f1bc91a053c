import Foundation
import Testing
@testable import HLSKit

/// The Low-Latency HLS rules (RFC 8216bis and Apple's) on hlscap's own LL playlists, with 200 ms parts:
/// none of them fires. Each rule firing alone is ValidateRuleFixtureTests' business.
@Suite struct ValidateLowLatencyTests {
    static let lowLatencyRules: Set<String> = Set([
        ValidationRule.partInformation, .partDuration, .serverControl, .preloadHint, .partHoldBack,
        .lowLatencyBlockingReload, .lowLatencyPreloadHint, .lowLatencyRenditionReports,
    ].map(\.id))

    /// `stored` 2 s segments of ten 200 ms parts each from 1, and `open` parts of the next, as the server
    /// keeps them; rendered with reports of the ladder's other renditions.
    static func rendered(stored: Int, open: Int) -> String {
        var base = MediaPlaylist(targetDurationSeconds: 2, mediaSequence: 1, independentSegments: true)
        var playlist = LowLatencyPlaylist(base: base, partTargetSeconds: 0.2)
        for number in 1...(stored + 1) {
            let count = number <= stored ? 10 : open
            for part in 0..<count {
                playlist.addPart(.init(sequenceNumber: number, part: part), durationSeconds: part == 9 ? 0.16 : 0.2,
                                 independent: part == 0, endsSegment: part == 9)
            }
            if number <= stored {
                base.segments.append(.init(uri: StreamLayout.segmentPath(number), durationSeconds: 1.96, mapURI: "init.mp4"))
                playlist.update(base: base)
            }
        }
        let last = playlist.lastPart ?? .init(sequenceNumber: stored, part: 0)
        let reports = ["../240p/playlist.m3u8", "../audio/playlist.m3u8"].map {
            MediaPlaylist.RenditionReport(uri: $0, lastSequenceNumber: last.sequenceNumber, lastPart: last.part)
        }
        return playlist.playlist(renditionReports: reports).render()
    }

    @Test(arguments: [(8, 0), (8, 3), (8, 10)])
    func hlscapsPlaylistsBreakNoLowLatencyRule(stored: Int, open: Int) throws {
        let text = Self.rendered(stored: stored, open: open)
        #expect(text.contains("#EXT-X-PART-INF:PART-TARGET=0.200"))
        #expect(text.contains("PART-HOLD-BACK=0.600"))
        let playlist = MediaPlaylistDocument(text: text)
        let findings = PlaylistRules.check(media: playlist, file: "360p/playlist.m3u8")
        #expect(findings.filter { Self.lowLatencyRules.contains($0.rule) }.isEmpty, "\(findings.map(\.message))\n\(text)")
        let url = URL(string: "http://origin.invalid/360p/playlist.m3u8")!
        let others = ["240p", "audio"].map { URL(string: "http://origin.invalid/\($0)/playlist.m3u8")! }
        #expect(PlaylistRules.checkRenditionReports(playlist, at: url, others: others, name: \.path, file: "p").isEmpty)
    }

    @Test func aMissingReportAndAReportWithoutLastPartAreNamed() throws {
        let text = Self.rendered(stored: 8, open: 3).replacingOccurrences(of: ",LAST-PART=2", with: "")
        let playlist = MediaPlaylistDocument(text: text)
        let url = URL(string: "http://origin.invalid/360p/playlist.m3u8")!
        let others = ["240p", "audio", "1080p"].map { URL(string: "http://origin.invalid/\($0)/playlist.m3u8")! }
        let findings = PlaylistRules.checkRenditionReports(playlist, at: url, others: others, name: \.path, file: "p")
        #expect(findings.map(\.message).sorted() == [
            "EXT-X-RENDITION-REPORT for ../240p/playlist.m3u8 has no LAST-PART",
            "EXT-X-RENDITION-REPORT for ../audio/playlist.m3u8 has no LAST-PART",
            "no EXT-X-RENDITION-REPORT for /1080p/playlist.m3u8, another rendition of the multivariant playlist",
        ])
        #expect(findings.allSatisfy { $0.rule == "apple-ll-rendition-reports" && $0.severity == .warning })
    }

    @Test func aPartOverThePartTargetAndAShortHoldBackAreErrors() throws {
        let text = Self.rendered(stored: 8, open: 3)
            .replacingOccurrences(of: "PART-HOLD-BACK=0.600", with: "PART-HOLD-BACK=0.300")
            .replacingOccurrences(of: "#EXT-X-PART:DURATION=0.200,URI=\"part/000009.1.m4s\"",
                                  with: "#EXT-X-PART:DURATION=0.250,URI=\"part/000009.1.m4s\"")
        let findings = PlaylistRules.check(media: MediaPlaylistDocument(text: text), file: "p").filter { $0.severity == .error }
        #expect(findings.map(\.rule).sorted() == ["part-duration", "server-control"], "\(findings.map(\.message))")
    }

    @Test func aVODPlaylistWithPartsNeedsNoBlockingReloadNorHint() {
        let text = Self.rendered(stored: 8, open: 0)
            .replacingOccurrences(of: "CAN-BLOCK-RELOAD=YES,", with: "") + "#EXT-X-ENDLIST\n"
        let findings = PlaylistRules.check(media: MediaPlaylistDocument(text: text), file: "p")
        #expect(!findings.contains { $0.rule.hasPrefix("apple-ll-") }, "\(findings.map(\.message))")
    }
}
