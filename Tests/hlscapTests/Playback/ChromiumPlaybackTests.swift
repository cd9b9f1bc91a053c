import Foundation
import HLSTestSupport
import Testing

/// Headless Chromium plays each packaged stream natively (`<video src=playlist.m3u8>`) to the end.
/// Serialized: one browser at a time on a two-core machine. Chromium on Linux has no HEVC decoder: HEVC
/// streams are checked with ffmpeg and GStreamer instead (HEVCCopyTests).
@Suite(.serialized) struct ChromiumPlaybackTests {
    @Test(arguments: CopyModeStreamTests.copyableFixtures.filter { !CopyModeStreamTests.hevcFixtures.contains($0) })
    func chromiumPlaysTheStreamToTheEnd(fixture: String) throws {
        let stream = try PackagedStream.package(fixture)
        defer { stream.remove() }
        let playback = try ExternalTools.chromiumPlays(directory: stream.directory)
        #expect(playback.ok, "\(fixture): \(playback.report)")
    }
}
