import Testing
@testable import HLSKit

/// Builds interleaved sample streams the way a demuxer hands them over.
private struct StreamBuilder {
    static let video = Segmenter.Track(timescale: 90_000, isVideo: true)
    static let audio48k = Segmenter.Track(timescale: 48_000, isVideo: false)

    /// Video frames in decode order: `frameTicks` apart, a sync frame every `gop` frames, decode times
    /// starting at `firstDecodeTime` with a constant composition offset (B-frame delay).
    static func videoFrames(count: Int, frameTicks: Int64, gop: Int, firstDecodeTime: Int64 = 0,
                            compositionOffset: Int32 = 0, track: Int = 0) -> [EncodedSample] {
        (0..<count).map { index in
            EncodedSample(track: track, decodeTime: firstDecodeTime + Int64(index) * frameTicks,
                          compositionOffset: compositionOffset, durationHint: frameTicks,
                          isSync: index % gop == 0, data: [UInt8(index & 0xFF)])
        }
    }

    static func audioFrames(count: Int, firstDecodeTime: Int64 = 0, track: Int = 1) -> [EncodedSample] {
        (0..<count).map { index in
            EncodedSample(track: track, decodeTime: firstDecodeTime + Int64(index) * 1024,
                          durationHint: 1024, isSync: true, data: [0xA0, UInt8(index & 0xFF)])
        }
    }

    /// Merges streams by decode time in seconds, as a demuxer interleaves them.
    static func interleave(_ streams: [[EncodedSample]], timescales: [Int64]) -> [EncodedSample] {
        streams.joined().sorted { lhs, rhs in
            lhs.decodeTime * timescales[rhs.track] < rhs.decodeTime * timescales[lhs.track]
        }
    }

    static func run(_ samples: [EncodedSample], tracks: [Segmenter.Track],
                    segmentMilliseconds: Int64 = 2000, cutTicks: [Int64] = []) -> [Segment] {
        var segmenter = Segmenter(configuration: .init(tracks: tracks, segmentMilliseconds: segmentMilliseconds,
                                                       cutTicks: cutTicks))
        var segments: [Segment] = []
        for sample in samples { segments += segmenter.append(sample) }
        return segments + segmenter.finish()
    }
}

@Suite struct SegmenterTests {
    @Test func videoOnlyCutsEveryTwoSecondsAtKeyframesAndStartsAtTenSeconds() {
        let frames = StreamBuilder.videoFrames(count: 150, frameTicks: 3600, gop: 25)
        let segments = StreamBuilder.run(frames, tracks: [StreamBuilder.video])
        #expect(segments.map(\.sequenceNumber) == [1, 2, 3])
        #expect(segments.map { $0.tracks[0].samples.count } == [50, 50, 50])
        #expect(segments.map(\.tracks[0].baseDecodeTime) == [900_000, 1_080_000, 1_260_000])
        #expect(segments.map(\.durationTicks) == [180_000, 180_000, 180_000])
        #expect(segments.allSatisfy { $0.tracks[0].samples[0].isSync })
        #expect(segments.map(\.startTicks) == [900_000, 1_080_000, 1_260_000])
    }

    /// A copied camera's keyframes every second, the one due at 2 s a tick early (a receiver correcting its
    /// clock from an RTCP sender report does this): it still cuts, and the grid goes on at 4 s, not a
    /// keyframe later. Without the tolerance the first segment ran 3 s under a 2 s target.
    @Test func aKeyframeATickBeforeItsBoundaryStillCuts() {
        var frames = StreamBuilder.videoFrames(count: 180, frameTicks: 3000, gop: 30)
        for index in frames.indices where index >= 60 { frames[index].decodeTime -= 1 }
        let segments = StreamBuilder.run(frames, tracks: [StreamBuilder.video])
        #expect(segments.map { $0.tracks[0].samples.count } == [60, 60, 60])
        #expect(segments.map(\.startTicks) == [900_000, 1_079_999, 1_259_999])
    }

    @Test func longGroupsOfPicturesMakeLongSegmentsCutOnlyAtKeyframes() {
        // Keyframes every 5 s at 25 fps with T = 2 s: the only possible cuts are at 15 s and 20 s.
        let frames = StreamBuilder.videoFrames(count: 275, frameTicks: 3600, gop: 125)
        let segments = StreamBuilder.run(frames, tracks: [StreamBuilder.video])
        #expect(segments.map(\.durationTicks) == [450_000, 450_000, 90_000])
    }

