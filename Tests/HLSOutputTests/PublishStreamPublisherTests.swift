import Foundation
import Testing
@testable import HLSKit
@testable import HLSOutput

/// An origin in memory behind a transport that fails requests as scripted, answering on other threads.
final class ScriptedOrigin: PublishTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var files: [String: Data] = [:]
    /// Answers to give, in order, to requests for a path before it is stored.
    private var failures: [String: [PublishResponse]]
    private let failEverything: Bool
    private var sent: [PublishRequest] = []
    private var versions: [(text: String, storedPaths: Set<String>)] = []

    init(failures: [String: [PublishResponse]] = [:], failEverything: Bool = false) {
        self.failures = failures
        self.failEverything = failEverything
    }

    func send(_ request: PublishRequest, completion: @escaping @Sendable (PublishResponse) -> Void) {
        let response: PublishResponse = lock.withLock {
            sent.append(request)
            let path = String(request.url.path.dropFirst("/live/".count))
            if failEverything { return .noResponse("connection refused", permanent: false) }
            if let next = failures[path]?.first {
                failures[path]?.removeFirst()
                return next
            }
            switch request.method {
            case .put:
                files[path] = request.body
                if path.hasSuffix(".m3u8") {
                    versions.append((String(decoding: request.body, as: UTF8.self), Set(files.keys)))
                }
                return .status(201)
            case .delete:
                return files.removeValue(forKey: path) == nil ? .status(404) : .status(204)
            case .get, .post:
                return .status(405)
            }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int.random(in: 0...5))) {
            completion(response)
        }
    }

    var storedPaths: Set<String> { lock.withLock { Set(files.keys) } }

    /// Every request, in the order it came.
    var requests: [PublishRequest] { lock.withLock { sent } }

    /// Every playlist version stored, with the paths the origin held at that moment.
    var playlistVersions: [(text: String, storedPaths: Set<String>)] { lock.withLock { versions } }

    func file(_ path: String) -> Data? { lock.withLock { files[path] } }
}

@Suite("Publish: StreamPublisher")
struct PublishStreamPublisherTests {
    static let origin = URL(string: "http://origin.invalid/live/")!
    static let fastBackoff = Backoff(initialSeconds: 0.005, maximumSeconds: 0.02)
    static let segmentCount = 8

    /// Stores an init section and segments in a scratch directory, publishes them one by one
    /// with a growing playlist, then finishes.
    static func publish(to transport: ScriptedOrigin, headers: [HTTPHeader] = [],
                        drainTimeoutSeconds: Double = 10) throws -> (PublishReport, StreamPublisher) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("publish-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try DirectoryStore(root: root)
        let configuration = StreamPublisher.Configuration(
            origin: origin, headers: headers, limits: .init(maxConcurrentRequests: 3, backoff: fastBackoff),
            drainTimeoutSeconds: drainTimeoutSeconds)
        let publisher = StreamPublisher(configuration: configuration, store: store, transport: transport)
        try store.write(Array("init".utf8), to: "init.mp4")
        publisher.addFile("init.mp4")
        var segments: [MediaPlaylist.Segment] = []
        for number in 1...segmentCount {
            let path = StreamLayout.segmentPath(number)
            try store.write(Array("segment \(number)".utf8), to: path)
            publisher.addSegment(path, durationSeconds: 2)
            segments.append(.init(uri: path, durationSeconds: 2, mapURI: "init.mp4"))
            publisher.updatePlaylist(MediaPlaylist(targetDurationSeconds: 2, mediaSequence: 1, playlistType: .vod,
                                                   segments: segments, endList: true))
        }
        return (publisher.finish(), publisher)
    }

    static var allMediaPaths: Set<String> {
        Set(["init.mp4"] + (1...segmentCount).map(StreamLayout.segmentPath))
    }

