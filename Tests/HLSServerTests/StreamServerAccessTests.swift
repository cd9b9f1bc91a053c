import Foundation
import HLSKit
import HLSOutput
import Testing
@testable import HLSServer

/// Access control on the built-in server, one rule at a time: each of these fails without its rule.
@Suite struct StreamServerAccessTests {
    static let key = Array("0123456789abcdef0123456789abcdef".utf8)
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// A stream directory with a master, a media playlist and a segment.
    static func directory() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("access-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("live/seg"), withIntermediateDirectories: true)
        try "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000\nplaylist.m3u8\n"
            .write(to: root.appendingPathComponent("live/master.m3u8"), atomically: true, encoding: .utf8)
        try "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MAP:URI=\"init.mp4\"\n#EXTINF:2.000,\nseg/000001.m4s\n#EXT-X-ENDLIST\n"
            .write(to: root.appendingPathComponent("live/playlist.m3u8"), atomically: true, encoding: .utf8)
        try Data([1, 2, 3]).write(to: root.appendingPathComponent("live/seg/000001.m4s"))
        try Data([4, 5]).write(to: root.appendingPathComponent("live/init.mp4"))
        return root
    }

    static func server(_ root: URL, token: String? = "s3cret", key: [UInt8]? = key, metricsToken: String? = nil) -> StreamServer {
        StreamServer(root: root.path, metrics: ServerMetrics(),
                     access: AccessControl(token: token, signingKey: key, metricsToken: metricsToken, clock: { now }))
    }

    static func get(_ server: StreamServer, _ path: String, query: [String: String] = [:],
                    headers: [String: String] = [:]) -> HTTPResponse {
        StreamServerTests.answer(server.handle(HTTPRequest(method: "GET", path: path, query: query, headers: headers)))!
    }

    static func text(_ response: HTTPResponse) -> String {
        if case .bytes(let bytes) = response.body { return String(decoding: bytes, as: UTF8.self) }
        return ""
    }

    static func signed(_ prefix: String, expires: Int = 1_800_000_600, key: [UInt8] = key) -> [String: String] {
        ["prefix": prefix, "expires": String(expires),
         "signature": AccessControl.signature(prefix: prefix, expires: expires, key: key)]
    }

