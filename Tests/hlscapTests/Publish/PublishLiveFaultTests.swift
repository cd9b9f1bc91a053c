import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// A 90 s live run published through a proxy that fails 30 % of requests and goes down for 20 s,
/// while a poller reads the origin's playlist every 50 ms: the origin must end up with every
/// segment, its playlist may never list a file it lacks, and the final playlist has ENDLIST.
@Suite(.serialized) struct PublishLiveFaultTests {
    static let liveSeconds = "90"
    static let failShare = "0.3"
    static let latencySeconds = "0.05"
    static let requestTimeoutSeconds = "1.5"
    static let stallSeconds = "3"
    /// Down from 10 s after the first upload, for 20 s.
    static let outage = "10:20"
    static let drainTimeoutSeconds = "90"

    @Test func aLiveStreamSurvivesFailuresAndAnOutageWithNothingLost() throws {
        let rig = try FaultyOrigin(proxyArguments: [
            "--fail-share", Self.failShare, "--seed", "11", "--latency", Self.latencySeconds,
            "--stall", Self.stallSeconds, "--outage", Self.outage])
        defer { rig.stop() }
        let origin = rig.origin
        let proxyURL = rig.proxyURL

        let result = try ExternalTools.runHlscap([
            "live", "--video", "test", "--audio", "test", "--size", "320x180", "--window", "0",
            "--duration", Self.liveSeconds, "--quiet", "--publish", proxyURL + "live/",
            "--publish-timeout", Self.requestTimeoutSeconds, "--publish-drain-timeout", Self.drainTimeoutSeconds],
            timeoutSeconds: 300)
        #expect(result.succeeded, "\(result.stderr)")
        #expect(result.stdout.contains("published to \(proxyURL)live/"), "\(result.stdout)")

        try rig.expectSafeListingUnderFaults(minimumVersions: 11)

        let playlist = try origin.storedPlaylist("live/playlist.m3u8")
        try ExternalTools.validateStream(origin.url + "live/playlist.m3u8")
        #expect(playlist.endList)
        #expect(playlist.playlistType == .event)
        #expect(playlist.segments.count == 45, "90 s in 2 s segments")
        for segment in playlist.segments {
            #expect(origin.stored("live/" + segment.uri) != nil, "\(segment.uri)")
        }
        let errors = try ExternalTools.ffmpegDecodeErrors(path: origin.url + "live/playlist.m3u8")
        #expect(errors.isEmpty, "\(errors)")
        #expect(try ExternalTools.ffprobeFrameCount(path: origin.url + "live/playlist.m3u8") == 90 * 30)
    }
}
