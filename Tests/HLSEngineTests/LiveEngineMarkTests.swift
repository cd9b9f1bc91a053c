import Foundation
import HLSKit
import HLSMedia
import HLSOutput
import HLSTestSupport
import Testing
@testable import HLSEngine

/// An operator's mark (`startSegmentAtNextFrame`, SIGUSR1 on the command line): a segment starts at the
/// next frame, off the grid, and the grid goes on after it. Out of real time, the mark comes between two
/// known frames.
@Suite(.serialized) struct LiveEngineMarkTests {
    static let framesPerSecond = 30.0
    static let segmentSeconds = 2.0
    /// Slack for the millisecond PROGRAM-DATE-TIME, beside the frame itself.
    static let deliverySeconds = 0.025
    /// Between two grid boundaries (4 s and 6 s), so the mark cannot coincide with one.
    static let markAfterFrame = 140

    @Test func aMarkStartsASegmentAtTheNextFrame() throws {
        var run = EngineRun(store: MemoryStore(), seconds: 8, width: 320, height: 240)
        run.configuration.windowSize = 0
        let source = MarkingSource(try TestSource(run.test), markAfterFrame: Self.markAfterFrame)
        let engine = try run.makeEngine(sources: [source])
        source.mark = { engine.startSegmentAtNextFrame() }
        #expect(try engine.run().failure == nil)
        #expect(try run.validationErrors() == [])

        let playlist = try run.playlist()
        let times = playlist.segments.compactMap(\.programDateTime)
        try #require(times.count == playlist.segments.count, "\(playlist.render())")
        let offGrid = SegmentGridCheck.startsOffTheGrid(times, segmentSeconds: Self.segmentSeconds)
        #expect(offGrid.count == 1, "one segment starts off the 2 s grid: \(playlist.render())")
        if let cut = offGrid.first {
            // The mark came right after frame 140 (4.667 s), so before frame 141.
            let markedAt = times[0].addingTimeInterval(Double(Self.markAfterFrame) / Self.framesPerSecond)
            let late = cut.timeIntervalSince(markedAt)
            #expect(late >= -Self.deliverySeconds && late <= 1 / Self.framesPerSecond + Self.deliverySeconds,
                    "the segment starts \(late) s after the mark")
        }
        #expect(playlist.segments.allSatisfy { Int($0.durationSeconds.rounded()) <= playlist.targetDurationSeconds })
    }
}

/// The test source, marking the stream once right after handing on a given video frame (counted from 0).
final class MarkingSource: CaptureSource, @unchecked Sendable {
    private let inner: TestSource
    private let markAfterFrame: Int
    private var frames = 0
    /// Set before the engine starts the source; called on the source's thread.
    var mark: () -> Void = {}

    init(_ inner: TestSource, markAfterFrame: Int) {
        self.inner = inner
        self.markAfterFrame = markAfterFrame
    }

    var name: String { inner.name }
    var delivers: CaptureKinds { inner.delivers }
    var isLive: Bool { inner.isLive }

    func start(handler: @escaping (CaptureEvent) -> Void) throws {
        try inner.start { [self] event in
            handler(event)
            guard case .video = event else { return }
            if frames == markAfterFrame { mark() }
            frames += 1
        }
    }

    func stop() { inner.stop() }
}
