import Foundation
import Testing
@testable import HLSKit

@Suite("MediaPlaylist rendering")
struct PlaylistMediaPlaylistTests {
    private typealias Segment = MediaPlaylist.Segment

    @Test func rendersVideoOnDemand() {
        let playlist = MediaPlaylist(
            targetDurationSeconds: 2, mediaSequence: 1, playlistType: .vod, independentSegments: true,
            segments: [
                Segment(uri: "seg/000001.m4s", durationSeconds: 2, mapURI: "init.mp4"),
                Segment(uri: "seg/000002.m4s", durationSeconds: 2.002, mapURI: "init.mp4"),
                Segment(uri: "seg/000003.m4s", durationSeconds: 0.534, mapURI: "init.mp4"),
            ],
            endList: true)

        #expect(playlist.render() == """
            #EXTM3U
            #EXT-X-VERSION:6
            #EXT-X-TARGETDURATION:2
            #EXT-X-MEDIA-SEQUENCE:1
            #EXT-X-PLAYLIST-TYPE:VOD
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-MAP:URI="init.mp4"
            #EXTINF:2.000,
            seg/000001.m4s
            #EXTINF:2.002,
            seg/000002.m4s
            #EXTINF:0.534,
            seg/000003.m4s
            #EXT-X-ENDLIST

            """)
    }

    @Test func rendersEventWithoutMapAtVersionThree() {
        let playlist = MediaPlaylist(
            targetDurationSeconds: 4, mediaSequence: 1, playlistType: .event,
            segments: [
                Segment(uri: "seg/000001.ts", durationSeconds: 3.9996),
                Segment(uri: "seg/000002.ts", durationSeconds: 4.0004),
            ])

        #expect(playlist.render() == """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:4
            #EXT-X-MEDIA-SEQUENCE:1
            #EXT-X-PLAYLIST-TYPE:EVENT
            #EXTINF:4.000,
            seg/000001.ts
            #EXTINF:4.000,
            seg/000002.ts

            """)
    }

    @Test func rendersSlidingWindowWithDiscontinuityMapChangeAndDateTimes() {
        let start = Date(timeIntervalSince1970: 1_743_296_398.5)
        let playlist = MediaPlaylist(
            targetDurationSeconds: 2, mediaSequence: 7, discontinuitySequence: 1, independentSegments: true,
            segments: [
                Segment(uri: "seg/000007.m4s", durationSeconds: 2, mapURI: "init.mp4", programDateTime: start),
                Segment(uri: "seg/000008.m4s", durationSeconds: 1.968, mapURI: "init.mp4",
                        programDateTime: start + 2),
                Segment(uri: "seg/000009.m4s", durationSeconds: 2.002, mapURI: "init-2.mp4", discontinuity: true,
                        programDateTime: start + 30.25),
                Segment(uri: "seg/000010.m4s", durationSeconds: 2, mapURI: "init-2.mp4",
                        programDateTime: start + 30.25 + 2.002),
            ])

        #expect(playlist.render() == """
            #EXTM3U
            #EXT-X-VERSION:6
            #EXT-X-TARGETDURATION:2
            #EXT-X-MEDIA-SEQUENCE:7
            #EXT-X-DISCONTINUITY-SEQUENCE:1
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-MAP:URI="init.mp4"
            #EXT-X-PROGRAM-DATE-TIME:2025-03-30T00:59:58.500Z
            #EXTINF:2.000,
            seg/000007.m4s
            #EXT-X-PROGRAM-DATE-TIME:2025-03-30T01:00:00.500Z
            #EXTINF:1.968,
            seg/000008.m4s
            #EXT-X-DISCONTINUITY
            #EXT-X-MAP:URI="init-2.mp4"
            #EXT-X-PROGRAM-DATE-TIME:2025-03-30T01:00:28.750Z
            #EXTINF:2.002,
            seg/000009.m4s
            #EXT-X-PROGRAM-DATE-TIME:2025-03-30T01:00:30.752Z
            #EXTINF:2.000,
            seg/000010.m4s

            """)
    }

    @Test func rendersEmptyLivePlaylistWithMediaSequenceAndNoSegments() {
        #expect(MediaPlaylist(targetDurationSeconds: 2, mediaSequence: 1).render() == """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:2
            #EXT-X-MEDIA-SEQUENCE:1

            """)
    }

    @Test func versionIsSixOnlyWhenAnySegmentHasAMap() {
        var playlist = MediaPlaylist(targetDurationSeconds: 2, segments: [
            Segment(uri: "a.ts", durationSeconds: 2),
            Segment(uri: "b.ts", durationSeconds: 2),
        ])
        #expect(playlist.version == 3)
        playlist.segments[1].mapURI = "init.mp4"
        #expect(playlist.version == 6)
    }

    @Test(arguments: [
        ([2.0, 2.499], 2),
        ([2.5], 3),
        ([5.005, 4.0], 5),
        ([1.5, 0.2], 2),
        ([2.4996], 3),   // written as 2.500, which a client rounds up
        ([0.3], 1),
        ([], 1),
    ] as [([Double], Int)])
    func targetDurationCoversEveryRoundedDuration(durations: [Double], expected: Int) {
        #expect(MediaPlaylist.targetDuration(forSegmentDurations: durations) == expected)
    }

    @Test(arguments: [
        (0.0, "0.000"), (2.0, "2.000"), (1.9995, "2.000"), (29.97002997, "29.970"), (0.0004, "0.000"), (12.3456, "12.346"),
    ])
    func formatsThreeDecimals(value: Double, expected: String) {
        #expect(PlaylistNumber.threeDecimals(value) == expected)
    }
}
