/// The initialization section (`init.mp4`) of a fragmented-MP4 HLS stream (ISO/IEC 14496-12):
///
///     ftyp
///     moov
///     ├── mvhd
///     ├── trak                      one per track
///     │   ├── tkhd
///     │   └── mdia
///     │       ├── mdhd
///     │       ├── hdlr              vide | soun
///     │       └── minf
///     │           ├── vmhd | smhd
///     │           ├── dinf
///     │           │   └── dref
///     │           │       └── url
///     │           └── stbl
///     │               ├── stsd
///     │               │   └── avc1 ── avcC [pasp] [colr]  |  hvc1 ── hvcC [pasp] [colr]
///     │               │       |  mp4a ── esds
///     │               ├── stts      empty: samples live in the fragments
///     │               ├── stsc
///     │               ├── stsz
///     │               └── stco
///     └── mvex
///         └── trex                  one per track
public enum InitSegment {
    /// With a `key`, every track is encrypted with it ('cbcs', `SampleEncryption`).
    public static func make(tracks: [TrackDescription], key: SampleEncryption.TrackKey? = nil) -> [UInt8] {
        var writer = ByteWriter(capacity: 1024)
        writeFileType(&writer, trackCount: tracks.count)
        writer.box("moov") { moov in
            writeMovieHeader(&moov, nextTrackID: (tracks.map(\.trackID).max() ?? 0) + 1)
            for track in tracks {
                writeTrack(&moov, track, key: key)
            }
            moov.box("mvex") { mvex in
                for track in tracks {
                    writeTrackExtends(&mvex, trackID: track.trackID)
                }
            }
        }
        return writer.bytes
    }

    /// Movie header time values are in milliseconds; nothing here has a duration anyway.
    static let movieTimescale: UInt32 = 1000

    /// `iso6` covers everything written here: movie fragments, `tfdt` version 1 and `trun`
    /// version 1 with signed composition offsets. `mp41` lets players that check for a plain MP4
    /// brand accept the file. `cmfc` (CMAF) is claimed only for a single track, because a CMAF
    /// header holds exactly one track (ISO/IEC 23000-19 7.3.1).
    private static func writeFileType(_ writer: inout ByteWriter, trackCount: Int) {
        let compatibleBrands: [FourCC] = trackCount == 1 ? ["iso6", "mp41", "cmfc"] : ["iso6", "mp41"]
        writer.box("ftyp") { ftyp in
            ftyp.write(fourCC: "iso6")
            ftyp.write(UInt32(0))  // minor_version
            for brand in compatibleBrands {
                ftyp.write(fourCC: brand)
            }
        }
    }

    private static func writeMovieHeader(_ writer: inout ByteWriter, nextTrackID: UInt32) {
        writer.fullBox("mvhd", version: 0, flags: 0) { mvhd in
            mvhd.write(UInt32(0))  // creation_time
            mvhd.write(UInt32(0))  // modification_time
            mvhd.write(movieTimescale)
            mvhd.write(UInt32(0))  // duration: unknown while fragments are still coming
            mvhd.write(FixedPoint.one16x16)  // rate
            mvhd.write(FixedPoint.fullVolume)
            mvhd.write(zeros: 2 + 8)  // reserved
            writeMatrix(&mvhd, TransformationMatrix.identity)
            mvhd.write(zeros: 6 * 4)  // pre_defined
            mvhd.write(nextTrackID)
        }
    }

    private static func writeTrack(_ writer: inout ByteWriter, _ track: TrackDescription, key: SampleEncryption.TrackKey?) {
        writer.box("trak") { trak in
            writeTrackHeader(&trak, track)
            trak.box("mdia") { mdia in
                writeMediaHeader(&mdia, track)
                writeHandler(&mdia, isVideo: track.isVideo)
                mdia.box("minf") { minf in
                    writeMediaInformationHeader(&minf, isVideo: track.isVideo)
                    writeDataInformation(&minf)
                    minf.box("stbl") { stbl in
                        stbl.fullBox("stsd", version: 0, flags: 0) { stsd in
                            stsd.write(UInt32(1))  // entry_count
                            switch track.format {
                            case .h264(let format): SampleEntry.writeAVC(&stsd, format, key: key)
                            case .hevc(let format): SampleEntry.writeHEVC(&stsd, format, key: key)
                            case .aac(let format): SampleEntry.writeAAC(&stsd, format, trackID: track.trackID, key: key)
                            }
                        }
                        writeEmptySampleTables(&stbl)
                    }
                }
            }
        }
    }

    private static func writeTrackHeader(_ writer: inout ByteWriter, _ track: TrackDescription) {
        var matrix = TransformationMatrix.identity
        var displayWidth = 0
        var displayHeight = 0
        if let video = track.videoPresentation {
            matrix = video.matrix ?? TransformationMatrix.identity
            displayWidth = video.displayWidth
            displayHeight = video.displayHeight
        }
        writer.fullBox("tkhd", version: 0, flags: TrackHeaderFlags.enabledInMovieInPreview) { tkhd in
            tkhd.write(UInt32(0))  // creation_time
            tkhd.write(UInt32(0))  // modification_time
            tkhd.write(track.trackID)
            tkhd.write(UInt32(0))  // reserved
            tkhd.write(UInt32(0))  // duration
            tkhd.write(zeros: 8)  // reserved
            tkhd.write(UInt16(0))  // layer
            tkhd.write(UInt16(0))  // alternate_group
            tkhd.write(track.isVideo ? 0 : FixedPoint.fullVolume)
            tkhd.write(UInt16(0))  // reserved
            writeMatrix(&tkhd, matrix)
            tkhd.write(FixedPoint.fixed16x16(displayWidth))
            tkhd.write(FixedPoint.fixed16x16(displayHeight))
        }
    }

