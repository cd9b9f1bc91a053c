import Foundation
import HLSBase
import HLSKit
import HLSOutput
import Testing
@testable import HLSServer

/// `/snapshot.jpg` and the thumbnails' choice of fragment, with a picture maker that records what it
/// was given instead of decoding.
@Suite struct StreamPicturesTests {
    /// A maker whose "JPEG" is the bytes it was given, and how often it was asked.
    static func echoing(_ calls: Locked<[Int?]>) -> StreamPictures {
        StreamPictures { initSection, segment, width in
            calls.withLock { $0.append(width) }
            return initSection + [0] + segment
        }
    }

    static func stream(segments: Int) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("pictures-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("seg"), withIntermediateDirectories: true)
        try Data("INIT".utf8).write(to: root.appendingPathComponent("init.mp4"))
        var playlist = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:2\n#EXT-X-MAP:URI=\"init.mp4\"\n"
        for number in 1...max(segments, 1) where segments > 0 {
            let name = String(format: "seg/%06d.m4s", number)
            try Data("SEGMENT\(number)".utf8).write(to: root.appendingPathComponent(name))
            playlist += "#EXTINF:2.000,\n\(name)\n"
        }
        try playlist.write(to: root.appendingPathComponent("playlist.m3u8"), atomically: true, encoding: .utf8)
        return root
    }

