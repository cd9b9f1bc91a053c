import Foundation
import HLSTestSupport
import Testing

/// Headless Chromium plays each packaged stream natively (`<video src=playlist.m3u8>`) to the end.
/// Serialized: one browser at a time on a two-core machine.
@Suite(.serialized) struct ChromiumPlaybackTests {
    @Test(arguments: CopyModeStreamTests.copyableFixtures)
    func chromiumPlaysTheStreamToTheEnd(fixture: String) throws {
        let stream = try PackagedStream.package(fixture)
        defer { stream.remove() }
        let playback = try ExternalTools.chromiumPlays(directory: stream.directory)
        #expect(playback.ok, "\(fixture): \(playback.report)")
    }
}
