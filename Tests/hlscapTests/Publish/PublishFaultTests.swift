import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// Publishing through a proxy that fails 30 % of uploads (503, stalls past the client's timeout,
/// connection resets) and goes down for a few seconds, while a poller reads the origin's playlist
/// every 50 ms: nothing may be lost, and the playlist may never list a file the origin lacks.
@Suite(.serialized) struct PublishFaultTests {
    /// Keyframes every 0.5 s, so 0.5 s segments make many uploads and many playlist versions.
    static let pacedSeconds = 20
    static let segmentSeconds = "0.5"
    static let failShare = "0.3"
    /// Each upload waits this long in the proxy, so uploads overlap and finish out of order.
    static let latencySeconds = "0.1"
    static let requestTimeoutSeconds = "1.5"
    static let stallSeconds = "3"
    /// One outage, starting 2 s after the first upload, for 4 s.
    static let outage = "2:4"
    /// Generous for a loaded two-core machine; the run normally drains in about 10 s.
    static let drainTimeoutSeconds = "90"

    /// A 320×240 H.264/AAC recording with a keyframe every 15 frames, made for this test.
    static func makePacedRecording(in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("paced.mp4").path
        let result = try ExternalTools.run("ffmpeg", [
            "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", String(pacedSeconds),
            "-c:v", "libx264", "-preset", "ultrafast", "-g", "15", "-pix_fmt", "yuv420p", "-c:a", "aac", path])
        guard result.succeeded else { throw ExternalToolError.failed(command: "ffmpeg (paced recording)", result: result) }
        return path
    }

    @Test func everySegmentArrivesAndThePlaylistNeverListsAMissingFile() throws {
        let rig = try FaultyOrigin(proxyArguments: [
            "--fail-share", Self.failShare, "--seed", "8", "--latency", Self.latencySeconds,
            "--stall", Self.stallSeconds, "--outage", Self.outage])
        defer { rig.stop() }
        let origin = rig.origin
        let recording = try Self.makePacedRecording(in: origin.directory)

        let result = try ExternalTools.runHlscap([
            "file", recording, "--segment-duration", Self.segmentSeconds, "--publish", rig.proxyURL + "live/",
            "--publish-timeout", Self.requestTimeoutSeconds, "--publish-drain-timeout", Self.drainTimeoutSeconds])
        #expect(result.succeeded, "\(result.stderr)")

        // Packaging outruns the uploads, so how many versions of the origin's playlist the poller
        // reads depends on the machine's speed. Two, the final one and an earlier one, show that a
        // listing was read while segments were still in flight, which is what the check needs; two
        // fresh-clone runs of CI saw exactly two.
        try rig.expectSafeListingUnderFaults(minimumVersions: 2)

        let playlist = try origin.storedPlaylist("live/playlist.m3u8")
        try ExternalTools.validateStream(origin.url + "live/playlist.m3u8")
        #expect(playlist.endList)
        #expect(playlist.segments.count >= Self.pacedSeconds * 2 - 1)
        for segment in playlist.segments {
            #expect(origin.stored("live/" + segment.uri) != nil, "\(segment.uri)")
        }
        let errors = try ExternalTools.ffmpegDecodeErrors(path: origin.url + "live/playlist.m3u8")
        #expect(errors.isEmpty, "\(errors)")
    }
}

/// An nginx origin behind the fault-injecting proxy, and a poller reading the origin's
/// `live/playlist.m3u8` every 50 ms (unless told otherwise) the whole time.
final class FaultyOrigin {
    let origin: OriginFixture
    let proxy: BackgroundTool
    let poller: BackgroundTool
    /// Where hlscap publishes: the proxy in front of the origin.
    let proxyURL: String

    /// `slidingWindow`: the playlist is a live window, whose head may leave as it slides.
    init(proxyArguments: [String], slidingWindow: Bool = false, pollerTimeoutSeconds: Int = 120,
         pollerIntervalSeconds: Double = 0.05) throws {
        origin = try OriginFixture()
        do {
            proxy = try BackgroundTool("fault_proxy.py", [origin.url] + proxyArguments, in: origin.directory)
            proxyURL = try proxy.announcedURL(prefix: "proxy")
            poller = try BackgroundTool("origin_poller.py", [
                origin.url + "live/playlist.m3u8", "--interval", String(pollerIntervalSeconds),
                "--timeout", String(pollerTimeoutSeconds)]
                + (slidingWindow ? ["--sliding"] : []), in: origin.directory)
        } catch {
            origin.stop()
            throw error
        }
    }

    /// The poller saw the origin's playlist grow at least `minimumVersions` times and never list a
    /// file the origin lacked, while the proxy injected every kind of fault in `faults`. Returns the
    /// poller's report and the proxy's counts.
    @discardableResult
    func expectSafeListingUnderFaults(minimumVersions: Int, faults: [String] = ["503", "stall", "reset", "outage"])
        throws -> (polled: [String: Any], counts: [String: Int]) {
        #expect(poller.waitForExit(timeoutSeconds: 10) == 0, "\(poller.output)")
        let polled = try JSONSerialization.jsonObject(with: Data(poller.output.utf8)) as? [String: Any] ?? [:]
        #expect((polled["violations"] as? [String])?.isEmpty == true, "\(poller.output)")
        #expect((polled["versions"] as? Int ?? 0) >= minimumVersions,
                "the poller saw the playlist grow: \(poller.output)")

        proxy.stop()
        let line = try #require(proxy.output.split(separator: "\n").last.map { Data($0.utf8) })
        let counts = try #require(try JSONSerialization.jsonObject(with: line) as? [String: Int])
        for fault in faults {
            #expect(counts[fault, default: 0] > 0, "the proxy injected \(fault): \(counts)")
        }
        return (polled, counts)
    }

    func stop() {
        poller.stop()
        proxy.stop()
        origin.stop()
    }
}
