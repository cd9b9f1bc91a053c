import Testing
@testable import HLSKit

/// The general playlist reader: multivariant playlists, byte ranges, I-frame and low-latency tags,
/// with every problem recorded at its line rather than the first one thrown.
@Suite struct PlaylistDocumentTests {
    static let master = """
        #EXTM3U
        #EXT-X-VERSION:6
        #EXT-X-INDEPENDENT-SEGMENTS
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="2",URI="audio/playlist.m3u8"
        #EXT-X-STREAM-INF:BANDWIDTH=2500000,AVERAGE-BANDWIDTH=2200000,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720,FRAME-RATE=29.970,AUDIO="aac"
        720p/playlist.m3u8
        # a comment
        #EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,AUDIO="aac"
        360p/playlist.m3u8
        #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=300000,CODECS="avc1.64001f",RESOLUTION=1280x720,URI="720p/iframes.m3u8"

        """

    @Test func multivariantPlaylistIsReadWithItsLines() {
        let document = PlaylistDocument(text: Self.master)
        #expect(document.isMultivariant)
        let master = MasterPlaylistDocument(document)
        #expect(master.issues.isEmpty)
        #expect(master.version == 6)
        #expect(master.independentSegments)
        #expect(master.variants.map(\.uri) == ["720p/playlist.m3u8", "360p/playlist.m3u8"])
        #expect(master.variants.map(\.line) == [5, 8])
        #expect(master.variants[0].codecs == ["avc1.64001f", "mp4a.40.2"])
        #expect(master.variants[0].resolution == MasterPlaylist.Resolution(width: 1280, height: 720))
        #expect(master.variants[0].framesPerSecond == 29.97)
        #expect(master.variants[0].averageBandwidthBitsPerSecond == 2_200_000)
        #expect(master.variants[1].audioGroup == "aac")
        #expect(master.iFrameVariants.map(\.uri) == ["720p/iframes.m3u8"])
        #expect(master.renditions.first?.channelCount == 2)
        #expect(master.renditions.first?.language == "en")
        #expect(master.renditions.first?.isDefault == true)
    }

    @Test func badAttributesAreRecordedAtTheirLines() {
        let master = MasterPlaylistDocument(text: """
            #EXTM3U
            #EXT-X-STREAM-INF:BANDWIDTH=12k,RESOLUTION=1280*720,CODECS=avc1
            a.m3u8
            #EXT-X-MEDIA:TYPE=SOUND,NAME="x"
            #EXT-X-STREAM-INF:AVERAGE-BANDWIDTH=1,BANDWIDTH=2,BANDWIDTH=3
            """)
        #expect(master.issues.map(\.line) == [2, 2, 2, 4, 4, 5, 5])
        #expect(master.issues[0].message.contains("BANDWIDTH=12k is not a decimal-integer"))
        #expect(master.issues.contains { $0.message.contains("names BANDWIDTH twice") })
        #expect(master.issues.last?.message == "EXT-X-STREAM-INF is not followed by its URI line")
    }

    @Test func mediaPlaylistResolvesByteRangesAndSequenceNumbers() {
        let playlist = MediaPlaylistDocument(text: """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:2
            #EXT-X-MEDIA-SEQUENCE:10
            #EXT-X-DISCONTINUITY-SEQUENCE:3
            #EXT-X-MAP:URI="init.mp4",BYTERANGE="700@0"
            #EXTINF:2.0,
            #EXT-X-BYTERANGE:1000@700
            main.mp4
            #EXTINF:2,title
            #EXT-X-BYTERANGE:500
            main.mp4
            #EXT-X-DISCONTINUITY
            #EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:00.000Z
            #EXTINF:1.5,
            other.m4s
            #EXT-X-ENDLIST
            """)
        #expect(playlist.issues.isEmpty)
        #expect(playlist.segments.map(\.mediaSequence) == [10, 11, 12])
        #expect(playlist.segments.map(\.discontinuitySequence) == [3, 3, 4])
        #expect(playlist.segments[1].byteRange == MediaPlaylistDocument.ByteRange(Substring("500@1700")))
        #expect(playlist.segments[0].map?.byteRange?.length == 700)
        #expect(playlist.segments[2].programDateTime != nil)
        #expect(playlist.decimalDurationLines == [7, 15])
        #expect(playlist.endList == [17])
        #expect(PlaylistRules.requiredVersion(playlist)?.version == 6)
    }

    @Test func lowLatencyTagsAreRead() {
        let playlist = MediaPlaylistDocument(text: """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-VERSION:9
            #EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL=24.0,PART-HOLD-BACK=3.0
            #EXT-X-PART-INF:PART-TARGET=1.0
            #EXT-X-MEDIA-SEQUENCE:100
            #EXT-X-MAP:URI="init.mp4"
            #EXT-X-SKIP:SKIPPED-SEGMENTS=5
            #EXT-X-PART:DURATION=1.0,URI="p1.m4s",INDEPENDENT=YES
            #EXT-X-PART:DURATION=1.0,URI="p2.m4s"
            #EXTINF:2.0,
            s105.m4s
            #EXT-X-PART:DURATION=0.5,URI="p3.m4s"
            #EXT-X-PRELOAD-HINT:TYPE=PART,URI="p4.m4s"
            #EXT-X-RENDITION-REPORT:URI="../audio/playlist.m3u8",LAST-MSN=105,LAST-PART=1
            """)
        #expect(playlist.issues.isEmpty, "\(playlist.issues)")
        #expect(playlist.serverControl?.canBlockReload == true)
        #expect(playlist.serverControl?.canSkipUntilSeconds == 24)
        #expect(playlist.partInformation?.partTargetSeconds == 1)
        #expect(playlist.segments.first?.mediaSequence == 105)
        #expect(playlist.segments.first?.parts.map(\.uri) == ["p1.m4s", "p2.m4s"])
        #expect(playlist.segments.first?.parts.first?.independent == true)
        #expect(playlist.trailingParts.map(\.uri) == ["p3.m4s"])
        #expect(playlist.preloadHints.map(\.uri) == ["p4.m4s"])
        #expect(playlist.renditionReports.first?.lastMediaSequence == 105)
        #expect(PlaylistRules.check(media: playlist, file: "p").filter { $0.severity == .error }.isEmpty)
    }

    @Test func everyProblemIsKeptNotOnlyTheFirst() {
        let playlist = MediaPlaylistDocument(text: """
            #EXTM3U
            #EXT-X-TARGETDURATION:two
            #EXTINF:x,
            a.m4s
            b.m4s
            #EXT-X-PLAYLIST-TYPE:LIVE
            #EXTINF:1.0
            """)
        #expect(playlist.issues.map(\.line) == [2, 3, 5, 6, 7, 7])
    }

    @Test func headerAndCommentsAreTold() {
        #expect(!PlaylistDocument(text: "#EXT-X-VERSION:3\n").hasHeader)
        #expect(PlaylistDocument(text: "#EXTM3U\r\n# comment\r\n#EXT-X-ENDLIST\r\n").tags.map(\.name) == ["EXT-X-ENDLIST"])
        #expect(!PlaylistDocument(text: "#EXTM3U\n#EXTINF:1,\na.ts\n").isMultivariant)
    }
}
