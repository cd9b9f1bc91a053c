/// Where an encoder must force an IDR so that segments are T ± one frame long: at the first frame,
/// and at the first frame at or after every boundary of the grid the Segmenter cuts on.
public struct KeyframeSchedule: Sendable, Equatable {
    public let grid: SegmentGrid
    private var nextBoundaryIndex: Int64 = 0

    public init(grid: SegmentGrid) {
        self.grid = grid
    }

    public init(segmentMilliseconds: Int64, timescale: Int64) {
        self.init(grid: SegmentGrid(segmentMilliseconds: segmentMilliseconds, timescale: timescale))
    }

    /// Whether the frame `ticksSinceStart` after the stream's first frame must be a keyframe.
    /// Frames are asked about in presentation order.
    public mutating func isKeyframe(ticksSinceStart: Int64) -> Bool {
        guard ticksSinceStart >= grid.boundary(nextBoundaryIndex) else { return false }
        // A gap (dropped frames) may skip boundaries: the next one is the first after this frame.
        nextBoundaryIndex = grid.index(after: ticksSinceStart)
        return true
    }
}