    private static func writeMediaHeader(_ writer: inout ByteWriter, _ track: TrackDescription) {
        writer.fullBox("mdhd", version: 0, flags: 0) { mdhd in
            mdhd.write(UInt32(0))  // creation_time
            mdhd.write(UInt32(0))  // modification_time
            mdhd.write(track.timescale.ticksPerSecond)
            mdhd.write(UInt32(0))  // duration
            mdhd.write(packedLanguage(track.language))
            mdhd.write(UInt16(0))  // pre_defined
        }
    }

    private static func writeHandler(_ writer: inout ByteWriter, isVideo: Bool) {
        writer.fullBox("hdlr", version: 0, flags: 0) { hdlr in
            hdlr.write(UInt32(0))  // pre_defined
            hdlr.write(fourCC: isVideo ? "vide" : "soun")
            hdlr.write(zeros: 3 * 4)  // reserved
            hdlr.write(bytes: Array((isVideo ? "VideoHandler" : "SoundHandler").utf8))
            hdlr.write(UInt8(0))  // name is null-terminated
        }
    }

    private static func writeMediaInformationHeader(_ writer: inout ByteWriter, isVideo: Bool) {
        if isVideo {
            // Flag 1 is required by 14496-12 12.1.2.2 for historical reasons.
            writer.fullBox("vmhd", version: 0, flags: 1) { vmhd in
                vmhd.write(UInt16(0))  // graphicsmode: copy
                vmhd.write(zeros: 3 * 2)  // opcolor
            }
        } else {
            writer.fullBox("smhd", version: 0, flags: 0) { smhd in
                smhd.write(Int16(0))  // balance: centre
                smhd.write(UInt16(0))  // reserved
            }
        }
    }

    private static func writeDataInformation(_ writer: inout ByteWriter) {
        writer.box("dinf") { dinf in
            dinf.fullBox("dref", version: 0, flags: 0) { dref in
                dref.write(UInt32(1))  // entry_count
                dref.fullBox("url ", version: 0, flags: DataEntryFlags.mediaInSameFile) { _ in }
            }
        }
    }

    private static func writeEmptySampleTables(_ writer: inout ByteWriter) {
        writer.fullBox("stts", version: 0, flags: 0) { $0.write(UInt32(0)) }
        writer.fullBox("stsc", version: 0, flags: 0) { $0.write(UInt32(0)) }
        writer.fullBox("stsz", version: 0, flags: 0) { stsz in
            stsz.write(UInt32(0))  // sample_size: sizes are in each trun
            stsz.write(UInt32(0))  // sample_count
        }
        writer.fullBox("stco", version: 0, flags: 0) { $0.write(UInt32(0)) }
    }

    private static func writeTrackExtends(_ writer: inout ByteWriter, trackID: UInt32) {
        writer.fullBox("trex", version: 0, flags: 0) { trex in
            trex.write(trackID)
            trex.write(UInt32(1))  // default_sample_description_index: the only stsd entry
            trex.write(UInt32(0))  // default_sample_duration
            trex.write(UInt32(0))  // default_sample_size
            trex.write(UInt32(0))  // default_sample_flags: every trun states its own
        }
    }

    private static func writeMatrix(_ writer: inout ByteWriter, _ matrix: [Int32]) {
        precondition(matrix.count == 9, "a transformation matrix has 9 values, got \(matrix.count)")
        for value in matrix {
            writer.write(value)
        }
    }

    /// ISO-639-2/T code as three 5-bit letters (each minus 0x60) behind a pad bit; "und" for
    /// anything that is not three lowercase letters.
    static func packedLanguage(_ language: String) -> UInt16 {
        let letters = Array(language.utf8)
        let code = letters.count == 3 && letters.allSatisfy({ (0x61...0x7A).contains($0) })
            ? letters : Array("und".utf8)
        return code.reduce(0) { ($0 << 5) | UInt16($1 - 0x60) }
    }
}

/// `tkhd` flags (14496-12 8.3.2.3).
enum TrackHeaderFlags {
    static let enabled: UInt32 = 0x000001
    static let inMovie: UInt32 = 0x000002
    static let inPreview: UInt32 = 0x000004
    static let enabledInMovieInPreview = enabled | inMovie | inPreview
}

/// `url ` flags (14496-12 8.7.2.3).
enum DataEntryFlags {
    /// The media data is in the same file as the box, so no URL string follows.
    static let mediaInSameFile: UInt32 = 0x000001
}

enum FixedPoint {
    /// 1.0 in 16.16 fixed point.
    static let one16x16: UInt32 = 0x0001_0000
    /// 1.0 in 8.8 fixed point, full volume.
    static let fullVolume: UInt16 = 0x0100

    static func fixed16x16(_ value: Int) -> UInt32 {
        UInt32(value) << 16
    }
}

public enum TransformationMatrix {
    /// { a, b, u, c, d, v, x, y, w }: a, b, c, d, x, y in 16.16, u, v, w in 2.30 fixed point.
    public static let identity: [Int32] = [0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000]
}
