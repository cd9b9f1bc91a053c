/// Decoders for the box fields tests check (ISO/IEC 14496-12, 14496-14, 14496-15).
extension MP4Box {
    /// `mfhd` sequence_number.
    public func sequenceNumber() throws -> UInt32 {
        var reader = try fullBoxReader("mfhd")
        return try reader.uint32()
    }

    /// `tfhd` track_ID (flags are `flags`).
    public func trackFragmentTrackID() throws -> UInt32 {
        var reader = try fullBoxReader("tfhd")
        return try reader.uint32()
    }

    /// `tfdt` baseMediaDecodeTime, 32-bit in version 0, 64-bit in version 1.
    public func baseDecodeTime() throws -> UInt64 {
        var reader = try fullBoxReader("tfdt")
        return version == 1 ? try reader.uint64() : UInt64(try reader.uint32())
    }

    /// `mdhd` timescale.
    public func mediaTimescale() throws -> UInt32 {
        var reader = try fullBoxReader("mdhd")
        try reader.skip(version == 1 ? 16 : 8)  // creation and modification times
        return try reader.uint32()
    }

    /// `mdhd` language as three letters.
    public func mediaLanguage() throws -> String {
        var reader = try fullBoxReader("mdhd")
        try reader.skip(version == 1 ? 16 + 4 + 8 : 8 + 4 + 4)
        let packed = try reader.uint16()
        let letters = [10, 5, 0].map { UInt8((packed >> UInt16($0)) & 0x1F) + 0x60 }
        return String(decoding: letters, as: UTF8.self)
    }

    /// `hdlr` handler_type, e.g. "vide" or "soun".
    public func handlerType() throws -> String {
        var reader = try fullBoxReader("hdlr")
        try reader.skip(4)  // pre_defined
        return try reader.fourCC()
    }

    /// The `avcC` payload, the AVCDecoderConfigurationRecord.
    public func avcConfigurationBytes() throws -> [UInt8] {
        guard type == "avcC" else { throw MP4ReadError.unexpected(box: type, detail: "not avcC") }
        return Array(payload)
    }

    /// The `hvcC` payload, the HEVCDecoderConfigurationRecord.
    public func hevcConfigurationBytes() throws -> [UInt8] {
        guard type == "hvcC" else { throw MP4ReadError.unexpected(box: type, detail: "not hvcC") }
        return Array(payload)
    }

    /// A `colr` box of type `nclx` (14496-12 12.1.5).
    public struct ColourInformation: Sendable, Equatable {
        public var primaries: UInt16
        public var transferCharacteristics: UInt16
        public var matrixCoefficients: UInt16
        public var isFullRange: Bool

        public init(primaries: UInt16, transferCharacteristics: UInt16, matrixCoefficients: UInt16,
                    isFullRange: Bool) {
            self.primaries = primaries
            self.transferCharacteristics = transferCharacteristics
            self.matrixCoefficients = matrixCoefficients
            self.isFullRange = isFullRange
        }
    }

    public func colourInformation() throws -> ColourInformation {
        guard type == "colr" else { throw MP4ReadError.unexpected(box: type, detail: "not colr") }
        var reader = MP4Reader(payload, box: type)
        let colourType = try reader.fourCC()
        guard colourType == "nclx" else {
            throw MP4ReadError.unexpected(box: type, detail: "colour type \(colourType)")
        }
        let information = ColourInformation(primaries: try reader.uint16(),
                                            transferCharacteristics: try reader.uint16(),
                                            matrixCoefficients: try reader.uint16(),
                                            isFullRange: try reader.uint8() & 0x80 != 0)
        guard reader.remaining == 0 else {
            throw MP4ReadError.unexpected(box: type, detail: "\(reader.remaining) bytes after the fields")
        }
        return information
    }

    /// The DecoderSpecificInfo (AudioSpecificConfig) inside an `esds`.
    public func audioSpecificConfigBytes() throws -> [UInt8] {
        try decoderConfiguration().specificInfo
    }

