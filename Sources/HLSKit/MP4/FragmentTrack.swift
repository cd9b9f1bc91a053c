/// One track's run of samples inside a media fragment (`traf`).
public struct FragmentTrack: Sendable, Equatable {
    public var trackID: UInt32
    /// `tfdt` baseMediaDecodeTime, in the track's timescale.
    public var baseDecodeTime: UInt64
    public var samples: [TimedSample]

    public init(trackID: UInt32, baseDecodeTime: UInt64, samples: [TimedSample]) {
        self.trackID = trackID
        self.baseDecodeTime = baseDecodeTime
        self.samples = samples
    }
}