    @Test func bFrameDelayKeepsTheFirstFramePresentationAtTenSeconds() {
        // Decode starts two frames before presentation, as ffmpeg demuxes B-frame streams.
        let frames = StreamBuilder.videoFrames(count: 120, frameTicks: 3000, gop: 60,
                                               firstDecodeTime: -6000, compositionOffset: 6000)
        let segments = StreamBuilder.run(frames, tracks: [StreamBuilder.video])
        #expect(segments.count == 2)
        let first = segments[0].tracks[0]
        #expect(first.baseDecodeTime == 894_000)
        #expect(first.samples[0].compositionOffset == 6000)
        #expect(Int64(first.baseDecodeTime) + Int64(first.samples[0].compositionOffset) == 900_000)
    }

    @Test func audioPrimingMovesAudioDecodeTimesBeforeTheFirstFrame() {
        // The source's first audio packet is 1024 samples of priming before time zero.
        let video = StreamBuilder.videoFrames(count: 100, frameTicks: 3600, gop: 25)
        let audio = StreamBuilder.audioFrames(count: 190, firstDecodeTime: -1024)
        let samples = StreamBuilder.interleave([video, audio], timescales: [90_000, 48_000])
        let segments = StreamBuilder.run(samples, tracks: [StreamBuilder.video, StreamBuilder.audio48k])
        #expect(segments[0].tracks[1].baseDecodeTime == 480_000 - 1024)
    }

    @Test func audioGoesToTheSegmentHoldingItsStartTimeAndStaysContinuous() {
        let video = StreamBuilder.videoFrames(count: 150, frameTicks: 3600, gop: 25)
        let audio = StreamBuilder.audioFrames(count: 282)
        let samples = StreamBuilder.interleave([video, audio], timescales: [90_000, 48_000])
        let segments = StreamBuilder.run(samples, tracks: [StreamBuilder.video, StreamBuilder.audio48k])
        #expect(segments.count == 3)
        for (index, segment) in segments.enumerated() {
            let audioTrack = segment.tracks[1]
            let cut = Int64(index) * 96_000 + 480_000
            #expect(Int64(audioTrack.baseDecodeTime) >= cut)
            #expect(Int64(audioTrack.baseDecodeTime) < cut + 1024)
        }
        for track in 0..<2 {
            for (previous, next) in zip(segments, segments.dropFirst()) {
                let run = previous.tracks[track]
                let end = run.baseDecodeTime + run.samples.reduce(0) { $0 + UInt64($1.durationTicks) }
                #expect(end == next.tracks[track].baseDecodeTime)
            }
        }
        #expect(segments.reduce(0) { $0 + $1.tracks[1].samples.count } == 282)
    }

    @Test func aSegmentWaitsUntilAudioHasPassedItsEnd() {
        var segmenter = Segmenter(configuration: .init(tracks: [StreamBuilder.video, StreamBuilder.audio48k]))
        for frame in StreamBuilder.videoFrames(count: 51, frameTicks: 3600, gop: 25) {
            #expect(segmenter.append(frame).isEmpty)
        }
        // Audio up to just before the cut at 2 s still leaves the segment open…
        for sample in StreamBuilder.audioFrames(count: 94) {
            #expect(segmenter.append(sample).isEmpty)
        }
        // …the first audio frame at or after 2 s closes it.
        let closed = segmenter.append(EncodedSample(track: 1, decodeTime: 94 * 1024, isSync: true, data: [1]))
        #expect(closed.count == 1)
        #expect(closed.first?.tracks[1].samples.count == 94)
    }

    @Test func framesBeforeTheFirstKeyframeAreDropped() {
        var frames = StreamBuilder.videoFrames(count: 60, frameTicks: 3600, gop: 25)
        frames.removeFirst(5)
        var segmenter = Segmenter(configuration: .init(tracks: [StreamBuilder.video]))
        var segments: [Segment] = []
        for frame in frames { segments += segmenter.append(frame) }
        segments += segmenter.finish()
        #expect(segmenter.discarded.beforeFirstSync == 20)
        #expect(segments.first?.tracks[0].samples.first?.isSync == true)
        #expect(segments.first?.tracks[0].baseDecodeTime == 900_000)
    }

    @Test func audioOnlyStreamsAreCutByTime() {
        let audio = StreamBuilder.audioFrames(count: 235, track: 0)
        let segments = StreamBuilder.run(audio, tracks: [StreamBuilder.audio48k])
        #expect(segments.count == 3)
        #expect(segments.map { $0.tracks[0].samples.count } == [94, 94, 47])
        #expect(segments[0].timescale == 48_000)
        #expect(segments[0].tracks[0].baseDecodeTime == 480_000)
    }