    @Test func everyFileAndTheFinalPlaylistReachTheOrigin() throws {
        let origin = ScriptedOrigin()
        let (report, publisher) = try Self.publish(to: origin)
        #expect(report.isComplete, "\(report.undelivered)")
        #expect(origin.storedPaths == Self.allMediaPaths.union(["playlist.m3u8"]))
        #expect(origin.file(StreamLayout.segmentPath(3)) == Data("segment 3".utf8))
        let final = try MediaPlaylist.parse(String(decoding: try #require(origin.file("playlist.m3u8")), as: UTF8.self))
        #expect(final.endList)
        #expect(final.segments.map(\.uri) == (1...Self.segmentCount).map(StreamLayout.segmentPath))
        #expect(report.status.uploadedCount == Self.segmentCount + 1)
        #expect(report.status.uploadedBytes == origin.requests.filter { !$0.url.path.hasSuffix(".m3u8") }
                    .reduce(0) { $0 + $1.body.count })
        #expect(report.listingLatency.count == Self.segmentCount)
        // One PUT time per stored file and playlist version: every PUT of this origin succeeded.
        #expect(report.putLatency.count == origin.requests.filter { $0.method == .put }.count)
        #expect(report.putLatency.samplesSeconds.allSatisfy { $0 >= 0 })
        #expect(publisher.status == report.status)
    }

    @Test func playlistVersionsNeverListAFileTheOriginLacksAndOnlyGrow() throws {
        let failures: [String: [PublishResponse]] = [
            "init.mp4": [.noResponse("reset", permanent: false)],
            StreamLayout.segmentPath(1): [.status(503), .noResponse("timed out", permanent: false)],
            StreamLayout.segmentPath(4): [.status(429, retryAfterSeconds: 0.01), .status(500), .status(502)],
            "playlist.m3u8": [.status(503), .status(503)],
        ]
        let origin = ScriptedOrigin(failures: failures)
        let (report, _) = try Self.publish(to: origin)
        #expect(report.isComplete, "\(report.undelivered)")
        #expect(report.status.retryCount == 8)
        var previous: [String] = []
        for version in origin.playlistVersions {
            let listed = try MediaPlaylist.parse(version.text)
            let needed = Set(listed.segments.flatMap { [$0.uri] + ($0.mapURI.map { [$0] } ?? []) })
            #expect(needed.isSubset(of: version.storedPaths), "listed before stored: \(needed.subtracting(version.storedPaths))")
            let uris = listed.segments.map(\.uri)
            #expect(Array(uris.prefix(previous.count)) == previous)
            #expect(uris == uris.sorted())
            previous = uris
        }
        #expect(origin.playlistVersions.last.map { $0.text.hasSuffix("#EXT-X-ENDLIST\n") } == true)
        #expect(origin.playlistVersions.dropLast().allSatisfy { !$0.text.contains("#EXT-X-ENDLIST") })
    }

    @Test func requestsCarryTheGivenHeadersContentTypeAndCaching() throws {
        let origin = ScriptedOrigin()
        let authorization = HTTPHeader(name: "Authorization", value: "Bearer token")
        _ = try Self.publish(to: origin, headers: [authorization])
        for request in origin.requests {
            #expect(request.method == .put)
            #expect(request.headers.contains(authorization))
            let (contentType, cacheControl) = StreamPublisher.contentHeaders(forPath: request.url.path)
            #expect(request.headers.contains(.init(name: "Content-Type", value: contentType)))
            #expect(request.headers.contains(.init(name: "Cache-Control", value: cacheControl)))
        }
        #expect(origin.requests.first?.url.absoluteString == "http://origin.invalid/live/init.mp4")
    }

    @Test func anUnreachableOriginIsReportedAfterTheDrainTimeout() throws {
        let origin = ScriptedOrigin(failEverything: true)
        // Longer than the first backoff (0.25 s), so every upload is tried at least twice.
        let (report, _) = try Self.publish(to: origin, drainTimeoutSeconds: 1)
        #expect(!report.isComplete)
        #expect(Set(report.undelivered.map(\.path)) == Self.allMediaPaths.union(["playlist.m3u8"]))
        #expect(report.status.uploadedCount == 0)
        #expect(report.status.queuedCount == Self.segmentCount + 1)
        #expect(report.status.retryCount > 0)
    }

    @Test func aRefusedUploadFailsWithoutRetries() throws {
        let origin = ScriptedOrigin(failures: [StreamLayout.segmentPath(2): [.status(403)]])
        let (report, _) = try Self.publish(to: origin)
        #expect(report.undelivered.map(\.path) == [StreamLayout.segmentPath(2), "playlist.m3u8"])
        #expect(origin.requests.count { $0.url.path.hasSuffix(StreamLayout.segmentPath(2)) } == 1)
        let onOrigin = try MediaPlaylist.parse(String(decoding: try #require(origin.file("playlist.m3u8")), as: UTF8.self))
        #expect(onOrigin.segments.map(\.uri) == [StreamLayout.segmentPath(1)])
        #expect(!onOrigin.endList)
    }

    @Test func theOriginDeletesWhatItsPlaylistDroppedAfterTheRetentionTime() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("publish-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try DirectoryStore(root: root)
        let origin = ScriptedOrigin()
        let publisher = StreamPublisher(configuration: .init(origin: Self.origin, drainTimeoutSeconds: 5),
                                        store: store, transport: origin)
        var live = LivePlaylist(targetDurationSeconds: 1, windowSize: 1)
        for number in 1...3 {
            let path = StreamLayout.segmentPath(number)
            try store.write([1, 2, UInt8(number)], to: path)
            publisher.addSegment(path, durationSeconds: 0.05)
            for removal in live.append(.init(uri: path, durationSeconds: 0.05)) {
                publisher.removeFile(removal.uri, afterSeconds: removal.retentionSeconds)
            }
            publisher.updatePlaylist(live.playlist)
            Thread.sleep(forTimeInterval: 0.1)
        }
        // Each deletion is due 0.1 s after the origin confirmed the playlist that dropped the segment,
        // later on a loaded machine: finishing at once waits for it, within the drain timeout.
        let report = publisher.finish()
        #expect(origin.storedPaths == ["playlist.m3u8", StreamLayout.segmentPath(3)])
        #expect(origin.requests.filter { $0.method == .delete }.map(\.url.lastPathComponent)
                    == ["000001.m4s", "000002.m4s"])
        #expect(report.removalsNotDone.isEmpty)
        #expect(try store.list("seg") == ["000003.m4s"])
    }

    @Test func aSlidingWindowOutlivesAnOutageAndLeavesOnlyItsListedFilesOnDisk() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("publish-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let store = try DirectoryStore(root: root)
        // Every segment's first two tries fail: the local window of 2 slides past segments not yet up.
        let failures = Dictionary(uniqueKeysWithValues: (1...6).map {
            (StreamLayout.segmentPath($0), [PublishResponse.status(503), .status(503)])
        })
        let transport = ScriptedOrigin(failures: failures)
        let configuration = StreamPublisher.Configuration(
            origin: Self.origin, limits: .init(maxConcurrentRequests: 3, backoff: Self.fastBackoff),
            drainTimeoutSeconds: 10)
        let publisher = StreamPublisher(configuration: configuration, store: store, transport: transport)
        try store.write(Array("init".utf8), to: "init.mp4")
        publisher.addFile("init.mp4")
        var live = LivePlaylist(targetDurationSeconds: 1, windowSize: 2)
        for number in 1...6 {
            let path = StreamLayout.segmentPath(number)
            try store.write(Array("segment \(number)".utf8), to: path)
            publisher.addSegment(path, durationSeconds: 0.05)
            for removal in live.append(.init(uri: path, durationSeconds: 0.05, mapURI: "init.mp4")) {
                publisher.removeFile(removal.uri, afterSeconds: removal.retentionSeconds)
            }
            publisher.updatePlaylist(live.playlist)
        }
        live.end()
        publisher.updatePlaylist(live.playlist)
        let report = publisher.finish()

        #expect(report.isComplete, "\(report.undelivered)")
        let listed = Set(transport.playlistVersions.flatMap { version in
            (try? MediaPlaylist.parse(version.text).segments.map(\.uri)) ?? []
        })
        #expect(listed == Set((1...6).map(StreamLayout.segmentPath)), "every segment was listed on the origin")
        #expect(try store.list("seg") == ["000005.m4s", "000006.m4s"], "what left the window is gone locally")
    }
}

@Suite struct PublishContentHeaderTests {
    @Test func contentTypeAndCachingFollowTheFileKind() {
        #expect(StreamPublisher.contentHeaders(forPath: "playlist.m3u8")
                    == ("application/vnd.apple.mpegurl", "no-cache"))
        #expect(StreamPublisher.contentHeaders(forPath: "init.mp4") == ("video/mp4", "max-age=31536000, immutable"))
        #expect(StreamPublisher.contentHeaders(forPath: "seg/000001.m4s")
                    == ("video/iso.segment", "max-age=31536000, immutable"))
    }
}
