/// The header of an ADTS frame (ISO/IEC 13818-7 6.2), AAC's framing in MPEG-TS and `.aac` files:
///
///     syncword 0xFFF 12 | ID 1 | layer 2 | protection_absent 1
///     profile 2 | sampling_frequency_index 4 | private 1 | channel_configuration 3
///     original/copy 1 | home 1 | copyright_id bit 1 | copyright_id start 1
///     aac_frame_length 13 | adts_buffer_fullness 11 | number_of_raw_data_blocks_in_frame 2
///     crc_check 16 (only when protection_absent is 0)
///
/// MP4 stores the raw AAC payload and carries this information in the AudioSpecificConfig.
public struct ADTSHeader: Sendable, Equatable {
    public static let lengthWithoutCRC = 7
    public static let lengthWithCRC = 9

    /// The 2-bit profile field: the MPEG-4 audio object type minus one (1 for AAC-LC).
    public var profile: Int
    public var samplingFrequencyIndex: Int
    public var channelConfiguration: Int
    /// The whole frame, header included, in bytes.
    public var frameLength: Int
    /// 7, or 9 when a CRC follows the fixed fields.
    public var headerLength: Int
    /// Raw data blocks (AAC frames of 1024 samples) in this ADTS frame.
    public var rawDataBlockCount: Int

    public var objectType: Int { profile + 1 }

    public init(parsing frame: some Collection<UInt8>) throws {
        let bytes = Array(frame.prefix(Self.lengthWithoutCRC))
        guard bytes.count == Self.lengthWithoutCRC else {
            throw BitstreamError.truncated(structure: Self.structure)
        }
        var reader = BitReader(bytes, structure: Self.structure)
        guard try reader.readBits(12) == Self.syncWord else { throw BitstreamError.missingADTSSyncWord }
        try reader.skipBits(3)  // ID, layer
        let protectionAbsent = try reader.readFlag()
        profile = Int(try reader.readBits(2))
        samplingFrequencyIndex = Int(try reader.readBits(4))
        try reader.skipBits(1)  // private_bit
        channelConfiguration = Int(try reader.readBits(3))
        try reader.skipBits(4)  // original_copy, home, copyright bits
        frameLength = Int(try reader.readBits(13))
        try reader.skipBits(11)  // adts_buffer_fullness
        rawDataBlockCount = Int(try reader.readBits(2)) + 1
        headerLength = protectionAbsent ? Self.lengthWithoutCRC : Self.lengthWithCRC

        guard samplingFrequencyIndex < AudioSpecificConfig.samplingFrequencies.count else {
            throw BitstreamError.invalidField(structure: Self.structure, field: "sampling_frequency_index",
                                              value: samplingFrequencyIndex)
        }
        guard frameLength >= headerLength else {
            throw BitstreamError.invalidField(structure: Self.structure, field: "aac_frame_length",
                                              value: frameLength)
        }
    }

    public var sampleRate: Int {
        AudioSpecificConfig.samplingFrequencies[samplingFrequencyIndex]
    }

    /// The AudioSpecificConfig an `esds` needs for this stream.
    public func audioSpecificConfig() throws -> AudioSpecificConfig {
        // channel_configuration 0 defers to an in-band program config element, which MP4 cannot carry here.
        guard let channelCount = AudioSpecificConfig.channelCountsByConfiguration[channelConfiguration] else {
            throw BitstreamError.invalidField(structure: Self.structure, field: "channel_configuration",
                                              value: channelConfiguration)
        }
        return AudioSpecificConfig(objectType: objectType, sampleRate: sampleRate, channelCount: channelCount)
    }

    /// The raw AAC payload of one ADTS frame: the header (and CRC) removed, cut at aac_frame_length.
    public static func payload(ofFrame frame: [UInt8]) throws -> ArraySlice<UInt8> {
        let header = try ADTSHeader(parsing: frame)
        guard header.frameLength <= frame.count else { throw BitstreamError.truncated(structure: "ADTS frame") }
        return frame[header.headerLength..<header.frameLength]
    }

    private static let structure = "ADTS header"
    private static let syncWord: UInt32 = 0xFFF
}