    @Test func theLastSegmentIsShortButNeverEmpty() {
        let frames = StreamBuilder.videoFrames(count: 51, frameTicks: 3600, gop: 25)
        let segments = StreamBuilder.run(frames, tracks: [StreamBuilder.video])
        #expect(segments.map { $0.tracks[0].samples.count } == [50, 1])
        #expect(segments.last?.durationTicks == 3600)
        #expect(StreamBuilder.run([], tracks: [StreamBuilder.video]).isEmpty)
    }

    @Test(arguments: [(Int64(1), Int64(90_000), Int64(48_000), Int64(1)),
                      (Int64(-3), Int64(90_000), Int64(48_000), Int64(-2)),
                      (Int64(1_000), Int64(1_000), Int64(90_000), Int64(90_000))])
    func rescaleRoundsToNearest(value: Int64, from: Int64, to: Int64, expected: Int64) {
        #expect(Timescale(from).convert(value, to: Timescale(to)) == expected)
    }
}

@Suite struct SegmenterRenditionTests {
    /// Two rungs with IDRs at the same frames, the second delayed by B-frames: each rung is cut at its
    /// own IDR, so segment N of both starts at the same presentation time with a sync sample.
    @Test func everyVideoTrackIsCutAtItsOwnSyncSampleOnTheLeadsGrid() {
        let top = StreamBuilder.videoFrames(count: 150, frameTicks: 3000, gop: 60, track: 0)
        let lower = StreamBuilder.videoFrames(count: 150, frameTicks: 3000, gop: 60, firstDecodeTime: -6000,
                                              compositionOffset: 6000, track: 1)
        let audio = StreamBuilder.audioFrames(count: 240, track: 2)
        let samples = StreamBuilder.interleave([top, lower, audio], timescales: [90_000, 90_000, 48_000])
        let segments = StreamBuilder.run(samples, tracks: [StreamBuilder.video, StreamBuilder.video,
                                                           StreamBuilder.audio48k])
        #expect(segments.count == 3)
        for segment in segments {
            let starts = segment.tracks.prefix(2).map { $0.samples[0].decodeTime + Int64($0.samples[0].compositionOffset) }
            #expect(starts[0] == starts[1])
            #expect(segment.tracks.prefix(2).allSatisfy { $0.samples[0].isSync && $0.samples.count == 60 || segment.sequenceNumber == 3 })
        }
        #expect(segments.map { $0.tracks[1].samples.count } == [60, 60, 30])
    }

    /// A copied source in a 15,360 Hz timescale and a rung encoded from its pictures at 90 kHz, every
    /// rung IDR a rounding tick before the source's keyframe: the rung is still cut at that IDR, not a
    /// whole keyframe interval later.
    @Test func aRungWhoseIDRRoundsATickEarlyIsCutThere() {
        let source = Segmenter.Track(timescale: 15_360, isVideo: true)
        let top = StreamBuilder.videoFrames(count: 150, frameTicks: 512, gop: 30, track: 0)
        let lower = top.map { sample in
            var rung = sample
            rung.track = 1
            rung.decodeTime = sample.decodeTime * 90_000 / 15_360 - (sample.isSync && sample.decodeTime > 0 ? 1 : 0)
            rung.durationHint = 3000
            return rung
        }
        let samples = StreamBuilder.interleave([top, lower], timescales: [15_360, 90_000])
        let segments = StreamBuilder.run(samples, tracks: [source, StreamBuilder.video])
        let rung: [[TimedSample]] = segments.map { segment in
            segment.tracks.first(where: { $0.trackID == 2 }).map(\.samples) ?? []
        }
        #expect(segments.map { $0.tracks[0].samples.count } == [60, 60, 30])
        #expect(rung.map(\.count) == [60, 60, 30])
        #expect(rung.allSatisfy { $0.first?.isSync == true })
    }

    /// A rung that never makes an IDR on the grid is cut by decode time a segment later rather than
    /// held forever.
    @Test func aVideoTrackWithoutSyncSamplesIsNotHeldForever() {
        let top = StreamBuilder.videoFrames(count: 300, frameTicks: 3000, gop: 60, track: 0)
        var lower = StreamBuilder.videoFrames(count: 300, frameTicks: 3000, gop: 300, track: 1)
        lower[0].isSync = true
        var segmenter = Segmenter(configuration: .init(tracks: [StreamBuilder.video, StreamBuilder.video]))
        var emitted: [Segment] = []
        for sample in StreamBuilder.interleave([top, lower], timescales: [90_000, 90_000]) {
            emitted += segmenter.append(sample)
        }
        #expect(emitted.count >= 3)
    }
}

