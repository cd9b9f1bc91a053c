import Foundation
import Testing
@testable import HLSKit

/// Delta updates of a long live window (RFC 8216bis 4.4.3.8, 4.4.5.2, 6.2.5.1).
@Suite struct PlaylistDeltaTests {
    private func window(_ count: Int, first: Int = 1, windowSize: Int = 3600) -> LivePlaylist {
        var live = LivePlaylist(targetDurationSeconds: 2, windowSize: windowSize, firstSequenceNumber: first)
        for number in first..<(first + count) {
            var segment = MediaPlaylist.Segment(uri: StreamLayout.segmentPath(number), durationSeconds: 2, mapURI: "init.mp4")
            segment.programDateTime = Date(timeIntervalSince1970: 1_764_000_000 + Double(number) * 2)
            _ = live.append(segment)
        }
        return live
    }

    @Test func theFullPlaylistAdvertisesSkippingAndTheDeltaListsOnlyTheLastTwelveSeconds() throws {
        let live = window(100)
        let delta = DeltaPlaylist(live.playlist)
        var expected = live.playlist
        expected.serverControl = .init(canBlockReload: false, partHoldBackSeconds: nil, canSkipUntilSeconds: 12)
        #expect(delta.render(skip: false) == expected.render())
        #expect(delta.render(skip: false).contains("#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=NO,CAN-SKIP-UNTIL=12.000\n"))

        let text = delta.render(skip: true)
        let parsed = try MediaPlaylist.parse(text)
        // Segments starting within 12 s of the end: the last six of 2 s.
        #expect(parsed.segments.map(\.uri) == (95...100).map(StreamLayout.segmentPath))
        #expect(parsed.mediaSequence == 1 && text.contains("#EXT-X-VERSION:9\n"))
        #expect(text.contains("#EXT-X-SKIP:SKIPPED-SEGMENTS=94\n#EXT-X-MAP:URI=\"init.mp4\"\n"))
        #expect(text.utf8.count * 10 < delta.render(skip: false).utf8.count)
    }

    @Test func updatesFollowTheWindowAndAShortOrEndedPlaylistIsNeverSkipped() {
        var live = window(10, windowSize: 8)
        var delta = DeltaPlaylist(live.playlist)
        for number in 11...40 {
            _ = live.append(MediaPlaylist.Segment(uri: StreamLayout.segmentPath(number), durationSeconds: 2, mapURI: "init.mp4"))
            delta.update(live.playlist)
            for skip in [false, true] {
                #expect(delta.render(skip: skip) == DeltaPlaylist(live.playlist).render(skip: skip), "segment \(number)")
            }
        }
        #expect(delta.render(skip: true).contains("SKIPPED-SEGMENTS=2\n"))
        let short = DeltaPlaylist(window(6).playlist)
        #expect(!short.render(skip: true).contains("#EXT-X-SKIP"))
        live.end()
        delta.update(live.playlist)
        #expect(!delta.render(skip: true).contains("#EXT-X-SKIP") && delta.render(skip: true).hasSuffix("#EXT-X-ENDLIST\n"))
        // A stream that starts again from other numbers is taken whole.
        let restarted = window(5, first: 500)
        delta.update(restarted.playlist)
        #expect(delta.render(skip: false).contains("#EXT-X-MEDIA-SEQUENCE:500\n"))
        #expect(delta.render(skip: false) == DeltaPlaylist(restarted.playlist).render(skip: false))
    }
}
