/// One media segment (`.m4s`) of a fragmented-MP4 HLS stream (ISO/IEC 14496-12):
///
///     styp
///     moof
///     ├── mfhd                  sequence number
///     └── traf                  one per track with samples, in the order given
///         ├── tfhd              default-base-is-moof, no defaults
///         ├── tfdt              version 1, 64-bit base decode time
///         ├── trun              data offset, and per sample: duration, size, flags [, cto]
///         ├── senc              encrypted tracks only: each sample's subsamples (SampleEncryption)
///         ├── saiz              the size of each sample's entry in senc
///         └── saio              where senc's first entry is, from the moof's start
///     mdat                      the tracks' sample data, in traf order
public enum MediaFragment {
    /// `descriptions` says which tracks are video, because audio samples are all sync samples
    /// whatever `isSync` says. Every fragment track needs a description with its track ID.
    /// `segmentType` false leaves out `styp`, for fragments inside one file (a recording).
    /// `encrypted` gives the subsamples of each sample of the tracks whose samples are encrypted
    /// ('cbcs'), by track ID, as `SampleEncryption.encrypt` returns them.
    public static func make(sequenceNumber: UInt32, tracks: [FragmentTrack],
                            descriptions: [TrackDescription], segmentType: Bool = true,
                            encrypted: [UInt32: [[SampleEncryption.Subsample]]] = [:]) -> [UInt8] {
        let runs = tracks.filter { !$0.samples.isEmpty }.map { track in
            guard let description = descriptions.first(where: { $0.trackID == track.trackID }) else {
                preconditionFailure("fragment track \(track.trackID) has no track description")
            }
            return TrackRun(track, isVideo: description.isVideo)
        }
        let dataSize = runs.reduce(0) { $0 + $1.dataSize }
        var writer = ByteWriter(capacity: 1024 + dataSize)
        if segmentType {
            writer.box("styp") { styp in
                styp.write(fourCC: "msdh")
                styp.write(UInt32(0))  // minor_version
                styp.write(fourCC: "msdh")
                styp.write(fourCC: "msix")
            }
        }

        var dataOffsetPositions: [Int] = []
        let moofPosition = writer.count
        let moofStart = writer.box("moof") { moof in
            moof.fullBox("mfhd", version: 0, flags: 0) { $0.write(sequenceNumber) }
            for run in runs {
                dataOffsetPositions.append(writeTrackFragment(&moof, run, encrypted: encrypted[run.track.trackID],
                                                              moofPosition: moofPosition))
            }
        }

        // The data offsets are relative to the moof start and point past the mdat header.
        var dataOffset = writer.count - moofStart + mdatHeaderSize
        for (run, position) in zip(runs, dataOffsetPositions) {
            writer.set(Int32(dataOffset), at: position)
            dataOffset += run.dataSize
        }
        writer.box("mdat") { mdat in
            for run in runs {
                for sample in run.track.samples {
                    mdat.write(bytes: sample.data)
                }
            }
        }
        return writer.bytes
    }

    private static let mdatHeaderSize = 8

    /// Writes a traf and returns the position of its trun's data_offset field, to be patched.
    private static func writeTrackFragment(_ writer: inout ByteWriter, _ run: TrackRun,
                                           encrypted: [[SampleEncryption.Subsample]]?, moofPosition: Int) -> Int {
        var dataOffsetPosition = 0
        writer.box("traf") { traf in
            traf.fullBox("tfhd", version: 0, flags: TrackFragmentFlags.defaultBaseIsMoof) { tfhd in
                tfhd.write(run.track.trackID)
            }
            traf.fullBox("tfdt", version: 1, flags: 0) { tfdt in
                tfdt.write(run.track.baseDecodeTime)
            }
            traf.fullBox("trun", version: run.trunVersion, flags: run.trunFlags) { trun in
                trun.write(UInt32(run.track.samples.count))
                dataOffsetPosition = trun.count
                trun.write(Int32(0))  // data_offset, patched once the moof size is known
                for sample in run.track.samples {
                    trun.write(sample.durationTicks)
                    trun.write(UInt32(sample.data.count))
                    trun.write(run.sampleFlags(sample))
                    if run.hasCompositionOffsets {
                        trun.write(sample.compositionOffset)
                    }
                }
            }
            if let encrypted {
                writeSampleEncryption(&traf, encrypted, moofPosition: moofPosition)
            }
        }
        return dataOffsetPosition
    }