    /// A signed prefix is compared with the path byte for byte, as paths name files: a combining mark
    /// after the first slash made "/" no prefix of it and refused a URL signed for it (found by
    /// fuzz-access-control), and a prefix with a precomposed "é" opened a folder spelt with "e" and a
    /// combining accent, another folder on disk.
    @Test func aSignedPrefixIsComparedWithThePathByteForByte() {
        let access = AccessControl(signingKey: Self.key, clock: { Self.now })
        let combining = "/\u{313}e/"
        #expect(access.decide(HTTPRequest(method: "GET", path: combining + "x", query: Self.signed(combining))) != .refused)
        let precomposed = "/caf\u{E9}/"
        #expect(access.decide(HTTPRequest(method: "GET", path: "/cafe\u{301}/seg/000001.m4s",
                                          query: Self.signed(precomposed))) == .refused)
        #expect(access.decide(HTTPRequest(method: "GET", path: precomposed + "seg/000001.m4s",
                                          query: Self.signed(precomposed))) != .refused)
    }

    @Test func withoutCredentials401AndWithWrongOnes403AndNeitherNamesAFile() throws {
        let root = try Self.directory()
        defer { try? FileManager.default.removeItem(at: root) }
        let server = Self.server(root)
        let missing = Self.get(server, "/live/seg/000001.m4s")
        #expect(missing.status == 401 && missing.header("WWW-Authenticate") == "Bearer")
        let wrong = Self.get(server, "/live/seg/000001.m4s", query: ["token": "guess"])
        #expect(wrong.status == 403)
        let wrongHeader = Self.get(server, "/live/playlist.m3u8", headers: ["authorization": "Bearer guess"])
        #expect(wrongHeader.status == 403)
        for response in [missing, wrong, wrongHeader] {
            #expect(!Self.text(response).contains("000001") && !Self.text(response).contains("live"))
        }
        // The preview page and /metrics are behind the same door.
        #expect(Self.get(server, "/").status == 401)
        #expect(Self.get(server, "/metrics").status == 401)
        // A CORS preflight carries no credentials and says Authorization may be sent.
        let preflight = StreamServerTests.answer(server.handle(HTTPRequest(method: "OPTIONS", path: "/live/playlist.m3u8")))!
        #expect(preflight.status == 204 && preflight.header("Access-Control-Allow-Headers")?.contains("Authorization") == true)
    }

    @Test func aTokenInTheQueryIsCarriedIntoChildPlaylistsAndSegments() throws {
        let root = try Self.directory()
        defer { try? FileManager.default.removeItem(at: root) }
        let server = Self.server(root)
        let master = Self.get(server, "/live/master.m3u8", query: ["token": "s3cret"])
        #expect(master.status == 200)
        #expect(Self.text(master).contains("\nplaylist.m3u8?token=s3cret\n"), "\(Self.text(master))")
        let media = Self.get(server, "/live/playlist.m3u8", query: ["token": "s3cret"], headers: ["accept-encoding": "gzip"])
        #expect(media.header("Content-Encoding") == "gzip")
        let plain = Self.text(Self.get(server, "/live/playlist.m3u8", query: ["token": "s3cret"]))
        #expect(plain.contains("URI=\"init.mp4?token=s3cret\"") && plain.contains("\nseg/000001.m4s?token=s3cret\n"), "\(plain)")
        let segment = Self.get(server, "/live/seg/000001.m4s", query: ["token": "s3cret"])
        #expect(segment.status == 200)
        // Web players on other origins may read the files and their Resource Timing.
        for response in [master, media, segment] {
            #expect(response.header("Access-Control-Allow-Origin") == "*" && response.header("Timing-Allow-Origin") == "*")
        }
        // A header token is sent again by the client itself: nothing is written into the playlist.
        let byHeader = Self.get(server, "/live/playlist.m3u8", headers: ["authorization": "Bearer s3cret"])
        #expect(byHeader.status == 200 && !Self.text(byHeader).contains("token="))
    }

    @Test func aSignatureOpensItsPrefixUntilItExpiresAndNothingElse() throws {
        let root = try Self.directory()
        defer { try? FileManager.default.removeItem(at: root) }
        let server = Self.server(root, token: nil)
        let master = Self.get(server, "/live/master.m3u8", query: Self.signed("/live/"))
        #expect(master.status == 200)
        let carried = "prefix=%2Flive%2F&expires=1800000600&signature=" + Self.signed("/live/")["signature"]!
        #expect(Self.text(master).contains("playlist.m3u8?\(carried)"), "\(Self.text(master))")
        #expect(Self.get(server, "/live/seg/000001.m4s", query: Self.signed("/live/")).status == 200)
        // An unsigned segment URL, an expired signature, a signature for another prefix, one made
        // with another key, and a prefix changed after signing.
        #expect(Self.get(server, "/live/seg/000001.m4s").status == 401)
        #expect(Self.get(server, "/live/seg/000001.m4s", query: Self.signed("/live/", expires: 1_799_999_999)).status == 403)
        #expect(Self.get(server, "/live/seg/000001.m4s", query: Self.signed("/other/")).status == 403)
        #expect(Self.get(server, "/live/seg/000001.m4s",
                         query: Self.signed("/live/", key: Array("another key of 32 bytes, not it!".utf8))).status == 403)
        var widened = Self.signed("/live/seg/")
        widened["prefix"] = "/"
        #expect(Self.get(server, "/live/master.m3u8", query: widened).status == 403)
        // A token is not accepted where only signatures are.
        #expect(Self.get(server, "/live/master.m3u8", query: ["token": "s3cret"]).status == 403)
    }

    @Test func metricsHaveATokenOfTheirOwn() throws {
        let root = try Self.directory()
        defer { try? FileManager.default.removeItem(at: root) }
        let server = Self.server(root, metricsToken: "scraper")
        #expect(Self.get(server, "/metrics").status == 401)
        #expect(Self.get(server, "/metrics", query: ["token": "s3cret"]).status == 403)
        #expect(Self.get(server, "/metrics", headers: ["authorization": "Bearer scraper"]).status == 200)
        let open = StreamServer(root: root.path, metrics: ServerMetrics(), access: AccessControl(metricsToken: "scraper"))
        #expect(Self.get(open, "/live/playlist.m3u8").status == 200, "the stream stays open when only /metrics is protected")
    }

    @Test func aBlockingLowLatencyReloadCarriesTheTokenIntoItsParts() throws {
        let stream = StreamServerTests.stream()
        let server = StreamServer(root: "/nonexistent", lowLatency: stream, metrics: ServerMetrics(),
                                  access: AccessControl(token: "s3cret"))
        let reply = server.handle(HTTPRequest(method: "GET", path: "/playlist.m3u8",
                                              query: ["_HLS_msn": "1", "_HLS_part": "0", "token": "s3cret"]))
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) {
            stream.addPart(rendition: 0, position: .init(sequenceNumber: 1, part: 0), durationSeconds: 0.333,
                           independent: true, bytes: [1])
        }
        let response = try #require(StreamServerTests.answer(reply))
        #expect(response.status == 200)
        #expect(Self.text(response).contains("part/000001.0.m4s?token=s3cret"), "\(Self.text(response))")
        #expect(Self.text(response).contains("PRELOAD-HINT:TYPE=PART,URI=\"part/000001.1.m4s?token=s3cret\""), "\(Self.text(response))")
    }
}
