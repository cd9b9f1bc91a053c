/// The colour description of a picture (ITU-T H.273 code points), as the VUI of an H.264 or HEVC
/// SPS signals it (video_signal_type and colour_description) and `colr` of type `nclx` stores it.
public struct ColourDescription: Sendable, Equatable {
    /// colour_primaries: 1 BT.709, 9 BT.2020.
    public var primaries: UInt8
    /// transfer_characteristics: 1 BT.709, 16 SMPTE ST 2084 (PQ), 18 ARIB STD-B67 (HLG).
    public var transferCharacteristics: UInt8
    /// matrix_coeffs: 1 BT.709, 9 BT.2020 non-constant luminance.
    public var matrixCoefficients: UInt8
    /// video_full_range_flag: luma spans 0…255 (at 8 bits) rather than 16…235.
    public var isFullRange: Bool

    /// transfer_characteristics of SMPTE ST 2084, perceptual quantisation (HDR10, Dolby Vision).
    public static let perceptualQuantizerTransfer: UInt8 = 16
    /// transfer_characteristics of ARIB STD-B67, hybrid log-gamma.
    public static let hybridLogGammaTransfer: UInt8 = 18

    public init(primaries: UInt8, transferCharacteristics: UInt8, matrixCoefficients: UInt8, isFullRange: Bool) {
        self.primaries = primaries
        self.transferCharacteristics = transferCharacteristics
        self.matrixCoefficients = matrixCoefficients
        self.isFullRange = isFullRange
    }
}

/// The start of vui_parameters(), identical in H.264 (E.1.1) and HEVC (E.2.1): sample aspect ratio,
/// overscan, then the video signal type with its colour description.
enum VideoUsabilityHeader {
    /// aspect_ratio_idc meaning "sar_width and sar_height follow".
    private static let extendedSampleAspectRatio: UInt32 = 255

    /// Table E-1 of both standards, indexed by aspect_ratio_idc 1…16.
    private static let sampleAspectRatios: [(UInt32, UInt32)] = [
        (1, 1), (12, 11), (10, 11), (16, 11), (40, 33), (24, 11), (20, 11), (32, 11),
        (80, 33), (18, 11), (15, 11), (64, 33), (160, 99), (4, 3), (3, 2), (2, 1),
    ]

    /// Reads up to the end of the colour description. The ratio is nil when absent or unspecified,
    /// the colour description when colour_description_present_flag is 0. A reserved aspect_ratio_idc
    /// (17 to 254) is an error when `reservedRatioIsError` names the structure: H.264 decoders refuse
    /// such an SPS (FFmpeg's "illegal aspect ratio"), HEVC ones read past it.
    static func read(_ reader: inout BitReader, reservedRatioIsError structure: String? = nil) throws
        -> (sampleAspectRatio: H264SequenceParameterSet.SampleAspectRatio?, colour: ColourDescription?) {
        var ratio: H264SequenceParameterSet.SampleAspectRatio?
        if try reader.readFlag() {  // aspect_ratio_info_present_flag
            let index = try reader.readBits(8)
            if index == extendedSampleAspectRatio {
                ratio = .init(horizontal: try reader.readBits(16), vertical: try reader.readBits(16))
            } else if (1...UInt32(sampleAspectRatios.count)).contains(index) {
                let (horizontal, vertical) = sampleAspectRatios[Int(index) - 1]
                ratio = .init(horizontal: horizontal, vertical: vertical)
            } else if index != 0, let structure {
                throw BitstreamError.invalidField(structure: structure, field: "aspect_ratio_idc", value: Int(index))
            }
        }
        if try reader.readFlag() {  // overscan_info_present_flag
            try reader.skipBits(1)  // overscan_appropriate_flag
        }
        guard try reader.readFlag() else { return (ratio, nil) }  // video_signal_type_present_flag
        try reader.skipBits(3)  // video_format
        let isFullRange = try reader.readFlag()
        guard try reader.readFlag() else { return (ratio, nil) }  // colour_description_present_flag
        let colour = ColourDescription(primaries: UInt8(try reader.readBits(8)),
                                       transferCharacteristics: UInt8(try reader.readBits(8)),
                                       matrixCoefficients: UInt8(try reader.readBits(8)), isFullRange: isFullRange)
        return (ratio, colour)
    }
}
