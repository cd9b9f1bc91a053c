import Foundation
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

    /// Appends a segment's samples as one fragment and syncs it; with `capturedAt`, the wall-clock time of
    /// its first frame, a `prft` box before the `moof` ties the fragment's media time to that instant
    /// (ISO/IEC 14496-12 8.16.5), which is how a recording is found by time later.
    public mutating func append(_ segment: Segment, capturedAt: Date? = nil) throws(StoreError) {
        var bytes: [UInt8] = []
        if let capturedAt, let reference = segment.tracks.first(where: { track in
            tracks.first { $0.trackID == track.trackID }?.isVideo ?? false
        }) ?? segment.tracks.first {
            var writer = ByteWriter(capacity: 32)
            writer.fullBox("prft", version: 1, flags: 0) { prft in
                prft.write(reference.trackID)
                prft.write(RecordingFileSummary.ntp(capturedAt))
                prft.write(reference.baseDecodeTime)
            }
            bytes = writer.bytes
        }
        let moofOffset = offset + bytes.count
        bytes += MediaFragment.make(sequenceNumber: sequenceNumber, tracks: segment.tracks, descriptions: tracks,
                                    segmentType: false)
        try store.append(bytes, to: path, durability: .immediate)
        for track in segment.tracks {
            guard let sync = track.samples.first(where: \.isSync) else { continue }
            let time = UInt64(max(0, sync.decodeTime + Int64(sync.compositionOffset)))
            randomAccess[track.trackID, default: []].append((time, UInt64(moofOffset)))
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