@Suite struct SegmentGridTests {
    @Test func keyframeScheduleAndSegmenterShareTheBoundaries() {
        let grid = SegmentGrid(segmentMilliseconds: 2000, timescale: 90_000)
        #expect((0...3).map(grid.boundary) == [0, 180_000, 360_000, 540_000])
        #expect(grid.index(after: 0) == 1)
        #expect(grid.index(after: 179_999) == 1)
        #expect(grid.index(after: 180_000) == 2)
        var schedule = KeyframeSchedule(grid: grid)
        let forced = [0, 177_000, 180_000, 183_000, 360_000].map { schedule.isKeyframe(ticksSinceStart: Int64($0)) }
        #expect(forced == [true, false, true, false, true])
    }

    /// A frame within 4 ms before a boundary counts as on it, for the encoder's IDRs and the segmenter's
    /// cuts alike; the next boundary is the grid's, not one measured from that frame.
    @Test func aFrameJustBeforeABoundaryIsOnIt() {
        let grid = SegmentGrid(segmentMilliseconds: 2000, timescale: 90_000)
        #expect(grid.toleranceTicks == 360)
        #expect(grid.reachesBoundary(179_640, after: 0) && !grid.reachesBoundary(179_639, after: 0))
        #expect(!grid.reachesBoundary(181_000, after: 179_700) && grid.reachesBoundary(359_700, after: 179_700))
        var schedule = KeyframeSchedule(grid: grid)
        let forced = [0, 176_997, 179_997, 182_997, 359_997].map { schedule.isKeyframe(ticksSinceStart: Int64($0)) }
        #expect(forced == [true, false, true, false, true])
    }
}

@Suite struct SegmenterCutPointTests {
    /// 25 fps, a keyframe every frame (as an encoder forcing IDRs would allow): a cut point at 2.5 s
    /// source time, between two frames, splits the second segment at the next frame, and the grid goes
    /// on at 4 s.
    @Test func anExplicitCutStartsASegmentAtTheFirstSyncSampleAtOrAfterIt() {
        let frames = StreamBuilder.videoFrames(count: 150, frameTicks: 3600, gop: 1)
        var segmenter = Segmenter(configuration: .init(tracks: [StreamBuilder.video], cutTicks: [225_000]))
        var segments: [Segment] = []
        for frame in frames { segments += segmenter.append(frame) }
        segments += segmenter.finish()
        #expect(segments.map(\.startTicks) == [900_000, 1_080_000, 1_126_800, 1_260_000])
        #expect(segments.map { $0.tracks[0].samples.count } == [50, 13, 37, 50])
        #expect(segmenter.placedCuts == [.init(askedTicks: 1_125_000, placedTicks: 1_126_800)])
    }

    /// Source times need not start at zero: cut points are in the source's own time, and map with the delta.
    @Test func cutPointsFollowTheDeltaOfTheFirstFrame() {
        let frames = StreamBuilder.videoFrames(count: 100, frameTicks: 3600, gop: 1, firstDecodeTime: 45_000)
        let cutsAt = StreamBuilder.run(frames, tracks: [StreamBuilder.video], cutTicks: [45_000 + 90_000])
        #expect(cutsAt.map(\.startTicks) == [900_000, 990_000, 1_080_000])
    }

    /// Keyframes every second (copy mode): a cut point at 2.5 s moves to the keyframe at 3 s, which is
    /// reported; the next regular boundary is 4 s.
    @Test func withLongGroupsOfPicturesTheCutMovesToTheNextKeyframeAndSaysSo() {
        let frames = StreamBuilder.videoFrames(count: 150, frameTicks: 3600, gop: 25)
        var segmenter = Segmenter(configuration: .init(tracks: [StreamBuilder.video], cutTicks: [225_000]))
        var segments: [Segment] = []
        for frame in frames { segments += segmenter.append(frame) }
        segments += segmenter.finish()
        #expect(segments.map(\.startTicks) == [900_000, 1_080_000, 1_170_000, 1_260_000])
        #expect(segmenter.placedCuts == [.init(askedTicks: 1_125_000, placedTicks: 1_170_000)])
    }

