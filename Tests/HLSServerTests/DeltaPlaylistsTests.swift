import HLSKit
import Testing
@testable import HLSServer

@Suite struct DeltaPlaylistsTests {
    static func window(through last: Int) -> MediaPlaylist {
        MediaPlaylist(targetDurationSeconds: 2, mediaSequence: 1, segments: (1...last).map {
            .init(uri: "seg/\($0).m4s", durationSeconds: 2)
        })
    }

    static func text(_ response: HTTPResponse?) -> String {
        guard case .bytes(let bytes)? = response?.body else { return "" }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Each form is made once per update and kept until the next: the same answer between two updates,
    /// then the new window, plain, gzipped and as a delta.
    @Test func eachFormIsTheCurrentWindowMadeOncePerUpdate() throws {
        let playlists = DeltaPlaylists()
        playlists.begin(directories: [""])
        for last in [8, 9] {
            playlists.update([Self.window(through: last)])
            let plain = try #require(playlists.reply(path: "playlist.m3u8", query: [:], acceptsGzip: false))
            #expect(Self.text(plain).contains("seg/\(last).m4s") && !Self.text(plain).contains("seg/\(last + 1).m4s"))
            #expect(playlists.reply(path: "playlist.m3u8", query: [:], acceptsGzip: false) == plain)
            let packed = try #require(playlists.reply(path: "playlist.m3u8", query: [:], acceptsGzip: true))
            #expect(packed.header("Content-Encoding") == "gzip")
            #expect(packed.body == .bytes(try #require(Gzip.compress(Array(Self.text(plain).utf8)))))
            #expect(playlists.reply(path: "playlist.m3u8", query: [:], acceptsGzip: true) == packed)
            let delta = Self.text(playlists.reply(path: "playlist.m3u8", query: ["_HLS_skip": "YES"], acceptsGzip: false))
            #expect(delta.contains("#EXT-X-SKIP:SKIPPED-SEGMENTS=") && delta.contains("seg/\(last).m4s"), "\(delta)")
            #expect(!delta.contains("seg/1.m4s\n"))
        }
        #expect(playlists.reply(path: "playlist.m3u8", query: ["_HLS_skip": "NO"], acceptsGzip: false)?.status == 400)
        #expect(playlists.reply(path: "other.m3u8", query: ["_HLS_skip": "NO"], acceptsGzip: false) == nil)
        #expect(playlists.reply(path: "other.m3u8", query: [:], acceptsGzip: false) == nil)
    }
}
