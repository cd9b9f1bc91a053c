extension MediaFragment {
    /// A fragment's leading sync sample, for an I-frame playlist.
    public struct SyncSampleRange: Sendable, Equatable {
        /// Presentation time in the track's timescale.
        public var presentationTime: Int64
        /// From the start of the `moof` through the end of the sample's bytes in `mdat`: what a player
        /// needs, after the init section, to decode that one picture.
        public var offset: Int
        public var length: Int
    }

    /// Where the first sample of `trackID` lies in the fragment `make` writes for `tracks`, whose total
    /// size is `fragmentSize`, when it is a sync sample. A sync sample later in the fragment (a camera's
    /// keyframe inside a segment) has no range of its own: one from the `moof` through it would hold
    /// every picture before it too.
    public static func leadingSyncSampleRange(of trackID: UInt32, in tracks: [FragmentTrack],
                                              fragmentSize: Int) -> SyncSampleRange? {
        let runs = tracks.filter { !$0.samples.isEmpty }
        let dataSize = runs.reduce(0) { total, run in total + run.samples.reduce(0) { $0 + $1.data.count } }
        // The mdat payload is the end of the fragment; the moof follows the fixed-size styp.
        var position = fragmentSize - dataSize
        for run in runs {
            guard run.trackID == trackID else {
                position += run.samples.reduce(0) { $0 + $1.data.count }
                continue
            }
            let first = run.samples[0]
            guard first.isSync else { return nil }
            position += first.data.count
            return SyncSampleRange(presentationTime: first.decodeTime + Int64(first.compositionOffset),
                                   offset: stypSize, length: position - stypSize)
        }
        return nil
    }

    /// `styp` with its size, FourCC, major brand, minor version and two compatible brands.
    static let stypSize = 24
}
