import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// SIGUSR1 on `hlscap live`: an operator marks a scene change, and a segment starts at the next frame.
@Suite(.serialized) struct LiveMarkTests {
    static let framesPerSecond = 30.0
    static let segmentSeconds = 2.0
    /// Slack for the signal's delivery and the millisecond PROGRAM-DATE-TIME, beside the frame itself.
    static let deliverySeconds = 0.025

    @Test func sigusr1StartsASegmentAtTheNextFrame() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let hlscap = try ExternalTools.startHlscap(["live", "--video", "test", "--audio", "test", "--size", "320x240",
                                                    "--window", "0", "--duration", "8", "--out", stream.path, "--quiet"])
        try #require(LiveStream.waitForSegments(2, in: stream, of: hlscap), "\(hlscap.stderr)")
        // Between two grid boundaries, so the mark cannot coincide with one.
        Thread.sleep(forTimeInterval: 0.7)
        let markedAt = Date()
        hlscap.send(SIGUSR1)
        let result = hlscap.finish(timeoutSeconds: LiveStream.stopSeconds)
        #expect(result.exitStatus == 0 && !result.timedOut, "\(result.stderr)")
        try ExternalTools.validateStream(stream)

        let playlist = try LiveStream.playlist(in: stream)
        let times = playlist.segments.compactMap(\.programDateTime)
        try #require(times.count == playlist.segments.count, "\(playlist.render())")
        let offGrid = SegmentGridCheck.startsOffTheGrid(times, segmentSeconds: Self.segmentSeconds)
        #expect(offGrid.count == 1, "one segment starts off the 2 s grid: \(playlist.render())")
        if let cut = offGrid.first {
            let late = cut.timeIntervalSince(markedAt)
            #expect(late >= -Self.deliverySeconds && late <= 1 / Self.framesPerSecond + Self.deliverySeconds,
                    "the segment starts \(late) s after the signal")
        }
        let problems = try PackagedStream(directory: stream, result: result).segmentProblems()
        #expect(problems.isEmpty, "\(problems)")
        #expect(playlist.segments.allSatisfy { Int($0.durationSeconds.rounded()) <= playlist.targetDurationSeconds })
    }
}