    static func get(_ server: StreamServer, _ path: String, query: [String: String] = [:],
                    headers: [String: String] = [:]) throws -> HTTPResponse {
        try #require(StreamServerTests.answer(server.handle(HTTPRequest(method: "GET", path: path, query: query,
                                                                         headers: headers))))
    }

    @Test func theSnapshotIsMadeFromTheNewestSegmentOncePerSegment() throws {
        let root = try Self.stream(segments: 3)
        defer { try? FileManager.default.removeItem(at: root) }
        let calls = Locked<[Int?]>([])
        let metrics = ServerMetrics()
        let server = StreamServer(root: root.path, metrics: metrics, pictures: Self.echoing(calls))

        let first = try Self.get(server, "/snapshot.jpg")
        #expect(first.status == 200 && first.body == .bytes(Array("INIT\u{0}SEGMENT3".utf8)))
        #expect(first.header("Content-Type") == "image/jpeg" && first.header("Cache-Control") == "no-cache")
        let tag = try #require(first.header("ETag"))
        #expect(try Self.get(server, "/snapshot.jpg").body == first.body)
        #expect(try Self.get(server, "/snapshot.jpg", headers: ["if-none-match": tag]).status == 304)
        #expect(calls.withLock { $0 } == [nil], "made once, at the stream's own size")

        // A fourth segment: a new picture, a new tag.
        try Data("SEGMENT4".utf8).write(to: root.appendingPathComponent("seg/000004.m4s"))
        let playlist = root.appendingPathComponent("playlist.m3u8")
        try (String(contentsOf: playlist, encoding: .utf8) + "#EXTINF:2.000,\nseg/000004.m4s\n")
            .write(to: playlist, atomically: true, encoding: .utf8)
        let next = try Self.get(server, "/snapshot.jpg")
        #expect(next.body == .bytes(Array("INIT\u{0}SEGMENT4".utf8)) && next.header("ETag") != tag)
        #expect(calls.withLock { $0 }.count == 2)
        #expect(metrics.render().contains("hlscap_pictures_made_total 2\n"))
        #expect(metrics.render().contains("hlscap_http_requests_total{kind=\"picture\"} 4\n"))
    }

    @Test func withoutASegmentOrAMakerThereIsNoSnapshot() throws {
        let empty = try Self.stream(segments: 0)
        defer { try? FileManager.default.removeItem(at: empty) }
        let calls = Locked<[Int?]>([])
        let waiting = try Self.get(StreamServer(root: empty.path, metrics: ServerMetrics(), pictures: Self.echoing(calls)),
                                   "/snapshot.jpg")
        #expect(waiting.status == 404 && StreamServerAccessTests.text(waiting) == "no segment yet: playlist.m3u8 lists none\n")
        // A segment that is a link to a file elsewhere is not the stream's own.
        let linked = try Self.stream(segments: 1)
        defer { try? FileManager.default.removeItem(at: linked) }
        let segment = linked.appendingPathComponent("seg/000001.m4s")
        try FileManager.default.removeItem(at: segment)
        try FileManager.default.createSymbolicLink(at: segment, withDestinationURL: linked.appendingPathComponent("init.mp4"))
        let link = try Self.get(StreamServer(root: linked.path, metrics: ServerMetrics(), pictures: Self.echoing(calls)),
                                "/snapshot.jpg")
        #expect(link.status == 404)
        let none = try Self.get(StreamServer(root: empty.path, metrics: ServerMetrics()), "/snapshot.jpg")
        #expect(none.status == 404)
        #expect(calls.withLock { $0 }.isEmpty)
    }

    @Test func theSnapshotAsksForTheStreamsCredentials() throws {
        let root = try Self.stream(segments: 1)
        defer { try? FileManager.default.removeItem(at: root) }
        let server = StreamServer(root: root.path, metrics: ServerMetrics(), access: AccessControl(token: "s3cret"),
                                  pictures: Self.echoing(Locked([])))
        #expect(try Self.get(server, "/snapshot.jpg").status == 401)
        #expect(try Self.get(server, "/snapshot.jpg", query: ["token": "wrong"]).status == 403)
        #expect(try Self.get(server, "/snapshot.jpg", query: ["token": "s3cret"]).status == 200)
    }

    @Test func aSnapshotIsNeverMadeFromAFileOutsideTheStream() {
        #expect(StreamServer.resolve("seg/000001.m4s", against: "720p") == "720p/seg/000001.m4s")
        #expect(StreamServer.resolve("../../etc/passwd.m4s", against: "") == nil)
        #expect(StreamServer.resolve("http://elsewhere/seg.m4s", against: "") == nil)
    }

    static func fragment(_ start: Date, offset: Int) -> RecordingFileSummary.Fragment {
        RecordingFileSummary.Fragment(offset: offset, byteCount: 100, start: start, durationSeconds: 2)
    }

    @Test func aThumbnailIsOfTheFragmentHoldingTheMoment() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var first = RecordingFileSummary()
        first.initByteCount = 50
        first.fragments = [Self.fragment(start, offset: 50), Self.fragment(start.addingTimeInterval(2), offset: 150)]
        var second = first
        second.fragments = [Self.fragment(start.addingTimeInterval(10), offset: 50)]
        let files = [(path: "b.mp4", summary: second), (path: "a.mp4", summary: first)]

        let inside = RecordingRanges.fragment(at: start.addingTimeInterval(3.5), in: files)
        #expect(inside?.path == "a.mp4" && inside?.fragment.offset == 150 && inside?.initByteCount == 50)
        #expect(RecordingRanges.fragment(at: start.addingTimeInterval(10.5), in: files)?.path == "b.mp4")
        // To the millisecond, as the index publishes a start.
        #expect(RecordingRanges.fragment(at: start.addingTimeInterval(-0.0005), in: files)?.fragment.offset == 50)
        // In the gap between the files, before the first, after the last: none.
        #expect(RecordingRanges.fragment(at: start.addingTimeInterval(7), in: files) == nil)
        #expect(RecordingRanges.fragment(at: start.addingTimeInterval(-1), in: files) == nil)
        #expect(RecordingRanges.fragment(at: start.addingTimeInterval(13), in: files) == nil)
    }

    @Test func theThumbnailCacheKeepsTheLatest() {
        var cache = PictureCache(capacity: 2)
        cache.keep([1], key: "a")
        cache.keep([2], key: "b")
        cache.keep([3], key: "c")
        #expect(cache.picture("a") == nil && cache.picture("b") == [2] && cache.picture("c") == [3])
    }
}
