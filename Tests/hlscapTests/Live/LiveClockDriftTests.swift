import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// A microphone whose sample clock runs 0.5 % fast or slow against the camera's (the test tone from
/// such a clock, `--audio test:±5000ppm`): counted at its nominal rate its audio would be 0.3 s off the
/// picture after a minute. hlscap measures the rate and resamples, so each beep stays within 10 ms of
/// its flash from start to end, with no sample lost or made up, and says what it measured.
/// `HLSCAP_DRIFT_SECONDS` sets the length: `make clock-drift` runs ten minutes, `make test` 20 s.
@Suite(.serialized) struct LiveClockDriftTests {
    static let seconds = Int(ProcessInfo.processInfo.environment["HLSCAP_DRIFT_SECONDS"] ?? "") ?? 20

    @Test(arguments: [5_000, -5_000])
    func aDriftingMicrophoneStaysInSyncWithThePicture(partsPerMillion: Int) throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let result = try ExternalTools.runHlscap([
            "live", "--video", "test", "--audio", String(format: "test:%+dppm", partsPerMillion), "--size", "320x180",
            "--duration", String(Self.seconds), "--window", "0", "--out", stream.path],
            timeoutSeconds: Double(Self.seconds) + LiveStream.stopSeconds)
        #expect(result.exitStatus == 0, "\(result.stderr)")

        // The summary reports the rate it measured, and no sample lost in an overrun.
        let measured = try #require(result.stdout.firstMatch(of: /audio clock ([-+][0-9]+) ppm, ([0-9]+) resyncs/),
                                    "\(result.stdout)")
        #expect(abs(Int(measured.1)! - partsPerMillion) <= 50, "\(result.stdout)")
        #expect(measured.2 == "0", "\(result.stdout)")

        try ExternalTools.validateStream(stream)
        let playlist = stream.appendingPathComponent("playlist.m3u8").path
        let sync = try ExternalTools.avSync(path: playlist, maxOffsetMilliseconds: 10, minimumPairs: Self.seconds - 2)
        #expect(sync.ok, "\(sync.report)")
        print("clock drift \(partsPerMillion) ppm over \(Self.seconds) s: \(sync.report)")
        // Stretched, not padded or cut: the audio lasts as long as the picture, give or take three AAC
        // frames (it starts a frame early, and ends with the frame the stop fell in); counted at the
        // nominal rate it would be 0.5 % longer or shorter.
        let audio = try ExternalTools.presentationSpanSeconds(path: playlist, stream: "a:0")
        let video = try ExternalTools.presentationSpanSeconds(path: playlist, stream: "v:0")
        #expect(abs(audio - video) <= 3 * 1024 / 48_000, "audio \(audio) s, video \(video) s")
    }
}
