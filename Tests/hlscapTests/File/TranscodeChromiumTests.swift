import Foundation
import HLSTestSupport
import Testing

/// Headless Chromium plays every transcoded stream natively to the end. Serialized: one browser at a
/// time on a two-core machine.
@Suite(.serialized) struct TranscodeChromiumTests {
    @Test(arguments: TranscodeInputs.cases + [JoinTests.mixedSizes, VariableFrameRateTests.kept])
    func chromiumPlaysTheStreamToTheEnd(testCase: TranscodeCase) throws {
        let stream = try TranscodeWorkspace.shared.stream(testCase)
        let playback = try ExternalTools.chromiumPlays(directory: stream.directory)
        #expect(playback.ok, "\(testCase.name): \(playback.report)")
    }
}
