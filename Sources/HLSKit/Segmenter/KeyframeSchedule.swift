/// Where an encoder must force an IDR so that segments are T ± one frame long: at the first frame,
/// and at the first frame at or after every boundary of the grid the Segmenter cuts on.
public struct KeyframeSchedule: Sendable, Equatable {
    public private(set) var grid: SegmentGrid
    /// Ticks since the first frame of the last forced keyframe; nil before the first frame.
    private var lastKeyframeTicks: Int64?

    public init(grid: SegmentGrid) {
        self.grid = grid
    }

    public init(segmentMilliseconds: Int64, timescale: Timescale) {
        self.init(grid: SegmentGrid(segmentMilliseconds: segmentMilliseconds, timescale: timescale))
    }

    /// Whether the frame `ticksSinceStart` after the stream's first frame must be a keyframe.
    /// Frames are asked about in presentation order.
    public mutating func isKeyframe(ticksSinceStart: Int64) -> Bool {
        // A gap (dropped frames) may skip boundaries: the next one is the first after this frame.
        if let last = lastKeyframeTicks, !grid.reachesBoundary(ticksSinceStart, after: last) { return false }
        lastKeyframeTicks = ticksSinceStart
        return true
    }

    /// Adds an explicit cut point, `ticks` after the first frame.
    public mutating func addCut(atTicks ticks: Int64) {
        grid.addCut(atTicks: ticks)
    }
}
