/// Where an encoder must force an IDR so that segments are T ± one frame long: at the first frame,
/// and at the first frame at or after every boundary `k·T` after it — the grid the Segmenter cuts on.
public struct KeyframeSchedule: Sendable, Equatable {
    public let segmentMilliseconds: Int64
    public let timescale: Int64
    private var nextBoundaryIndex: Int64 = 0

    public init(segmentMilliseconds: Int64, timescale: Int64) {
        precondition(segmentMilliseconds > 0 && timescale > 0, "a schedule needs positive durations")
        self.segmentMilliseconds = segmentMilliseconds
        self.timescale = timescale
    }

    /// Whether the frame `ticksSinceStart` after the stream's first frame must be a keyframe.
    /// Frames are asked about in presentation order.
    public mutating func isKeyframe(ticksSinceStart: Int64) -> Bool {
        guard ticksSinceStart >= boundary(nextBoundaryIndex) else { return false }
        // A gap (dropped frames) may skip boundaries: the next one is the first after this frame.
        nextBoundaryIndex = ticksSinceStart * 1000 / (segmentMilliseconds * timescale) + 1
        return true
    }

    private func boundary(_ index: Int64) -> Int64 {
        index * segmentMilliseconds * timescale / 1000
    }
}
