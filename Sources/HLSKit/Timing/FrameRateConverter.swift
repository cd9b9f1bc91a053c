/// Turns frames with irregular timestamps into a constant frame rate by dropping and
/// repeating them, as ffmpeg's `fps` filter does: output frame n stands for the time
/// `origin + n / frameRate`, and each input frame takes the output slot nearest its own time.
///
/// It decides on each frame as it arrives, without waiting for the next one, so it adds no
/// latency: a frame whose slot is already taken is dropped, and a frame after a gap is handed
/// the empty slots before its own too (its last index is its own slot; the transcoder shows the
/// frame before in the others, so no frame is shown early). The first frame is the origin,
/// output frame 0.
public struct FrameRateConverter: Sendable {
    public let frameRate: Rational
    /// Ticks per second of the input and output times (90 kHz for video).
    public let timescale: Timescale

    private var origin: Int64?
    /// The first output slot not yet filled.
    private var nextIndex: Int64 = 0

    /// Input frames that got no output slot.
    public private(set) var droppedFrameCount = 0
    /// Extra output frames made by repeating input frames.
    public private(set) var repeatedFrameCount: Int64 = 0

    public init(frameRate: Rational, timescale: Timescale = .video) {
        precondition(frameRate.numerator > 0 && frameRate.denominator > 0, "frame rate must be positive")
        self.frameRate = frameRate
        self.timescale = timescale
    }

    /// The output frames the input frame at `time` (in `timescale` ticks) becomes: empty to
    /// drop it, one index to pass it on, several to repeat it.
    public mutating func outputIndexes(forFrameAt time: Int64) -> Range<Int64> {
        let origin = self.origin ?? time
        self.origin = origin
        let slot = nearestSlot(time - origin)
        guard slot >= nextIndex else {
            droppedFrameCount += 1
            return nextIndex..<nextIndex
        }
        let indexes = nextIndex..<(slot + 1)
        repeatedFrameCount += Int64(indexes.count - 1)
        nextIndex = slot + 1
        return indexes
    }

    /// The time output frame `index` stands for, in `timescale` ticks; nil before the first frame.
    public func outputTime(ofIndex index: Int64) -> Int64? {
        guard let origin else { return nil }
        return origin + rescale(index * Int64(frameRate.denominator), multipliedBy: timescale.perSecond,
                                dividedBy: Int64(frameRate.numerator))
    }

    /// The slot nearest `elapsed` ticks after the origin. A time exactly between two slots
    /// takes the earlier one, so that halving a rate keeps frames 0, 2, 4 … on the grid.
    private func nearestSlot(_ elapsed: Int64) -> Int64 {
        let slots = Int128(elapsed) * Int128(frameRate.numerator)
        let ticksPerSlot = Int128(timescale.perSecond) * Int128(frameRate.denominator)
        // floor(slots / ticksPerSlot + 1/2), with ties rounded down, for either sign.
        let numerator = 2 * slots + ticksPerSlot - 1
        let denominator = 2 * ticksPerSlot
        let quotient = numerator / denominator
        return Int64(numerator % denominator < 0 ? quotient - 1 : quotient)
    }
}
