/// A finished media segment: one fragment's worth of samples for every track.
public struct Segment: Sendable, Equatable {
    /// 1-based, never reused; also the media sequence number and the file name's number.
    public var sequenceNumber: Int
    /// One entry per track that has samples in this segment, in track order.
    public var tracks: [FragmentTrack]
    /// Presentation time of the segment's first lead-track sample, in the lead track's timescale.
    public var startTicks: Int64
    /// Sum of the lead track's sample durations.
    public var durationTicks: Int64
    /// Timescale of `startTicks` and `durationTicks`.
    public var timescale: Timescale
    /// For a partial segment (LL-HLS): its index within the segment `sequenceNumber`, from 0.
    public var partIndex: Int?
    /// For a part: whether it is its segment's last, which is known once the segment is cut.
    public var endsSegment = false
    /// For a part handed out in chunks: the chunks, in order. Its fragments are theirs one after the
    /// other, so the bytes a client got chunk by chunk are the part's.
    public var chunks: [Segment] = []
    /// For a chunk: its place among its segment's chunks, from 0; it numbers the chunk's fragment.
    public var chunkIndex: Int?
    /// When the segmenter cuts parts: every part of this segment, in order. Its file is their fragments
    /// one after the other, so a part a client fetched is byte for byte a piece of the segment.
    public var parts: [Segment] = []
    /// The segment starts a new timeline of the same stream (a capture device that came back), so
    /// its playlists put EXT-X-DISCONTINUITY before it; on a part, only on the segment's first.
    public var followsDiscontinuity = false

    public init(sequenceNumber: Int, tracks: [FragmentTrack], startTicks: Int64,
                durationTicks: Int64, timescale: Timescale) {
        self.sequenceNumber = sequenceNumber
        self.tracks = tracks
        self.startTicks = startTicks
        self.durationTicks = durationTicks
        self.timescale = timescale
    }

    public var durationSeconds: Double { timescale.seconds(durationTicks) }

    /// A part starts with a sync sample of its first track (INDEPENDENT=YES).
    public var isIndependent: Bool { tracks.first?.samples.first?.isSync ?? false }
}

extension Segment {
    /// The same segment `leadTicks` (of `timescale`, the lead track's) earlier on every track, each
    /// track's times converted to its own timescale from `timescales` (by track ID): a file that starts
    /// partway through a stream gets times from near zero.
    public func movedEarlier(byLeadTicks leadTicks: Int64, timescales: [UInt32: Timescale]) -> Segment {
        var moved = self
        for index in moved.tracks.indices {
            let ticks = timescale.convert(leadTicks, to: timescales[moved.tracks[index].trackID] ?? timescale)
            moved.tracks[index].baseDecodeTime = UInt64(max(0, Int64(moved.tracks[index].baseDecodeTime) - ticks))
            for sample in moved.tracks[index].samples.indices { moved.tracks[index].samples[sample].decodeTime -= ticks }
        }
        moved.startTicks -= leadTicks
        return moved
    }
}
