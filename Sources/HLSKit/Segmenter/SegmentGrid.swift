/// The segment boundaries of a stream: `k·T` after its first frame, in one timescale.
///
/// The one formula behind both the encoder's forced IDRs (`KeyframeSchedule`) and the segmenter's
/// cuts, so that the two can never disagree.
public struct SegmentGrid: Sendable, Equatable {
    public let segmentMilliseconds: Int64
    public let timescale: Int64

    public init(segmentMilliseconds: Int64, timescale: Int64) {
        precondition(segmentMilliseconds > 0 && timescale > 0, "a grid needs positive durations")
        self.segmentMilliseconds = segmentMilliseconds
        self.timescale = timescale
    }

    /// Ticks from the first frame to the `index`-th boundary (the 0th is the first frame).
    public func boundary(_ index: Int64) -> Int64 {
        index * segmentMilliseconds * timescale / 1000
    }

    /// The index of the first boundary after `ticks` (ticks from the first frame).
    public func index(after ticks: Int64) -> Int64 {
        ticks * 1000 / (segmentMilliseconds * timescale) + 1
    }
}
