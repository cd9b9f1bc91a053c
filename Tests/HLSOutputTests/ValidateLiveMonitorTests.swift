import Foundation
import HLSTestSupport
import Synchronization
import Testing
@testable import HLSKit
@testable import HLSOutput

/// The live rules over successive versions of a playlist (Fixtures/validate/live-*/playlist.N.m3u8),
/// served by a loader that hands out the next version on each reload, on a clock that only moves
/// when the monitor sleeps.
@Suite struct ValidateLiveMonitorTests {
    /// Serves `playlist.m3u8` as the fixture's versions in turn (the last one for ever), and any
    /// other file from the fixture directory.
    final class VersionedLoader: ResourceLoader {
        let directory: URL
        let fixture: String
        let versions: [[UInt8]]
        private let state = Mutex((reloads: 0, clock: 0.0, requested: [String]()))

        init(fixture: String) throws {
            self.fixture = fixture
            directory = ExternalTools.fixturesDirectory.appendingPathComponent("validate/\(fixture)")
            var versions: [[UInt8]] = []
            while let data = try? Data(contentsOf: directory.appendingPathComponent("playlist.\(versions.count + 1).m3u8")) {
                versions.append([UInt8](data))
            }
            self.versions = versions
        }

        /// The fixture directory as if served at the origin's /validate/.
        var playlistURL: URL { URL(string: "http://origin.invalid/validate/\(fixture)/playlist.m3u8")! }
        var now: Double { state.withLock { $0.clock } }
        var requested: [String] { state.withLock { $0.requested } }
        func sleep(_ seconds: Double) { state.withLock { $0.clock += seconds } }

        func load(_ url: URL) throws(LoadError) -> [UInt8] {
            let name = url.lastPathComponent
            state.withLock { $0.requested.append(url.query.map { "\(name)?\($0)" } ?? name) }
            if name == "playlist.m3u8" {
                let index = state.withLock { state in
                    defer { state.reloads += 1 }
                    return min(state.reloads, versions.count - 1)
                }
                return versions[index]
            }
            let file = ExternalTools.fixturesDirectory.appendingPathComponent(url.standardized.path).standardized
            guard let data = try? Data(contentsOf: file) else { throw .notFound("\(url) does not exist") }
            return [UInt8](data)
        }
    }

    func monitor(_ fixture: String, seconds: Double = 6) throws -> (findings: [Finding], versions: Int, loader: VersionedLoader) {
        let loader = try VersionedLoader(fixture: fixture)
        let monitor = LiveMonitor(loader: loader, url: loader.playlistURL, durationSeconds: seconds, file: "playlist.m3u8",
                                  now: { loader.now }, sleep: { loader.sleep($0) })
        let result = monitor.run()
        return (result.findings, result.versions, loader)
    }

    /// Each fixture followed as long as its versions last (a playlist that stops changing is stale).
    @Test(arguments: [("live-media-sequence", 2.0), ("live-target-duration", 2), ("live-playlist-type", 2),
                      ("live-stale", 6), ("live-retention", 2), ("live-blocking-reload", 1)])
    func eachFixtureBreaksItsRuleAlone(fixture: String, seconds: Double) throws {
        let result = try monitor(fixture, seconds: seconds)
        #expect(!result.findings.isEmpty)
        #expect(result.findings.allSatisfy { $0.rule == fixture }, "\(result.findings.map(\.message))")
    }

    @Test func aSequenceNumberThatGoesBackIsReportedWithBothNumbers() throws {
        let result = try monitor("live-media-sequence", seconds: 2)
        #expect(result.findings.map(\.message) == ["EXT-X-MEDIA-SEQUENCE went back from 2 to 1"])
        #expect(result.versions == 2)
    }

    @Test func reloadsFollowTheTargetDurationAndHalfOfItWhenNothingChanged() throws {
        // Target duration 1 s: reloads at 1 s after a change, then every 0.5 s while unchanged.
        let result = try monitor("live-stale", seconds: 4)
        #expect(result.loader.requested.count == 7)  // at 0, 1, 1.5, 2, 2.5, 3 and 3.5 s
        #expect(result.findings.map(\.message) == [
            "the playlist has not changed for 2.5 s, more than 1.5 target durations (1.5 s)"])
    }

    @Test func aRemovedSegmentThatCannotBeDownloadedBreaksRetention() throws {
        let result = try monitor("live-retention", seconds: 2)
        #expect(result.findings.count == 1)
        #expect(result.findings.first?.message.hasPrefix("gone.m4s was deleted as soon as it left the playlist") == true)
    }

    @Test func blockingReloadAsksForTheNextSegment() throws {
        let result = try monitor("live-blocking-reload", seconds: 1)
        #expect(result.loader.requested.contains("playlist.m3u8?_HLS_msn=4"))
        #expect(result.findings.first?.message.contains("_HLS_msn=4 was answered") == true)
    }

    @Test func aPlaylistThatGrowsAsItShouldHasNoFinding() throws {
        // live-media-sequence's versions in the right order: 1, then 2.
        let loader = try VersionedLoader(fixture: "live-media-sequence")
        let reversed = try VersionedLoader(fixture: "live-media-sequence")
        let ordered = OrderedLoader(inner: loader, versions: reversed.versions.reversed())
        let monitor = LiveMonitor(loader: ordered, url: loader.playlistURL, durationSeconds: 3, file: "playlist.m3u8",
                                  now: { loader.now }, sleep: { loader.sleep($0) })
        let result = monitor.run()
        #expect(result.findings.isEmpty, "\(result.findings.map(\.message))")
        #expect(result.versions == 2)
    }

    @Test func aSegmentDeletedBeforeItsRetentionTimeEndsIsReported() throws {
        // Segment 1 leaves at 1 s; its retention is 1 s + the 3 s playlist, so it must stay until 5 s.
        let loader = try VersionedLoader(fixture: "live-media-sequence")
        let deleting = OrderedLoader(inner: loader, versions: loader.versions.reversed(), deleting: "000001.m4s",
                                     after: 2.5, clock: { loader.now })
        let monitor = LiveMonitor(loader: deleting, url: loader.playlistURL, durationSeconds: 5, file: "playlist.m3u8",
                                  now: { loader.now }, sleep: { loader.sleep($0) })
        let retention = monitor.run().findings.filter { $0.rule == "live-retention" }
        #expect(retention.map(\.message) == [
            "../base/seg/000001.m4s was deleted before its retention time ended; keep it for 4.0 s after it leaves "
                + "(its duration plus the playlist's)"])
    }

    /// The fixture's versions in another order.
    final class OrderedLoader: ResourceLoader {
        let inner: VersionedLoader
        let versions: [[UInt8]]
        /// A file that disappears once `clock` passes `after`.
        let deleting: String?
        let after: Double
        let clock: @Sendable () -> Double
        private let reloads = Mutex(0)

        init(inner: VersionedLoader, versions: [[UInt8]], deleting: String? = nil, after: Double = 0,
             clock: @escaping @Sendable () -> Double = { 0 }) {
            self.inner = inner
            self.versions = versions
            self.deleting = deleting
            self.after = after
            self.clock = clock
        }

        func load(_ url: URL) throws(LoadError) -> [UInt8] {
            if url.lastPathComponent == deleting, clock() > after { throw .notFound("\(url) was deleted") }
            guard url.lastPathComponent == "playlist.m3u8" else { return try inner.load(url) }
            let index = reloads.withLock { count in
                defer { count += 1 }
                return min(count, versions.count - 1)
            }
            return versions[index]
        }
    }
}
