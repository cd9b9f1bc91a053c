import Testing
@testable import HLSKit

/// A copied track's decode times from a sender that stamps in whole milliseconds (FLV over RTMP, as
/// GStreamer's `rtmp2sink` sends them).
@Suite struct TimingCopiedSampleTimingTests {
    static func placed(_ decodeTimes: [Int64], isVideo: Bool, timescale: Timescale, durationHint: Int64? = nil)
        -> [Int64] {
        var timing = CopiedSampleTiming(timescale: timescale, isVideo: isVideo)
        return decodeTimes.compactMap { time in
            timing.place(EncodedSample(track: 0, decodeTime: time, durationHint: durationHint, isSync: true, data: []))?
                .decodeTime
        }
    }

    /// AAC frames stamped 21 or 22 ms apart (1,008 or 1,056 ticks at 48 kHz) keep 1,024 samples each.
    @Test func soundStampedInMillisecondsKeepsFrameExactDurations() {
        let stamps: [Int64] = (0..<500).map { (frame: Int64) -> Int64 in frame * 1024 * 1000 / 48_000 * 48 + 480_000 }
        #expect(Set(zip(stamps.dropFirst(), stamps).map { $0 - $1 }) == [1008, 1056])
        let times = Self.placed(stamps, isVideo: false, timescale: 48_000)
        #expect(times == (0..<500).map { 480_000 + Int64($0) * 1024 })
    }

    /// A lost frame, or a sender's clock that drifts past half a frame, re-anchors the count to the stamps.
    @Test func soundIsReanchoredOnlyBeyondHalfAFrame() {
        var stamps = (0..<20).map { Int64($0) * 1024 }
        stamps.remove(at: 10)  // frame 10 lost
        let times = Self.placed(stamps, isVideo: false, timescale: 48_000)
        #expect(times == stamps)
        // 0.1 % fast: a tick a frame; half a frame away after 512 frames, where the count starts again.
        let drifting = (0..<1000).map { Int64($0) * 1025 }
        var timing = CopiedSampleTiming(timescale: 48_000, isVideo: false)
        let placed = drifting.compactMap { timing.place(EncodedSample(track: 0, decodeTime: $0, isSync: true, data: []))?.decodeTime }
        #expect(timing.reanchorCount == 1)
        #expect(zip(placed, drifting).allSatisfy { abs($0 - $1) <= 512 })
    }

    /// flvmux stamps the encoder's priming frame (due at -1,024) at 0, beside the first real frame: the
    /// second frame stamped 0 is left out, and the rest are counted from the first, each where it is due.
    @Test func aRepeatedSoundStampIsLeftOut() {
        let stamps: [Int64] = [0, 0] + (1..<50).map { (frame: Int64) -> Int64 in frame * 1024 * 1000 / 48_000 * 48 }
        let times = Self.placed(stamps, isVideo: false, timescale: 48_000)
        #expect(times == (0..<50).map { Int64($0) * 1024 })
    }

    /// rtmp2sink's B-frames: decode stamps 2 to 43 ms apart, presentation stamps a frame apart. Reordered
    /// pictures are left as they come, so that their presentation stays the sender's.
    @Test func reorderedPicturesKeepTheirPresentationTimes() {
        let decode: [Int64] = [0, 2, 23, 66, 108, 130, 172, 213, 235, 277].map { $0 * 90 }
        let present: [Int64] = [5, 105, 39, 72, 205, 139, 172, 305, 239, 272].map { $0 * 90 }
        var timing = CopiedSampleTiming(timescale: 90_000, isVideo: true)
        let placed = zip(decode, present).compactMap { dts, pts in
            timing.place(EncodedSample(track: 0, decodeTime: dts, compositionOffset: Int32(pts - dts), durationHint: 2970,
                                       isSync: false, data: []))
        }
        #expect(placed.map(\.decodeTime) == decode && placed.map(\.presentationTime) == present)
    }

    /// A leap back (a sender's clock set, an RTP wrap) is taken as it comes, sound and pictures alike, for
    /// the source's timeline to re-base: nothing is left out or held at the old times.
    @Test func aLeapBackIsTakenAsItComes() {
        let sound: [Int64] = (0..<10).map { 480_000 + $0 * 1024 } + (0..<10).map { $0 * 1024 }
        #expect(Self.placed(sound, isVideo: false, timescale: 48_000) == sound)
        let pictures: [Int64] = (0..<10).map { 900_000 + $0 * 3000 } + (0..<10).map { $0 * 3000 }
        #expect(Self.placed(pictures, isVideo: true, timescale: 90_000, durationHint: 3000) == pictures)
    }

    /// Pictures stamped alike (0, 0 ms) or a few milliseconds apart at the start come at least a frame's
    /// spacing apart (less the millisecond of rounding), instead of a tick; the stamps after them are
    /// followed again once they catch up.
    @Test func picturesKeepAFramesSpacing() {
        let later: [Int64] = (4..<100).map { (frame: Int64) -> Int64 in frame * 100 / 3 }
        let milliseconds: [Int64] = [0, 0, 2, 33, 67, 100] + later
        let stamps = milliseconds.map { $0 * 90 }
        let times = Self.placed(stamps, isVideo: true, timescale: 90_000, durationHint: 2970)
        let spacings = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(spacings.allSatisfy { $0 >= 2880 }, "\(spacings)")
        #expect(zip(times, stamps).allSatisfy { $0 >= $1 })
        #expect(Array(times.suffix(20)) == Array(stamps.suffix(20)), "back on the sender's stamps")
        // A sender that stamps well stays as it is.
        let even = (0..<60).map { Int64($0) * 3000 }
        #expect(Self.placed(even, isVideo: true, timescale: 90_000, durationHint: 3000) == even)
    }
}
