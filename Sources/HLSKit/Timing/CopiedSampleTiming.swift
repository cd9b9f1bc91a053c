/// A copied track's decode times, made fit to write as they come from a sender that stamps them coarsely.
///
/// FLV (RTMP) stamps every packet in whole milliseconds, so AAC frames of 1,024 samples at 48 kHz arrive
/// 21 or 22 ms apart (1,008 or 1,056 ticks) and GStreamer's `rtmp2sink` may stamp two pictures alike.
/// Sound is counted instead, 1,024 samples a frame from the first, and re-anchored to the sender's stamps
/// only when they are more than half a frame away (a frame lost, a sender's clock drifting): durations
/// stay frame-exact. A sound frame stamped no later than the one before (by less than a frame) is left
/// out: GStreamer's `flvmux` stamps the encoder's priming frame, due before 0, at 0 beside the first real
/// one, and either counting on or starting again from it would play every frame after it a frame late or
/// overlap two. A picture comes at least a frame's spacing, less the millisecond a stamp's rounding takes,
/// after the one before, so no two are placed a tick apart; the pictures after it keep that spacing until
/// the sender's own stamps catch up. Pictures with reordering (B-frames) are left as they come: their
/// presentation stamps, a frame apart, are what a player shows. Stamps that leap back (a clock set, an
/// RTP wrap) are taken as they come, for the source's timeline to re-base.
public struct CopiedSampleTiming: Sendable {
    /// Samples in an AAC frame, the ticks of one frame at the track's timescale (its sample rate).
    public static let aacFrameTicks: Int64 = 1024

    private let timescale: Timescale
    private let isAudio: Bool
    /// Where the next sample goes by count (sound), or the earliest it may go (pictures).
    private var next: Int64?
    /// The last sound frame's stamp, as the sender gave it.
    private var lastStamp: Int64?
    /// Whether the pictures came with reordering (B-frames): their presentation stamps are kept as they are.
    private var reorders = false
    /// How often sound was re-anchored to the sender's stamps.
    public private(set) var reanchorCount = 0

    /// For a video track, or an AAC one whose timescale is its sample rate.
    public init(timescale: Timescale, isVideo: Bool) {
        self.timescale = timescale
        isAudio = !isVideo
    }

    /// The sample with its decode time placed; nil for a sound frame left out.
    public mutating func place(_ sample: EncodedSample) -> EncodedSample? {
        var placed = sample
        if isAudio {
            // A stamp that repeats (or steps back less than a frame); a leap back is the timeline's to re-base.
            if let lastStamp, sample.decodeTime <= lastStamp, lastStamp - sample.decodeTime < Self.aacFrameTicks {
                return nil
            }
            lastStamp = sample.decodeTime
            if let next, abs(sample.decodeTime - next) <= Self.aacFrameTicks / 2 {
                placed.decodeTime = next
            } else if next != nil {
                reanchorCount += 1
            }
            next = placed.decodeTime + Self.aacFrameTicks
            return placed
        }
        // Stamps more than a second behind are a leap back (a clock set, a wrap), the timeline's to re-base.
        // Reordered pictures are presented when the sender says, whatever their decode stamps.
        if sample.compositionOffset != 0 { reorders = true }
        guard !reorders else { return sample }
        if let next, sample.decodeTime < next, next - sample.decodeTime < timescale.perSecond {
            placed.decodeTime = next
        }
        if let spacing = sample.durationHint, spacing > 0 {
            let roundingTicks = timescale.perSecond / 1000
            next = placed.decodeTime + max(1, spacing - roundingTicks)
        } else {
            next = placed.decodeTime + 1
        }
        return placed
    }
}
