import Testing
import HLSKit

@Suite("MasterPlaylist rendering")
struct PlaylistMasterPlaylistTests {
    @Test func rendersVariantsWithAllAttributes() {
        let playlist = MasterPlaylist(version: 6, independentSegments: true, variants: [
            MasterPlaylist.Variant(
                uri: "720p/playlist.m3u8", bandwidthBitsPerSecond: 2_500_000,
                averageBandwidthBitsPerSecond: 2_000_000, codecs: ["avc1.64001f", "mp4a.40.2"],
                resolution: MasterPlaylist.Resolution(width: 1280, height: 720), framesPerSecond: 30_000.0 / 1_001),
            MasterPlaylist.Variant(uri: "low/playlist.m3u8", bandwidthBitsPerSecond: 800_000),
        ])

        #expect(playlist.render() == """
            #EXTM3U
            #EXT-X-VERSION:6
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-STREAM-INF:BANDWIDTH=2500000,AVERAGE-BANDWIDTH=2000000,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720,FRAME-RATE=29.970
            720p/playlist.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=800000
            low/playlist.m3u8

            """)
    }

    @Test func omitsIndependentSegmentsWhenNotSet() {
        let playlist = MasterPlaylist(version: 3, variants: [
            MasterPlaylist.Variant(uri: "a.m3u8", bandwidthBitsPerSecond: 1_000, framesPerSecond: 25),
        ])

        #expect(playlist.render() == """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-STREAM-INF:BANDWIDTH=1000,FRAME-RATE=25.000
            a.m3u8

            """)
    }

    @Test func rendersVideoRangeAfterTheOtherAttributes() {
        var variant = MasterPlaylist.Variant(uri: "hdr.m3u8", bandwidthBitsPerSecond: 9_000_000,
                                             codecs: ["hvc1.2.4.L150.90"])
        variant.videoRange = .pq
        #expect(MasterPlaylist(version: 6, variants: [variant]).render() == """
            #EXTM3U
            #EXT-X-VERSION:6
            #EXT-X-STREAM-INF:BANDWIDTH=9000000,CODECS="hvc1.2.4.L150.90",VIDEO-RANGE=PQ
            hdr.m3u8

            """)
    }

    @Test(arguments: [(UInt8(16), MasterPlaylist.VideoRange.pq), (18, .hlg), (1, .sdr), (14, .sdr), (2, .sdr)])
    func videoRangeFollowsTheTransferCharacteristics(transfer: UInt8, range: MasterPlaylist.VideoRange) {
        #expect(MasterPlaylist.VideoRange(transferCharacteristics: transfer) == range)
    }
}
