import Foundation
import HLSKit
import Testing
@testable import HLSServer

@Suite struct RecordingThumbnailsTests {
    static let tenOClock = Date(timeIntervalSince1970: 1_796_119_200)  // 2026-12-01T10:00:00Z

    static func at(_ seconds: Double) -> Date { tenOClock.addingTimeInterval(seconds) }

    /// The moments as the timeline lists them: the time to the millisecond and the file.
    static func listed(_ files: [(path: String, start: Date, end: Date)]) -> [String] {
        RecordingThumbnails.moments(files).map { ProgramDateTime.format($0.at) + " " + $0.path }
    }

    @Test func aFileStartAndEveryWholeMinuteInside() {
        #expect(Self.listed([(path: "a.mp4", start: Self.at(20), end: Self.at(150))])
            == ["2026-12-01T10:00:20.000Z a.mp4", "2026-12-01T10:01:00.000Z a.mp4", "2026-12-01T10:02:00.000Z a.mp4"])
    }

    /// A file cut at the first keyframe after a whole minute ends just past it, where the next one
    /// starts: the minute and the next file's start are one moment, one label (10:01:00), one thumbnail.
    @Test func aFileEndingAtAWholeMinuteLeavesThatMinuteToTheNextFilesStart() {
        #expect(Self.listed([(path: "a.mp4", start: Self.at(0), end: Self.at(60.4)),
                             (path: "b.mp4", start: Self.at(60.4), end: Self.at(95))])
            == ["2026-12-01T10:00:00.000Z a.mp4", "2026-12-01T10:01:00.400Z b.mp4"])
    }

    /// A minute the next file starts more than a second after is a moment of its own.
    @Test func aWholeMinuteBeforeALaterStartStays() {
        #expect(Self.listed([(path: "a.mp4", start: Self.at(0), end: Self.at(61.5)),
                             (path: "b.mp4", start: Self.at(61.5), end: Self.at(70))])
            == ["2026-12-01T10:00:00.000Z a.mp4", "2026-12-01T10:01:00.000Z a.mp4", "2026-12-01T10:01:01.500Z b.mp4"])
    }

    @Test func aFileEndingExactlyAtAMinuteHasNoThumbnailThere() {
        #expect(Self.listed([(path: "a.mp4", start: Self.at(10), end: Self.at(60))]) == ["2026-12-01T10:00:10.000Z a.mp4"])
    }
}
