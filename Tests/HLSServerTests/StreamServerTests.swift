import Foundation
import HLSKit
import Synchronization
import Testing
@testable import HLSServer

@Suite struct StreamServerTests {
    @Test(arguments: [
        ("/playlist.m3u8", "playlist.m3u8"), ("/720p/seg/000001.m4s", "720p/seg/000001.m4s"),
        ("/audio/en/init-2.mp4", "audio/en/init-2.mp4"), ("/part/000003.2.m4s", "part/000003.2.m4s"),
    ])
    func streamFilesAreServed(request: String, path: String) {
        #expect(StreamServer.streamPath(request) == path)
    }

    @Test(arguments: ["/../etc/passwd", "/seg/../../secret.m3u8", "/.playlist.m3u8.tmp", "/seg//000001.m4s",
                      "/playlist.m3u8/", "/notes.txt", "/a/b/c/d/e/seg.m4s", "/seg/000001.m4s.tmp", "/x/../init.mp4",
                      "playlist.m3u8", "/play list.m3u8", "/part/00000a.1.m4s", "/init.mp4\u{0}"])
    func otherPathsAreNot(request: String) {
        #expect(StreamServer.streamPath(request) == nil)
    }

    @Test func byteRanges() {
        #expect(StreamServer.byteRange("bytes=0-99", size: 1000) == .part(offset: 0, length: 100))
        #expect(StreamServer.byteRange("bytes=900-", size: 1000) == .part(offset: 900, length: 100))
        #expect(StreamServer.byteRange("bytes=-10", size: 1000) == .part(offset: 990, length: 10))
        #expect(StreamServer.byteRange("bytes=990-2000", size: 1000) == .part(offset: 990, length: 10))
        #expect(StreamServer.byteRange("bytes=1000-", size: 1000) == .unsatisfiable)
        #expect(StreamServer.byteRange("bytes=0-1,5-6", size: 1000) == .whole)
        #expect(StreamServer.byteRange("items=0-1", size: 1000) == .whole)
    }

    @Test func gzipIsSentOnlyToClientsThatTakeIt() {
        #expect(ServerHeaders.acceptsGzip("gzip, deflate, br"))
        #expect(ServerHeaders.acceptsGzip("br;q=1.0, gzip;q=0.8"))
        #expect(!ServerHeaders.acceptsGzip("gzip;q=0"))
        #expect(!ServerHeaders.acceptsGzip("identity"))
        #expect(!ServerHeaders.acceptsGzip(nil))
        // Lists without parameters, read by bytes.
        for accepted in ["gzip", "GZip", " x-gzip ", "deflate,gzip", "br,\tgzip\t, zstd", "identity, , gzip"] {
            #expect(ServerHeaders.acceptsGzip(accepted), "\(accepted)")
        }
        for refused in ["", " ", ",,", "gzipx", "g zip", "deflate, br", "x-gzip-2", "gzip\u{0}"] {
            #expect(!ServerHeaders.acceptsGzip(refused), "\(refused)")
        }
    }

    @Test func httpDatesRoundTrip() {
        let text = ServerHeaders.httpDate(secondsSince1970: 784_111_777)
        #expect(text == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(ServerHeaders.parseHTTPDate(text) == 784_111_777)
        #expect(ServerHeaders.parseHTTPDate("yesterday") == nil)
        // A year or an hour beyond what `tm` holds trapped converting to Int32.
        #expect(ServerHeaders.parseHTTPDate("Sun, 06 Nov 99999999999 08:49:37 GMT") == nil)
        #expect(ServerHeaders.parseHTTPDate("Sun, 06 Nov 1994 99999999999:49:37 GMT") == nil)
    }

    static func stream(targetSeconds: Int = 2) -> LowLatencyStream {
        let stream = LowLatencyStream(metrics: ServerMetrics())
        stream.begin([.init(directory: "", base: MediaPlaylist(targetDurationSeconds: targetSeconds, mediaSequence: 1))],
                     partTargetSeconds: 0.334)
        return stream
    }

    /// Runs a reply: the response at once, or once `later` answers (nil if it has not within `seconds`).
    static func answer(_ reply: HTTPReply, within seconds: Double = 5) -> HTTPResponse? {
        switch reply {
        case .now(let response):
            return response
        case .later(let register):
            let answered = Mutex<HTTPResponse?>(nil)
            let done = DispatchSemaphore(value: 0)
            register { response in
                answered.withLock { $0 = response }
                done.signal()
            }
            _ = done.wait(timeout: .now() + seconds)
            return answered.withLock { $0 }
        }
    }

