import Testing
@testable import HLSKit

/// The query a client authenticated with goes into every URI a playlist names, and nowhere else.
struct PlaylistQueryCarrierTests {
    @Test func everyURIOfAMasterAndAMediaPlaylistCarriesTheQuery() {
        let master = """
            #EXTM3U
            #EXT-X-SESSION-KEY:METHOD=AES-128,URI="keys/k1.key"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="Audio 1",URI="audio/playlist.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=1000,AUDIO="a"
            720p/playlist.m3u8
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=100,URI="720p/iframes.m3u8"

            """
        #expect(PlaylistQueryCarrier.carry("token=abc", into: master) == """
            #EXTM3U
            #EXT-X-SESSION-KEY:METHOD=AES-128,URI="keys/k1.key?token=abc"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="Audio 1",URI="audio/playlist.m3u8?token=abc"
            #EXT-X-STREAM-INF:BANDWIDTH=1000,AUDIO="a"
            720p/playlist.m3u8?token=abc
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=100,URI="720p/iframes.m3u8?token=abc"

            """)
        let media = """
            #EXTM3U
            #EXT-X-KEY:METHOD=AES-128,URI="../keys/k2.key",IV=0x1
            #EXT-X-MAP:URI="init.mp4"
            #EXTINF:2.000,
            seg/000001.m4s
            #EXT-X-PART:DURATION=0.334,URI="part/000002.0.m4s",INDEPENDENT=YES
            #EXT-X-PRELOAD-HINT:TYPE=PART,URI="part/000002.1.m4s"
            #EXT-X-RENDITION-REPORT:URI="../360p/playlist.m3u8",LAST-MSN=2,LAST-PART=0
            #EXT-X-PROGRAM-DATE-TIME:2026-12-01T10:00:00.000Z
            https://cdn.example/seg/000003.m4s
            seg/000004.m4s?v=2
            """
        let carried = PlaylistQueryCarrier.carry("prefix=%2Flive%2F&expires=9&signature=ab", into: media)
        let query = "prefix=%2Flive%2F&expires=9&signature=ab"
        #expect(carried.contains("URI=\"../keys/k2.key?\(query)\",IV=0x1"))
        #expect(carried.contains("#EXT-X-MAP:URI=\"init.mp4?\(query)\""))
        #expect(carried.contains("\nseg/000001.m4s?\(query)\n"))
        #expect(carried.contains("URI=\"part/000002.0.m4s?\(query)\",INDEPENDENT=YES"))
        #expect(carried.contains("URI=\"part/000002.1.m4s?\(query)\""))
        #expect(carried.contains("URI=\"../360p/playlist.m3u8?\(query)\",LAST-MSN=2"))
        // Another server's URI is not given the token; a URI with a query gets it after &.
        #expect(carried.contains("\nhttps://cdn.example/seg/000003.m4s\n"))
        #expect(carried.hasSuffix("\nseg/000004.m4s?v=2&\(query)"))
        #expect(carried.contains("#EXT-X-PROGRAM-DATE-TIME:2026-12-01T10:00:00.000Z\n"))
        #expect(PlaylistQueryCarrier.carry("", into: media) == media)
    }
}