    /// A cut added while the stream runs (a live operator's mark) cuts at the next sync sample at or after it.
    @Test func aCutAddedWhileRunningStartsASegmentThere() {
        let frames = StreamBuilder.videoFrames(count: 100, frameTicks: 3600, gop: 1)
        var segmenter = Segmenter(configuration: .init(tracks: [StreamBuilder.video]))
        var segments: [Segment] = []
        for frame in frames {
            if frame.decodeTime == 36_000 { segmenter.addCut(atSourceTicks: 36_000) }
            segments += segmenter.append(frame)
        }
        segments += segmenter.finish()
        #expect(segments.map(\.startTicks) == [900_000, 936_000, 1_080_000])
        #expect(segments.map(\.durationTicks) == [36_000, 144_000, 180_000])
    }

    /// A device that came back (`--reconnect`) asks for a cut that starts a discontinuity: only the segment
    /// that starts there, and only its first part, are marked, whether the cut came before or after the
    /// first frame fixed the delta.
    @Test func aCutAskedWithADiscontinuityMarksOnlyTheSegmentAndPartThatStartThere() {
        for early in [false, true] {
            let frames = StreamBuilder.videoFrames(count: 150, frameTicks: 3600, gop: 1)
            var segmenter = Segmenter(configuration: .init(tracks: [StreamBuilder.video], partMilliseconds: 334))
            var segments: [Segment] = []
            var parts: [Segment] = []
            if early { segmenter.addCut(atSourceTicks: 270_000, startsDiscontinuity: true) }
            for frame in frames {
                if !early, frame.decodeTime == 252_000 { segmenter.addCut(atSourceTicks: 270_000, startsDiscontinuity: true) }
                if frame.decodeTime == 342_000 { segmenter.addCut(atSourceTicks: 342_000) }
                segments += segmenter.append(frame)
                parts += segmenter.takeParts()
            }
            segments += segmenter.finish()
            parts += segmenter.takeParts()
            #expect(segments.map(\.startTicks) == [900_000, 1_080_000, 1_170_000, 1_242_000, 1_260_000])
            #expect(segments.map(\.followsDiscontinuity) == [false, false, true, false, false])
            let marked = parts.filter(\.followsDiscontinuity)
            #expect(marked.map(\.sequenceNumber) == [3] && marked.map(\.partIndex) == [0])
            #expect(segments[2].parts.first?.followsDiscontinuity == true)
        }
    }

    /// Audio follows the cut like any other: the segment after the cut starts with the first audio
    /// frame at or after it.
    @Test func audioFollowsAnExplicitCut() {
        let video = StreamBuilder.videoFrames(count: 100, frameTicks: 3600, gop: 1)
        let audio = StreamBuilder.audioFrames(count: 188)
        let samples = StreamBuilder.interleave([video, audio], timescales: [90_000, 48_000])
        let segments = StreamBuilder.run(samples, tracks: [StreamBuilder.video, StreamBuilder.audio48k],
                                         cutTicks: [90_000])
        #expect(segments.map(\.startTicks) == [900_000, 990_000, 1_080_000])
        let audioStart = segments[1].tracks[1].baseDecodeTime
        #expect(audioStart >= 528_000 && audioStart < 528_000 + 1024)
    }
}

@Suite struct SegmentGridCutTests {
    @Test func explicitCutsJoinTheRegularBoundaries() {
        let grid = SegmentGrid(segmentMilliseconds: 2000, timescale: 90_000, cutTicks: [225_000, 0, -5, 225_000])
        #expect(grid.cutTicks == [225_000])
        #expect(grid.nextBoundary(after: 0) == 180_000)
        #expect(grid.nextBoundary(after: 180_000) == 225_000)
        #expect(grid.nextBoundary(after: 225_000) == 360_000)
        var schedule = KeyframeSchedule(grid: grid)
        let forced = [0, 180_000, 222_000, 225_000, 228_000, 360_000].map { schedule.isKeyframe(ticksSinceStart: Int64($0)) }
        #expect(forced == [true, true, false, true, false, true])
    }

    @Test func aCutAddedToTheScheduleForcesTheNextFrameAtOrAfterIt() {
        var schedule = KeyframeSchedule(segmentMilliseconds: 2000, timescale: 90_000)
        var forced = [0, 3000].map { schedule.isKeyframe(ticksSinceStart: Int64($0)) }
        schedule.addCut(atTicks: 6000)
        forced += [6000, 9000, 180_000].map { schedule.isKeyframe(ticksSinceStart: Int64($0)) }
        #expect(forced == [true, false, true, false, true])
    }
}
