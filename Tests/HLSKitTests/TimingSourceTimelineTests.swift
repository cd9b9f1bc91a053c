import HLSKit
import Testing

/// One timeline for a URL's or a file's frames: from 0, on across a looped file, re-based over jumps.
struct TimingSourceTimelineTests {
    private func timeline() -> SourceTimeline {
        SourceTimeline(jumpForwardMicroseconds: 10_000_000, jumpBackMicroseconds: 1_000_000)
    }

    @Test func theFirstFrameIsZeroAndTheRestKeepTheirSpacing() {
        var timeline = timeline()
        // A camera's clock starts anywhere: 90 kHz RTP times in microseconds, an hour in.
        #expect(timeline.place(inputMicroseconds: 3_600_000_000, durationMicroseconds: 33_333, stream: 0) == 0)
        #expect(timeline.place(inputMicroseconds: 3_600_010_000, durationMicroseconds: 21_333, stream: 1) == 10_000)
        #expect(timeline.place(inputMicroseconds: 3_600_033_333, durationMicroseconds: 33_333, stream: 0) == 33_333)
        #expect(timeline.end == 66_666 && timeline.rebaseCount == 0)
    }

    /// A clock that leaps an hour ahead (an RTP wrap, a recorder's bad clock) goes on from where the
    /// stream was; the other stream, which leaps with it, follows without a second re-base.
    @Test func aJumpOfTheSourceClockIsRebased() {
        var timeline = timeline()
        _ = timeline.place(inputMicroseconds: 0, durationMicroseconds: 40_000, stream: 0)
        _ = timeline.place(inputMicroseconds: 0, durationMicroseconds: 20_000, stream: 1)
        #expect(timeline.place(inputMicroseconds: 3_600_040_000, durationMicroseconds: 40_000, stream: 0) == 40_000)
        #expect(timeline.place(inputMicroseconds: 3_600_020_000, durationMicroseconds: 20_000, stream: 1) == 20_000)
        #expect(timeline.place(inputMicroseconds: 3_600_080_000, durationMicroseconds: 40_000, stream: 0) == 80_000)
        #expect(timeline.rebaseCount == 1)
        // Back by five seconds: re-based too.
        #expect(timeline.place(inputMicroseconds: 3_595_120_000, durationMicroseconds: 40_000, stream: 0) == 120_000)
        #expect(timeline.rebaseCount == 2)
    }

    /// Time that really passed (a few seconds without frames) and small steps back are kept.
    @Test func aShortGapOrASmallStepBackIsNotAJump() {
        var timeline = timeline()
        _ = timeline.place(inputMicroseconds: 0, durationMicroseconds: 40_000, stream: 0)
        #expect(timeline.place(inputMicroseconds: 5_000_000, durationMicroseconds: 40_000, stream: 0) == 5_000_000)
        #expect(timeline.place(inputMicroseconds: 4_900_000, durationMicroseconds: 40_000, stream: 0) == 4_900_000)
        #expect(timeline.rebaseCount == 0)
    }

    /// A file played again starts where the latest frame of any stream ended: no stream overlaps itself.
    @Test func aRepetitionFollowsOnFromTheLatestEnd() {
        var timeline = timeline()
        for frame in 0..<150 {
            _ = timeline.place(inputMicroseconds: Int64(frame) * 40_000, durationMicroseconds: 40_000, stream: 0)
        }
        for block in 0..<282 {
            _ = timeline.place(inputMicroseconds: Int64(block) * 21_333, durationMicroseconds: 21_333, stream: 1)
        }
        let end = timeline.end
        #expect(end == 281 * 21_333 + 21_333 && end > 6_000_000)
        timeline.startAgain()
        #expect(timeline.place(inputMicroseconds: 0, durationMicroseconds: 21_333, stream: 1) == end)
        #expect(timeline.place(inputMicroseconds: 40_000, durationMicroseconds: 40_000, stream: 0) == end + 40_000)
        #expect(timeline.rebaseCount == 0)
    }
}