    /// The `esds` DecoderConfigDescriptor: objectTypeIndication (0x40 for MPEG-4 audio) and the
    /// DecoderSpecificInfo (14496-1 7.2.6.5 and 7.2.6.6).
    public func decoderConfiguration() throws -> (objectType: UInt8, specificInfo: [UInt8]) {
        var reader = try fullBoxReader("esds")
        var descriptors = try Self.readDescriptor(&reader, expecting: 0x03)
        try descriptors.skip(2)  // ES_ID
        let flags = try descriptors.uint8()
        if flags & 0x80 != 0 { try descriptors.skip(2) }  // dependsOn_ES_ID
        if flags & 0x40 != 0 { try descriptors.skip(Int(try descriptors.uint8())) }  // URLstring
        if flags & 0x20 != 0 { try descriptors.skip(2) }  // OCR_ES_Id
        var decoderConfig = try Self.readDescriptor(&descriptors, expecting: 0x04)
        let objectType = try decoderConfig.uint8()
        try decoderConfig.skip(1 + 3 + 4 + 4)  // stream type, buffer, bitrates
        var specificInfo = try Self.readDescriptor(&decoderConfig, expecting: 0x05)
        return (objectType, Array(try specificInfo.take(specificInfo.remaining)))
    }

    public struct TrackHeader: Sendable, Equatable {
        public var flags: UInt32
        public var trackID: UInt32
        /// 8.8 fixed point.
        public var volume: UInt16
        public var matrix: [Int32]
        /// 16.16 fixed point, as stored.
        public var width: UInt32
        public var height: UInt32
    }

    public func trackHeader() throws -> TrackHeader {
        var reader = try fullBoxReader("tkhd")
        let longTimes = version == 1
        try reader.skip(longTimes ? 16 : 8)  // creation and modification times
        let trackID = try reader.uint32()
        try reader.skip(4 + (longTimes ? 8 : 4) + 8 + 2 + 2)  // reserved, duration, reserved, layer, group
        let volume = try reader.uint16()
        try reader.skip(2)
        let matrix = try (0..<9).map { _ in try reader.int32() }
        return TrackHeader(flags: flags, trackID: trackID, volume: volume, matrix: matrix,
                           width: try reader.uint32(), height: try reader.uint32())
    }

    public struct TrackRun: Sendable, Equatable {
        public struct Entry: Sendable, Equatable {
            public var duration: UInt32?
            public var size: UInt32?
            public var flags: UInt32?
            /// Signed in version 1; a version 0 value is reinterpreted from unsigned.
            public var compositionOffset: Int32?

            public init(duration: UInt32?, size: UInt32?, flags: UInt32?, compositionOffset: Int32?) {
                self.duration = duration
                self.size = size
                self.flags = flags
                self.compositionOffset = compositionOffset
            }
        }

        public var version: UInt8
        public var flags: UInt32
        public var dataOffset: Int32?
        public var firstSampleFlags: UInt32?
        public var entries: [Entry]
    }

    /// A `trun` that stores no per-sample field still counts samples; more than this is damage.
    static let maximumSamplesWithoutFields: UInt32 = 1 << 20

    public func trackRun() throws -> TrackRun {
        var reader = try fullBoxReader("trun")
        let count = try reader.uint32()
        let dataOffset = flags & 0x1 != 0 ? try reader.int32() : nil
        let firstSampleFlags = flags & 0x4 != 0 ? try reader.uint32() : nil
        let entryBytes = [0x100, 0x200, 0x400, 0x800].filter { flags & UInt32($0) != 0 }.count * 4
        // A count the payload does not hold exactly is refused before the loop, so a damaged count
        // never spins: with no per-sample fields, a box with bytes left over once counted up to 2^20 times.
        let needed = Int(count) * entryBytes
        guard entryBytes == 0 ? count <= Self.maximumSamplesWithoutFields : needed <= reader.remaining else {
            throw MP4ReadError.unexpected(box: "trun", detail: "sample_count \(count) does not fit the box")
        }
        guard reader.remaining == needed else {
            throw MP4ReadError.unexpected(box: "trun", detail: "\(reader.remaining - needed) bytes after the entries")
        }
        var entries: [TrackRun.Entry] = []
        entries.reserveCapacity(Int(count))
        for _ in 0..<count {
            entries.append(TrackRun.Entry(
                duration: flags & 0x100 != 0 ? try reader.uint32() : nil,
                size: flags & 0x200 != 0 ? try reader.uint32() : nil,
                flags: flags & 0x400 != 0 ? try reader.uint32() : nil,
                compositionOffset: flags & 0x800 != 0 ? try reader.int32() : nil))
        }
        return TrackRun(version: version, flags: flags, dataOffset: dataOffset,
                        firstSampleFlags: firstSampleFlags, entries: entries)
    }