    @Test func aBlockingReloadIsAnsweredWhenItsPartArrives() {
        let stream = Self.stream()
        let reply = stream.playlistReply(rendition: 0, query: ["_HLS_msn": "1", "_HLS_part": "0"], acceptsGzip: false)
        guard case .later = reply else {
            Issue.record("the part does not exist yet: the request must wait")
            return
        }
        let started = Date()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
            stream.addPart(rendition: 0, position: .init(sequenceNumber: 1, part: 0), durationSeconds: 0.333,
                           independent: true, bytes: [1, 2, 3])
        }
        let response = Self.answer(reply)
        #expect(response?.status == 200)
        // Answered by the part, not by the timeout of three target durations (6 s here); the margin is
        // for a machine slowed down by ThreadSanitizer and other tests.
        #expect(Date().timeIntervalSince(started) < 2)
        let text = response.map { if case .bytes(let bytes) = $0.body { String(decoding: bytes, as: UTF8.self) } else { "" } }
        #expect(text?.contains("part/000001.0.m4s") == true, "\(text ?? "")")
        #expect(response?.header("Cache-Control") == "public, max-age=1")
    }

    @Test func waitersForTheSameFormShareOneAnswerAndEachGetsThePlaylistItWaitedFor() throws {
        let stream = Self.stream()
        let queries = [["_HLS_msn": "1", "_HLS_part": "0"], ["_HLS_msn": "1", "_HLS_part": "1"]]
        // Three waiters for each form: two parts, plain and gzipped.
        let forms = queries.flatMap { query in [false, true].map { (query: query, gzip: $0) } }
        let answers = Mutex<[Int: [HTTPResponse]]>([:])
        for (index, form) in forms.enumerated() {
            for _ in 0..<3 {
                guard case .later(let register) = stream.playlistReply(rendition: 0, query: form.query,
                                                                       acceptsGzip: form.gzip) else {
                    Issue.record("the part does not exist yet: the request must wait")
                    return
                }
                register { response in answers.withLock { $0[index, default: []].append(response) } }
            }
        }
        for part in 0..<2 {
            stream.addPart(rendition: 0, position: .init(sequenceNumber: 1, part: part), durationSeconds: 0.333,
                           independent: part == 0, bytes: [UInt8(part)])
            let answered = answers.withLock { $0 }
            #expect(answered.keys.sorted() == Array(0..<(2 * part + 2)))
            let plain = try #require(answered[2 * part]), packed = try #require(answered[2 * part + 1])
            #expect(plain.count == 3 && plain.allSatisfy { $0 == plain[0] })
            #expect(packed.count == 3 && packed.allSatisfy { $0 == packed[0] })
            let text = plain.first.map { if case .bytes(let bytes) = $0.body { String(decoding: bytes, as: UTF8.self) } else { "" } }
            #expect(text?.contains("part/000001.\(part).m4s") == true, "\(text ?? "")")
            #expect(packed.first?.header("Content-Encoding") == "gzip")
            #expect(packed.first?.header("ETag") == plain.first?.header("ETag").map { String($0.dropLast()) + "-gz\"" })
        }
    }

    /// The playlist is rendered and gzipped once per change of the stream: the same answer until a part
    /// or segment arrives, then the new playlist, in each form asked for.
    @Test func aLivePlaylistIsMadeAgainOnlyWhenThePartsChange() throws {
        let stream = Self.stream()
        func playlist(gzip: Bool, query: [String: String] = [:]) throws -> HTTPResponse {
            try #require(Self.answer(stream.playlistReply(rendition: 0, query: query, acceptsGzip: gzip)))
        }
        func text(_ response: HTTPResponse) -> String {
            guard case .bytes(let bytes) = response.body else { return "" }
            return String(decoding: bytes, as: UTF8.self)
        }
        for part in 0..<3 {
            stream.addPart(rendition: 0, position: .init(sequenceNumber: 1, part: part), durationSeconds: 0.334,
                           independent: part == 0, bytes: [UInt8(part)])
            let plain = try playlist(gzip: false)
            #expect(text(plain).components(separatedBy: "#EXT-X-PART:").count == part + 2, "\(text(plain))")
            #expect(try playlist(gzip: false) == plain)
            let packed = try playlist(gzip: true)
            #expect(packed.header("Content-Encoding") == "gzip")
            #expect(packed.body == .bytes(try #require(Gzip.compress(Array(text(plain).utf8)))))
            #expect(try playlist(gzip: true) == packed)
            let blocking = try playlist(gzip: false, query: ["_HLS_msn": "1", "_HLS_part": "\(part)"])
            #expect(blocking.body == plain.body && blocking.header("Cache-Control") == "public, max-age=1")
            #expect(plain.header("Cache-Control") == "no-cache")
        }
        stream.update(rendition: 0, base: MediaPlaylist(targetDurationSeconds: 2, mediaSequence: 1, segments: [
            .init(uri: "seg/000001.m4s", durationSeconds: 1.002),
        ]))
        #expect(text(try playlist(gzip: false)).contains("seg/000001.m4s"))
    }

    @Test func theHintedPartIsSentOnceItExists() {
        let stream = Self.stream()
        let reply = stream.partReply(rendition: 0, position: .init(sequenceNumber: 1, part: 0))
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) {
            stream.addPart(rendition: 0, position: .init(sequenceNumber: 1, part: 0), durationSeconds: 0.333,
                           independent: true, bytes: [7, 8, 9])
        }
        let response = Self.answer(reply)
        #expect(response?.status == 200 && response?.body == .bytes([7, 8, 9]))
        // A part far ahead is not waited for.
        #expect(Self.answer(stream.partReply(rendition: 0, position: .init(sequenceNumber: 5, part: 0)))?.status == 404)
    }

    @Test func aRequestNotSatisfiedWithinThreeTargetDurationsGets503() {
        let stream = Self.stream(targetSeconds: 1)
        let started = Date()
        let response = Self.answer(stream.playlistReply(rendition: 0, query: ["_HLS_msn": "2"], acceptsGzip: false),
                                   within: 6)
        #expect(response?.status == 503)
        // Not before the timeout; after it by no more than a loaded machine (sanitizers, tests beside) delays a timer.
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed >= 2.9 && elapsed < 5, "\(elapsed) s")
    }

    @Test func theEndAnswersEveryWaitingRequest() {
        let stream = Self.stream()
        let reply = stream.playlistReply(rendition: 0, query: ["_HLS_msn": "1"], acceptsGzip: true)
        let ended = MediaPlaylist(targetDurationSeconds: 2, mediaSequence: 1, endList: true)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { stream.update(rendition: 0, base: ended) }
        let response = Self.answer(reply)
        #expect(response?.status == 200 && response?.header("Content-Encoding") == "gzip")
    }

    @Test func aPlaylistHeldInMemoryAnswers304ToItsOwnTag() throws {
        let stream = Self.stream()
        let server = StreamServer(root: "/nonexistent", lowLatency: stream, metrics: ServerMetrics())
        let first = try #require(Self.answer(server.handle(HTTPRequest(method: "GET", path: "/playlist.m3u8"))))
        let tag = try #require(first.header("ETag"))
        let again = Self.answer(server.handle(HTTPRequest(method: "GET", path: "/playlist.m3u8",
                                                          headers: ["if-none-match": tag])))
        #expect(again?.status == 304 && again?.body == .bytes([]))
        stream.addPart(rendition: 0, position: .init(sequenceNumber: 1, part: 0), durationSeconds: 0.333,
                       independent: true, bytes: [1])
        let changed = Self.answer(server.handle(HTTPRequest(method: "GET", path: "/playlist.m3u8",
                                                            headers: ["if-none-match": tag])))
        #expect(changed?.status == 200)
    }

    @Test func aPlaylistFileRewrittenIsServedAnewPlainAndGzipped() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("playlist-cache-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let server = StreamServer(root: root, metrics: ServerMetrics())
        func fetch(gzip: Bool) -> HTTPResponse? {
            Self.answer(server.handle(HTTPRequest(method: "GET", path: "/playlist.m3u8",
                                                  headers: gzip ? ["accept-encoding": "gzip"] : [:])))
        }
        for version in ["#EXTM3U\n#EXT-X-VERSION:7\n", "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-ENDLIST\n"] {
            // Written as the writer does: a new file renamed over the old one.
            try Array(version.utf8).withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: root + "/.p.tmp")) }
            #expect(rename(root + "/.p.tmp", root + "/playlist.m3u8") == 0)
            for _ in 0..<2 {
                let plain = try #require(fetch(gzip: false))
                #expect(plain.status == 200 && plain.header("Content-Encoding") == nil)
                #expect(plain.body == .bytes(Array(version.utf8)))
                let packed = try #require(fetch(gzip: true))
                #expect(packed.header("Content-Encoding") == "gzip")
                #expect(packed.body == .bytes(try #require(Gzip.compress(Array(version.utf8)))))
                #expect(packed.header("ETag") == plain.header("ETag").map { String($0.dropLast()) + "-gz\"" })
            }
        }
    }
}
