/// Reading and writing the AVCDecoderConfigurationRecord (ISO/IEC 14496-15 5.3.3.1):
///
///     configurationVersion = 1             8 bits
///     AVCProfileIndication                 8
///     profile_compatibility                8
///     AVCLevelIndication                   8
///     reserved '111111'b, lengthSizeMinusOne            6 + 2
///     reserved '111'b, numOfSequenceParameterSets       3 + 5
///     { sequenceParameterSetLength 16, sequenceParameterSetNALUnit }
///     numOfPictureParameterSets            8
///     { pictureParameterSetLength 16, pictureParameterSetNALUnit }
///     for profiles 100, 110, 122, 144:
///     reserved '111111'b, chroma_format                 6 + 2
///     reserved '11111'b, bit_depth_luma_minus8          5 + 3
///     reserved '11111'b, bit_depth_chroma_minus8        5 + 3
///     numOfSequenceParameterSetExt = 0     8
extension AVCDecoderConfiguration {
    private static let structure = "avcC"
    private static let configurationVersion: UInt8 = 1
    private static let lengthSizeReservedBits: UInt8 = 0b1111_1100
    private static let sequenceParameterSetCountReservedBits: UInt8 = 0b1110_0000
    private static let sequenceParameterSetCountMask: UInt8 = 0b0001_1111
    private static let chromaFormatReservedBits: UInt8 = 0b1111_1100
    private static let bitDepthReservedBits: UInt8 = 0b1111_1000
    /// Profiles whose record carries the chroma format and bit depth trailer.
    private static let profilesWithTrailer: Set<UInt8> = [100, 110, 122, 144]
    private static let baseBitDepth = 8

    /// A configuration for 4-byte length prefixes, with profile, compatibility and level taken
    /// from the first SPS (its bytes 1 to 3, after the NAL header).
    public init(sequenceParameterSets: [[UInt8]], pictureParameterSets: [[UInt8]]) throws {
        guard let sps = sequenceParameterSets.first, !pictureParameterSets.isEmpty else {
            throw BitstreamError.missingParameterSets
        }
        let parsed = try H264SequenceParameterSet(parsing: sps)
        // What the record's count and length fields can hold; an Annex-B stream can carry more.
        for (field, count, limit) in [("numOfSequenceParameterSets", sequenceParameterSets.count,
                                       Int(Self.sequenceParameterSetCountMask)),
                                      ("numOfPictureParameterSets", pictureParameterSets.count, Int(UInt8.max))]
        where count > limit {
            throw BitstreamError.invalidField(structure: Self.structure, field: field, value: count)
        }
        if let long = (sequenceParameterSets + pictureParameterSets).first(where: { $0.count > UInt16.max }) {
            throw BitstreamError.invalidField(structure: Self.structure, field: "parameter set length", value: long.count)
        }
        self.init(profileIndication: parsed.profileIndication, profileCompatibility: parsed.constraintFlags,
                  levelIndication: parsed.levelIndication, nalUnitLengthSize: 4,
                  sequenceParameterSets: sequenceParameterSets, pictureParameterSets: pictureParameterSets)
    }

    /// Parses an `avcC` payload. The high-profile trailer is not stored: `serialized` derives
    /// it from the SPS again.
    public init(parsing record: [UInt8]) throws {
        var reader = RecordReader(bytes: record)
        let version = try reader.readByte()
        guard version == Self.configurationVersion else {
            throw BitstreamError.invalidField(structure: Self.structure, field: "configurationVersion",
                                              value: Int(version))
        }
        let profile = try reader.readByte()
        let compatibility = try reader.readByte()
        let level = try reader.readByte()
        let lengthSize = Int(try reader.readByte() & ~Self.lengthSizeReservedBits) + 1
        guard LengthPrefixed.allowedLengthSizes.contains(lengthSize) else {
            throw BitstreamError.invalidField(structure: Self.structure, field: "lengthSizeMinusOne",
                                              value: lengthSize - 1)
        }
        let spsCount = Int(try reader.readByte() & Self.sequenceParameterSetCountMask)
        let sequenceParameterSets = try (0..<spsCount).map { _ in try reader.readParameterSet() }
        let ppsCount = Int(try reader.readByte())
        let pictureParameterSets = try (0..<ppsCount).map { _ in try reader.readParameterSet() }
        self.init(profileIndication: profile, profileCompatibility: compatibility, levelIndication: level,
                  nalUnitLengthSize: lengthSize, sequenceParameterSets: sequenceParameterSets,
                  pictureParameterSets: pictureParameterSets)
    }

    /// The `avcC` payload.
    public var serialized: [UInt8] {
        var writer = ByteWriter()
        writer.write(Self.configurationVersion)
        writer.write(profileIndication)
        writer.write(profileCompatibility)
        writer.write(levelIndication)
        writer.write(Self.lengthSizeReservedBits | UInt8(nalUnitLengthSize - 1))
        writer.write(Self.sequenceParameterSetCountReservedBits | UInt8(sequenceParameterSets.count))
        for sps in sequenceParameterSets {
            writer.write(UInt16(sps.count))
            writer.write(bytes: sps)
        }
        writer.write(UInt8(pictureParameterSets.count))
        for pps in pictureParameterSets {
            writer.write(UInt16(pps.count))
            writer.write(bytes: pps)
        }
        if Self.profilesWithTrailer.contains(profileIndication) {
            // An SPS that does not parse leaves the High profile defaults, 4:2:0 at 8 bits.
            let sps = sequenceParameterSets.first.flatMap { try? H264SequenceParameterSet(parsing: $0) }
            writer.write(Self.chromaFormatReservedBits | UInt8(sps?.chromaFormat ?? 1))
            writer.write(Self.bitDepthReservedBits | UInt8((sps?.bitDepthLuma ?? Self.baseBitDepth) - Self.baseBitDepth))
            writer.write(Self.bitDepthReservedBits | UInt8((sps?.bitDepthChroma ?? Self.baseBitDepth) - Self.baseBitDepth))
            writer.write(UInt8(0))  // numOfSequenceParameterSetExt
        }
        return writer.bytes
    }

    /// The RFC 6381 CODECS value, `avc1.PPCCLL` in lowercase hex.
    public var codecsString: String {
        "avc1." + [profileIndication, profileCompatibility, levelIndication].map(Self.hexByte).joined()
    }

    /// The first SPS, parsed.
    public func parsedSequenceParameterSet() throws -> H264SequenceParameterSet {
        guard let sps = sequenceParameterSets.first else { throw BitstreamError.missingParameterSets }
        return try H264SequenceParameterSet(parsing: sps)
    }

    private static func hexByte(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }

    private struct RecordReader {
        let bytes: [UInt8]
        var offset = 0

        mutating func readByte() throws -> UInt8 {
            guard offset < bytes.count else { throw BitstreamError.truncated(structure: structure) }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func readParameterSet() throws -> [UInt8] {
            let length = Int(try readByte()) << 8 | Int(try readByte())
            guard length <= bytes.count - offset else { throw BitstreamError.truncated(structure: structure) }
            defer { offset += length }
            return Array(bytes[offset..<offset + length])
        }
    }
}
