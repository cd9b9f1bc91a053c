import Foundation
import Testing
@testable import HLSKit

@Suite struct LowLatencyPlaylistTests {
    /// A stream of `stored` 2 s segments from 1, and `open` parts of the next, each 1/3 s.
    static func playlist(stored: Int, open: Int, completeParts: Bool = true) -> LowLatencyPlaylist {
        var base = MediaPlaylist(targetDurationSeconds: 2, mediaSequence: 1, independentSegments: true)
        var playlist = LowLatencyPlaylist(base: base, partTargetSeconds: 0.334)
        for number in 1...(stored + 1) {
            let count = number <= stored ? 6 : open
            for part in 0..<count {
                playlist.addPart(.init(sequenceNumber: number, part: part), durationSeconds: 0.333,
                                 independent: part == 0, endsSegment: completeParts && part == 5)
            }
            if number <= stored {
                base.segments.append(.init(uri: StreamLayout.segmentPath(number), durationSeconds: 2, mapURI: "init.mp4"))
                playlist.update(base: base)
            }
        }
        return playlist
    }

    @Test func listsPartsOfTheLastThreeTargetDurationsTheOpenPartsAndAHint() {
        let text = Self.playlist(stored: 8, open: 2).playlist().render()
        #expect(text.contains("#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL=12.000,PART-HOLD-BACK=1.002"))
        #expect(text.contains("#EXT-X-PART-INF:PART-TARGET=0.334"))
        // Segments 6, 7, 8 end within 6 s of the end: their parts are listed, segment 5's are not.
        #expect(!text.contains("part/000005."))
        for number in 6...8 { #expect(text.contains("part/00000\(number).5.m4s")) }
        #expect(text.contains("#EXT-X-PART:DURATION=0.333,URI=\"part/000006.0.m4s\",INDEPENDENT=YES"))
        #expect(text.hasSuffix("seg/000008.m4s\n#EXT-X-PART:DURATION=0.333,URI=\"part/000009.0.m4s\",INDEPENDENT=YES\n"
            + "#EXT-X-PART:DURATION=0.333,URI=\"part/000009.1.m4s\"\n#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"part/000009.2.m4s\"\n"))
    }

    /// The open segment follows a discontinuity (a device came back): the tag goes before its parts, and
    /// once the segment is stored, before the segment alone.
    @Test func theOpenSegmentsDiscontinuityPrecedesItsParts() throws {
        var base = MediaPlaylist(targetDurationSeconds: 2, mediaSequence: 1, independentSegments: true)
        base.segments.append(.init(uri: StreamLayout.segmentPath(1), durationSeconds: 2, mapURI: "init.mp4"))
        var playlist = LowLatencyPlaylist(base: base, partTargetSeconds: 0.334)
        playlist.addPart(.init(sequenceNumber: 2, part: 0), durationSeconds: 0.333, independent: true,
                         followsDiscontinuity: true)
        playlist.addPart(.init(sequenceNumber: 2, part: 1), durationSeconds: 0.333, independent: false)
        let open = playlist.playlist().render()
        #expect(open.contains("seg/000001.m4s\n#EXT-X-DISCONTINUITY\n#EXT-X-PART:DURATION=0.333,URI=\"part/000002.0.m4s\""))
        #expect(MediaPlaylistDocument(text: open).issues.isEmpty)
        base.segments.append(.init(uri: StreamLayout.segmentPath(2), durationSeconds: 0.666, mapURI: "init.mp4",
                                   discontinuity: true))
        playlist.update(base: base)
        let stored = playlist.playlist().render()
        #expect(stored.components(separatedBy: "#EXT-X-DISCONTINUITY\n").count == 2)
        #expect(stored.contains("#EXT-X-DISCONTINUITY\n#EXT-X-PART:DURATION=0.333,URI=\"part/000002.0.m4s\""))
    }

    @Test func theLastPartOfASegmentHintsTheNextSegment() {
        let playlist = Self.playlist(stored: 2, open: 6)
        #expect(playlist.nextPart == .init(sequenceNumber: 4, part: 0))
        #expect(Self.playlist(stored: 2, open: 6, completeParts: false).nextPart == .init(sequenceNumber: 3, part: 6))
    }

    @Test func blockingRequestsAreSatisfiedByTheSegmentOrThePart() throws {
        let playlist = Self.playlist(stored: 3, open: 2)
        #expect(playlist.satisfies(sequenceNumber: 3, part: nil))
        #expect(!playlist.satisfies(sequenceNumber: 4, part: nil))
        #expect(playlist.satisfies(sequenceNumber: 4, part: 1))
        #expect(!playlist.satisfies(sequenceNumber: 4, part: 2))
        #expect(playlist.satisfies(sequenceNumber: 2, part: 9))
        #expect(throws: LowLatencyPlaylist.RequestError.partWithoutSequenceNumber) {
            try playlist.check(sequenceNumber: nil, part: 1)
        }
        #expect(throws: LowLatencyPlaylist.RequestError.tooFarAhead(lastSequenceNumber: 3)) {
            try playlist.check(sequenceNumber: 6, part: nil)
        }
        try playlist.check(sequenceNumber: 5, part: 0)
    }

    @Test func aDeltaUpdateMergedWithTheFullPlaylistIsTheFullPlaylist() throws {
        let playlist = Self.playlist(stored: 12, open: 1)
        let full = playlist.playlist()
        let delta = playlist.playlist(skip: .segments)
        // Segments that start more than 12 s (CAN-SKIP-UNTIL) before the end, 1 to 7, are skipped.
        #expect(delta.skippedSegments == 7 && delta.version == 9)
        #expect(delta.render().contains("#EXT-X-SKIP:SKIPPED-SEGMENTS=7"))
        #expect(Array(full.segments.prefix(delta.skippedSegments)) + delta.segments == full.segments)
        #expect(playlist.playlist(skip: .segmentsAndDateRanges).version == 10)
        let parsed = try MediaPlaylist.parse(full.render())
        #expect(parsed.segments.map(\.uri) == full.segments.map(\.uri))
    }

    @Test func partURIsRoundTripAndOthersAreRefused() {
        #expect(LowLatencyPlaylist.partURI(sequenceNumber: 42, part: 3) == "part/000042.3.m4s")
        #expect(LowLatencyPlaylist.position(ofPartURI: "part/000042.3.m4s") == .init(sequenceNumber: 42, part: 3))
        for bad in ["part/42.3.m4s", "part/000042.03.m4s", "part/000042.m4s", "seg/000042.3.m4s", "part/000042.-1.m4s",
                    "part/00004a.3.m4s", "part/000042.3.mp4"] {
            #expect(LowLatencyPlaylist.position(ofPartURI: Substring(bad)) == nil, "\(bad)")
        }
    }
}
