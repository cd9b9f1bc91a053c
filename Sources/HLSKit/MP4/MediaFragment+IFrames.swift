extension MediaFragment {
    /// One sync sample of a fragment, for an I-frame playlist.
    public struct SyncSampleRange: Sendable, Equatable {
        /// Presentation time in the track's timescale.
        public var presentationTime: Int64
        /// From the start of the `moof` through the end of the sample's bytes in `mdat`: what a player
        /// needs, after the init section, to decode that one picture.
        public var offset: Int
        public var length: Int
    }

    /// Where the sync samples of `trackID` lie in the fragment `make` writes for `tracks`, whose
    /// total size is `fragmentSize`.
    public static func syncSampleRanges(of trackID: UInt32, in tracks: [FragmentTrack],
                                        fragmentSize: Int) -> [SyncSampleRange] {
        let runs = tracks.filter { !$0.samples.isEmpty }
        let dataSize = runs.reduce(0) { total, run in total + run.samples.reduce(0) { $0 + $1.data.count } }
        // The mdat payload is the end of the fragment; the moof follows the fixed-size styp.
        var position = fragmentSize - dataSize
        var ranges: [SyncSampleRange] = []
        for run in runs {
            for sample in run.samples {
                position += sample.data.count
                if run.trackID == trackID && sample.isSync {
                    ranges.append(SyncSampleRange(presentationTime: sample.decodeTime + Int64(sample.compositionOffset),
                                                  offset: stypSize, length: position - stypSize))
                }
            }
        }
        return ranges
    }

    /// `styp` with its size, FourCC, major brand, minor version and two compatible brands.
    static let stypSize = 24
}