    /// A reader positioned after the version and flags of a full box of the given type.
    private func fullBoxReader(_ expected: String) throws -> MP4Reader {
        guard type == expected else { throw MP4ReadError.unexpected(box: type, detail: "not \(expected)") }
        var reader = MP4Reader(payload, box: type)
        try reader.skip(4)
        return reader
    }

    /// A descriptor's body (14496-1 8.3.3): tag, then a size in 7-bit groups.
    private static func readDescriptor(_ reader: inout MP4Reader, expecting tag: UInt8) throws -> MP4Reader {
        let found = try reader.uint8()
        guard found == tag else {
            throw MP4ReadError.unexpected(box: "esds", detail: "descriptor tag \(found), expected \(tag)")
        }
        var size = 0
        var byte: UInt8
        repeat {
            byte = try reader.uint8()
            size = size << 7 | Int(byte & 0x7F)
        } while byte & 0x80 != 0
        return MP4Reader(try reader.take(size), box: "esds")
    }
}

/// Sample flags (ISO/IEC 14496-12 8.8.3.1) and the fragment headers that carry defaults for them.
extension MP4Box {
    /// `sample_is_non_sync_sample` in a sample-flags word.
    public static let nonSyncSampleFlag: UInt32 = 0x0001_0000
    /// `sample_depends_on` = 2: the sample does not depend on others (an I picture).
    public static let dependsOnNoOtherFlags: UInt32 = 0x0200_0000
    public static let dependsOnMask: UInt32 = 0x0300_0000

    /// `trex`: the defaults a track's fragments fall back on.
    public struct TrackExtends: Sendable, Equatable {
        public var trackID: UInt32
        public var defaultSampleDuration: UInt32
        public var defaultSampleSize: UInt32
        public var defaultSampleFlags: UInt32
    }

    public func trackExtends() throws -> TrackExtends {
        var reader = try fullBoxReader("trex")
        let trackID = try reader.uint32()
        try reader.skip(4)  // default_sample_description_index
        return TrackExtends(trackID: trackID, defaultSampleDuration: try reader.uint32(),
                            defaultSampleSize: try reader.uint32(), defaultSampleFlags: try reader.uint32())
    }

    /// `tfhd` with its optional fields, present as `flags` says.
    public struct TrackFragmentHeader: Sendable, Equatable {
        public static let baseDataOffsetPresent: UInt32 = 0x00_0001
        public static let defaultBaseIsMoof: UInt32 = 0x02_0000

        public var flags: UInt32
        public var trackID: UInt32
        public var baseDataOffset: UInt64?
        public var defaultSampleDuration: UInt32?
        public var defaultSampleSize: UInt32?
        public var defaultSampleFlags: UInt32?
    }

    public func trackFragmentHeader() throws -> TrackFragmentHeader {
        var reader = try fullBoxReader("tfhd")
        let trackID = try reader.uint32()
        let baseDataOffset = flags & 0x1 != 0 ? try reader.uint64() : nil
        if flags & 0x2 != 0 { try reader.skip(4) }  // sample_description_index
        return TrackFragmentHeader(
            flags: flags, trackID: trackID, baseDataOffset: baseDataOffset,
            defaultSampleDuration: flags & 0x8 != 0 ? try reader.uint32() : nil,
            defaultSampleSize: flags & 0x10 != 0 ? try reader.uint32() : nil,
            defaultSampleFlags: flags & 0x20 != 0 ? try reader.uint32() : nil)
    }

    /// Width and height of a visual sample entry (`avc1`, `hvc1` …).
    public func visualSampleEntrySize() throws -> (width: Int, height: Int) {
        var reader = MP4Reader(payload, box: type)
        try reader.skip(8 + 16)  // SampleEntry, pre_defined and reserved
        return (Int(try reader.uint16()), Int(try reader.uint16()))
    }

    /// Channel count and sample rate of an audio sample entry (`mp4a`).
    public func audioSampleEntry() throws -> (channelCount: Int, sampleRate: Int) {
        var reader = MP4Reader(payload, box: type)
        try reader.skip(8 + 8)  // SampleEntry, reserved
        let channels = Int(try reader.uint16())
        try reader.skip(2 + 4)  // samplesize, pre_defined and reserved
        return (channels, Int(try reader.uint32() >> 16))
    }
}
