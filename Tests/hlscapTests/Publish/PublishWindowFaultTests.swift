import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// Live streams with the default sliding window of 6 segments, published through a proxy that
/// fails 30 % of requests (503, a stall past the timeout, a reset) while a poller reads the
/// origin's playlist every 50 ms: the origin never lists a file it lacks (nor deletes one its
/// playlist still lists), gets every segment, ends with ENDLIST, and hlscap exits 0. Each test has
/// its own origin, proxy and poller, so `make test` runs them side by side.
@Suite struct PublishWindowFaultTests {
    static let failShare = "0.3"
    static let latencySeconds = "0.05"
    static let requestTimeoutSeconds = "1.5"
    static let stallSeconds = "3"
    static let drainTimeoutSeconds = "60"
    static let segmentSeconds = 2

    /// `make soak-publish` sets these to 10 runs of 60 s; the test suite runs 2 of 30 s.
    static let soakRuns = Int(ProcessInfo.processInfo.environment["HLSCAP_SOAK_PUBLISH_RUNS"] ?? "") ?? 2
    static let soakSeconds = Int(ProcessInfo.processInfo.environment["HLSCAP_SOAK_PUBLISH_SECONDS"] ?? "") ?? 30

    /// Runs `hlscap live` for `seconds` through the proxy and checks the origin at the end. With
    /// `defaultTimeout`, hlscap waits its default 10 s for an answer and the proxy's stalls last 12 s:
    /// a stalled playlist leaves the origin's copy older than the retention time.
    static func publishLive(seconds: Int, seed: Int, outage: String?, defaultTimeout: Bool = false) throws -> String {
        let rig = try FaultyOrigin(proxyArguments: [
            "--fail-share", failShare, "--seed", String(seed), "--latency", latencySeconds,
            "--stall", defaultTimeout ? "12" : stallSeconds] + (outage.map { ["--outage", $0] } ?? []),
            slidingWindow: true, pollerTimeoutSeconds: seconds + 180)
        defer { rig.stop() }
        let timeout = defaultTimeout ? [] : ["--publish-timeout", requestTimeoutSeconds]
        let result = try ExternalTools.runHlscap([
            "live", "--video", "test", "--audio", "test", "--size", "320x180", "--duration", String(seconds),
            "--quiet", "--publish", rig.proxyURL + "live/", "--publish-drain-timeout", drainTimeoutSeconds] + timeout,
            timeoutSeconds: Double(seconds) + 240)
        #expect(result.succeeded, "exit \(result.exitStatus): \(result.stderr)")

        let faults = ["503", "stall", "reset"] + (outage == nil ? [] : ["outage"])
        let (polled, counts) = try rig.expectSafeListingUnderFaults(minimumVersions: 5, faults: faults)
        let segmentCount = seconds / segmentSeconds
        #expect(polled["segmentsSeen"] as? Int == segmentCount, "every segment was listed on the origin: \(polled)")
        let playlist = try rig.origin.storedPlaylist("live/playlist.m3u8")
        try ExternalTools.validateStream(rig.origin.url + "live/playlist.m3u8")
        #expect(playlist.endList)
        #expect(playlist.segments.count == 6)
        #expect(playlist.segments.last?.uri == StreamLayout.segmentPath(segmentCount))
        for segment in playlist.segments {
            #expect(rig.origin.stored("live/" + segment.uri) != nil, "\(segment.uri)")
        }
        return "seed \(seed): \(polled["versions"] ?? 0) versions, \(polled["segmentsSeen"] ?? 0) segments seen, "
            + "proxy \(counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))"
    }

    @Test func anOutageShorterThanTheBacklogLosesNothingWhateverTheWindow() throws {
        // Down for 15 s from 8 s after the first upload: longer than the 12 s window.
        print(try Self.publishLive(seconds: 40, seed: 21, outage: "8:15"))
    }

    @Test func failedRequestsNeverMakeTheOriginListAMissingFileAndTheFinalPlaylistArrives() throws {
        for run in 0..<Self.soakRuns {
            print(try Self.publishLive(seconds: Self.soakSeconds, seed: 100 + run, outage: nil,
                                       defaultTimeout: run % 2 == 1))
        }
    }

    /// Most playlist uploads fail (and only they): the origin's playlist stays behind the local one
    /// for longer than the retention time of a window of 3. Deleting by the local playlist would take
    /// segments the origin still lists; the final playlist must still arrive.
    @Test func theOriginKeepsEveryFileItsStalePlaylistListsAndGetsTheFinalOne() throws {
        let rig = try FaultyOrigin(proxyArguments: [
            "--fail-share", "0.75", "--paths", "\\.m3u8$", "--seed", "5", "--latency", Self.latencySeconds,
            "--stall", Self.stallSeconds], slidingWindow: true, pollerTimeoutSeconds: 300)
        defer { rig.stop() }
        let result = try ExternalTools.runHlscap([
            "live", "--video", "test", "--audio", "test", "--size", "320x180", "--duration", "40", "--window", "3",
            "--quiet", "--publish", rig.proxyURL + "live/", "--publish-timeout", Self.requestTimeoutSeconds,
            "--publish-drain-timeout", Self.drainTimeoutSeconds], timeoutSeconds: 300)
        #expect(result.succeeded, "exit \(result.exitStatus): \(result.stderr)")
        let (polled, counts) = try rig.expectSafeListingUnderFaults(minimumVersions: 3, faults: ["503", "stall", "reset"])
        print("stale playlist: \(polled["versions"] ?? 0) versions, \(polled["segmentsSeen"] ?? 0) segments seen, \(counts)")
        let playlist = try rig.origin.storedPlaylist("live/playlist.m3u8")
        try ExternalTools.validateStream(rig.origin.url + "live/playlist.m3u8")
        #expect(playlist.endList)
        #expect(playlist.segments.last?.uri == StreamLayout.segmentPath(20))
    }
}
