import HLSKit

/// One fragmented-MP4 file that grows while it is recorded, playable at every moment:
///
///     ftyp, moov (with mvex)        written and synced first
///     moof, mdat                    one fragment per segment, each synced once written
///     …
///     mfra                          at a clean stop: a tfra per track (the time and place of each
///     ├── tfra …                    fragment's first sync sample) and mfro, so players can seek
///     └── mfro                      without reading every moof
///
/// After a crash or a power cut the file holds every fragment synced before it: players read it up
/// to its last complete fragment.
public struct RecordingWriter: ~Copyable {
    public let store: any StreamStore
    /// The file's path in `store`.
    public let path: String
    public let tracks: [TrackDescription]
    private var offset: Int
    private var sequenceNumber: UInt32 = 1
    /// Per track: (time, moof offset) of each fragment's first sync sample.
    private var randomAccess: [UInt32: [(time: UInt64, moofOffset: UInt64)]] = [:]
    /// Bytes written, init section included.
    public var byteCount: Int { offset }

    /// Creates (or replaces) the file at `path` in `store`, holding its init section.
    public init(store: any StreamStore, path: String, tracks: [TrackDescription]) throws(StoreError) {
        self.store = store
        self.path = path
        self.tracks = tracks
        let initSection = InitSegment.make(tracks: tracks)
        try store.write(initSection, to: path, durability: .immediate)
        offset = initSection.count
    }

    /// Appends a segment's samples as one fragment and syncs it.
    public mutating func append(_ segment: Segment) throws(StoreError) {
        let bytes = MediaFragment.make(sequenceNumber: sequenceNumber, tracks: segment.tracks, descriptions: tracks,
                                       segmentType: false)
        try store.append(bytes, to: path, durability: .immediate)
        for track in segment.tracks {
            guard let sync = track.samples.first(where: \.isSync) else { continue }
            let time = UInt64(max(0, sync.decodeTime + Int64(sync.compositionOffset)))
            randomAccess[track.trackID, default: []].append((time, UInt64(offset)))
        }
        offset += bytes.count
        sequenceNumber += 1
    }

    /// Writes the random-access index: the file is complete.
    public consuming func finish() throws(StoreError) {
        var writer = ByteWriter(capacity: 64 + randomAccess.values.reduce(0) { $0 + $1.count * 19 })
        let start = writer.box("mfra") { mfra in
            for track in tracks {
                let entries = randomAccess[track.trackID] ?? []
                mfra.fullBox("tfra", version: 1, flags: 0) { tfra in
                    tfra.write(track.trackID)
                    // Reserved bits, then one-byte traf, trun and sample numbers.
                    tfra.write(UInt32(0))
                    tfra.write(UInt32(entries.count))
                    for entry in entries {
                        tfra.write(entry.time)
                        tfra.write(entry.moofOffset)
                        tfra.write(UInt8(1))
                        tfra.write(UInt8(1))
                        tfra.write(UInt8(1))
                    }
                }
            }
            mfra.fullBox("mfro", version: 0, flags: 0) { mfro in
                mfro.write(UInt32(0))  // the mfra's size, patched below
            }
        }
        writer.set(UInt32(writer.count - start), at: writer.count - 4)
        try store.append(writer.bytes, to: path, durability: .immediate)
    }
}