    /// `senc` (ISO/IEC 23001-7 7.2) with no per-sample IV (the constant one is in `tenc`), then `saiz`
    /// and `saio` (14496-12 8.7.8, 8.7.9) describing its entries as sample auxiliary information.
    private static func writeSampleEncryption(_ writer: inout ByteWriter, _ samples: [[SampleEncryption.Subsample]],
                                              moofPosition: Int) {
        let hasSubsamples = samples.contains { !$0.isEmpty }
        var firstEntryPosition = 0
        writer.fullBox("senc", version: 0, flags: hasSubsamples ? SampleEncryptionFlags.useSubsamples : 0) { senc in
            senc.write(UInt32(samples.count))
            firstEntryPosition = senc.count
            guard hasSubsamples else { return }
            for subsamples in samples {
                senc.write(UInt16(subsamples.count))
                for subsample in subsamples {
                    senc.write(subsample.clearBytes)
                    senc.write(subsample.protectedBytes)
                }
            }
        }
        let entrySizes = samples.map { hasSubsamples ? 2 + 6 * $0.count : 0 }
        // saiz sizes are bytes: an entry of over 255 (43 slices in a picture, which no encoder here makes) does not fit.
        let commonSize = Set(entrySizes).count == 1 ? entrySizes.first ?? 0 : 0
        writer.fullBox("saiz", version: 0, flags: 0) { saiz in
            saiz.write(UInt8(clamping: commonSize))  // default_sample_info_size; 0: one size per sample follows
            saiz.write(UInt32(samples.count))
            if commonSize == 0 {
                for size in entrySizes { saiz.write(UInt8(clamping: size)) }
            }
        }
        writer.fullBox("saio", version: 0, flags: 0) { saio in
            saio.write(UInt32(1))  // entry_count: senc's entries lie together
            saio.write(UInt32(firstEntryPosition - moofPosition))
        }
    }
}

/// A track's samples with the trun layout decided before anything is written.
private struct TrackRun {
    let track: FragmentTrack
    let isVideo: Bool
    let hasCompositionOffsets: Bool
    let dataSize: Int

    init(_ track: FragmentTrack, isVideo: Bool) {
        self.track = track
        self.isVideo = isVideo
        hasCompositionOffsets = track.samples.contains { $0.compositionOffset != 0 }
        dataSize = track.samples.reduce(0) { $0 + $1.data.count }
    }

    var trunFlags: UInt32 {
        var flags = TrackRunFlags.dataOffsetPresent | TrackRunFlags.sampleDurationPresent
            | TrackRunFlags.sampleSizePresent | TrackRunFlags.sampleFlagsPresent
        if hasCompositionOffsets {
            flags |= TrackRunFlags.sampleCompositionTimeOffsetsPresent
        }
        return flags
    }

    /// Version 1 makes composition offsets signed, so B-frames need no edit list.
    var trunVersion: UInt8 { hasCompositionOffsets ? 1 : 0 }

    func sampleFlags(_ sample: TimedSample) -> UInt32 {
        sample.isSync || !isVideo ? SampleFlags.syncSample : SampleFlags.nonSyncSample
    }
}

/// `senc` flags (ISO/IEC 23001-7 7.2.2).
enum SampleEncryptionFlags {
    static let useSubsamples: UInt32 = 0x00_0002
}

/// `tfhd` flags (14496-12 8.8.7.1).
enum TrackFragmentFlags {
    /// Data offsets are relative to the start of the enclosing moof.
    static let defaultBaseIsMoof: UInt32 = 0x02_0000
}

/// `trun` flags (14496-12 8.8.8.1).
enum TrackRunFlags {
    static let dataOffsetPresent: UInt32 = 0x00_0001
    static let sampleDurationPresent: UInt32 = 0x00_0100
    static let sampleSizePresent: UInt32 = 0x00_0200
    static let sampleFlagsPresent: UInt32 = 0x00_0400
    static let sampleCompositionTimeOffsetsPresent: UInt32 = 0x00_0800
}

/// Sample flags (14496-12 8.8.3.1): is_leading 2 bits, sample_depends_on 2,
/// sample_is_depended_on 2, sample_has_redundancy 2, padding 3, sample_is_non_sync_sample 1,
/// degradation priority 16.
enum SampleFlags {
    static let dependsOnOthers: UInt32 = 1 << 24
    static let dependsOnNothing: UInt32 = 2 << 24
    static let isNonSyncSample: UInt32 = 1 << 16

    static let syncSample = dependsOnNothing
    static let nonSyncSample = dependsOnOthers | isNonSyncSample
}
