/// The segment boundaries of a stream: `k·T` after its first frame, and any explicit cut points
/// (an input's chapters, times asked for, an operator's mark), in one timescale.
///
/// The one formula behind both the encoder's forced IDRs (`KeyframeSchedule`) and the segmenter's
/// cuts, so that the two can never disagree.
public struct SegmentGrid: Sendable, Equatable {
    public let segmentMilliseconds: Int64
    public let timescale: Timescale
    /// Explicit cut points, ticks from the first frame, ascending, each after the first frame.
    public private(set) var cutTicks: [Int64]

    public init(segmentMilliseconds: Int64, timescale: Timescale, cutTicks: [Int64] = []) {
        precondition(segmentMilliseconds > 0, "a grid needs a positive segment duration")
        self.segmentMilliseconds = segmentMilliseconds
        self.timescale = timescale
        self.cutTicks = Array(Set(cutTicks.filter { $0 > 0 })).sorted()
    }

    /// Ticks from the first frame to the `index`-th regular boundary (the 0th is the first frame).
    public func boundary(_ index: Int64) -> Int64 {
        index * segmentMilliseconds * timescale.perSecond / 1000
    }

    /// The index of the first regular boundary after `ticks` (ticks from the first frame).
    public func index(after ticks: Int64) -> Int64 {
        ticks * 1000 / (segmentMilliseconds * timescale.perSecond) + 1
    }

    /// The first boundary after `ticks`, regular or explicit: where the segment that starts at `ticks`
    /// ends, at the first frame at or after it.
    public func nextBoundary(after ticks: Int64) -> Int64 {
        let regular = boundary(index(after: ticks))
        guard let cut = cutTicks.first(where: { $0 > ticks }) else { return regular }
        return min(regular, cut)
    }

    /// How far before a boundary a frame may fall and still count as on it: 4 ms, less than a frame at
    /// any rate up to 240 fps. A copied camera's keyframe due on a boundary can arrive a tick early when
    /// the receiver corrects its clock from a sender report, or a capture clock's jitter moves it; without
    /// this the cut would wait for the next keyframe and the segment would run a whole interval long.
    public var toleranceTicks: Int64 { timescale.perSecond * 4 / 1000 }

    /// Whether a frame `ticks` after the first frame starts a segment when the last one started at
    /// `lastCut`: it reaches, within the tolerance, the first boundary after that cut.
    public func reachesBoundary(_ ticks: Int64, after lastCut: Int64) -> Bool {
        ticks + toleranceTicks >= nextBoundary(after: lastCut + toleranceTicks)
    }

    /// Adds an explicit cut point while the stream runs (a live operator's mark).
    public mutating func addCut(atTicks ticks: Int64) {
        guard ticks > 0, !cutTicks.contains(ticks) else { return }
        cutTicks.append(ticks)
        cutTicks.sort()
    }
}
