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
        let origin = try OriginFixture()
        defer { origin.stop() }
        let proxy = try BackgroundTool("fault_proxy.py", [
            origin.url, "--fail-share", Self.failShare, "--seed", "11", "--latency", Self.latencySeconds,
            "--stall", Self.stallSeconds, "--outage", Self.outage], in: origin.directory)
        defer { proxy.stop() }
        let proxyURL = try proxy.announcedURL(prefix: "proxy")
        let poller = try BackgroundTool("origin_poller.py", [origin.url + "live/playlist.m3u8", "--interval", "0.05"],
                                        in: origin.directory)
        defer { poller.stop() }

        let result = try ExternalTools.runHlscap([
            "live", "--video", "test", "--audio", "test", "--size", "320x180", "--window", "0",
            "--duration", Self.liveSeconds, "--quiet", "--publish", proxyURL + "live/",
            "--publish-timeout", Self.requestTimeoutSeconds, "--publish-drain-timeout", Self.drainTimeoutSeconds],
            timeoutSeconds: 300)
        #expect(result.succeeded, "\(result.stderr)")
        #expect(result.stdout.contains("published to \(proxyURL)live/"), "\(result.stdout)")

        try PublishFaultTests.expectSafeListingUnderFaults(poller: poller, proxy: proxy, minimumVersions: 11)

        let playlist = try origin.storedPlaylist("live/playlist.m3u8")
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
