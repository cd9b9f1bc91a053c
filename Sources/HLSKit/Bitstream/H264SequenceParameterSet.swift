/// The fields of an H.264 sequence parameter set (H.264 7.3.2.1.1) that a muxer needs:
/// profile and level for `avcC` and CODECS, picture size and pixel aspect ratio for the sample
/// entry and `tkhd`, and the colour description for `colr`.
public struct H264SequenceParameterSet: Sendable, Equatable {
    public var profileIndication: UInt8
    /// constraint_set0_flag … constraint_set5_flag and the two reserved bits, as one byte.
    public var constraintFlags: UInt8
    public var levelIndication: UInt8
    public var sequenceParameterSetID: UInt32
    /// 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4.
    public var chromaFormat: UInt32
    public var separateColourPlane: Bool
    public var bitDepthLuma: Int
    public var bitDepthChroma: Int
    public var frameMacroblocksOnly: Bool
    public var cropping: Cropping
    /// Picture size in luma samples after cropping.
    public var width: Int
    public var height: Int
    /// From the VUI; 1:1 when the SPS does not say.
    public var sampleAspectRatio: SampleAspectRatio
    /// From the VUI; nil when the SPS has no colour description.
    public var colourDescription: ColourDescription?

    public struct Cropping: Sendable, Equatable {
        public var left: UInt32
        public var right: UInt32
        public var top: UInt32
        public var bottom: UInt32

        public static let none = Cropping(left: 0, right: 0, top: 0, bottom: 0)

        public init(left: UInt32, right: UInt32, top: UInt32, bottom: UInt32) {
            self.left = left
            self.right = right
            self.top = top
            self.bottom = bottom
        }
    }

    /// Width of a luma sample relative to its height (`pasp`'s hSpacing:vSpacing).
    public struct SampleAspectRatio: Sendable, Equatable {
        public var horizontal: UInt32
        public var vertical: UInt32

        public static let square = SampleAspectRatio(horizontal: 1, vertical: 1)

        public init(horizontal: UInt32, vertical: UInt32) {
            self.horizontal = horizontal
            self.vertical = vertical
        }

        /// 0:0 is "unspecified" in H.264, and is treated as square like every other ratio
        /// with equal terms.
        public var isSquare: Bool { horizontal == vertical }
    }

    /// Width in square pixels, for `tkhd`: the coded width stretched by the sample aspect ratio.
    public var displayWidth: Int {
        guard !sampleAspectRatio.isSquare, sampleAspectRatio.vertical != 0 else { return width }
        let numerator = width * Int(sampleAspectRatio.horizontal)
        let denominator = Int(sampleAspectRatio.vertical)
        return (numerator + denominator / 2) / denominator
    }

    /// Parses an SPS NAL unit, header byte included, emulation prevention bytes still in place.
    public init(parsing nalUnit: some Collection<UInt8>) throws {
        guard let header = nalUnit.first else { throw BitstreamError.truncated(structure: Self.structure) }
        guard H264NALUnitType(headerByte: header) == .sequenceParameterSet else {
            throw BitstreamError.unexpectedNALUnitType(expected: .sequenceParameterSet,
                                                       found: header & H264NALUnitType.headerMask)
        }
        var reader = BitReader(H264NALUnit.removingEmulationPrevention(nalUnit.dropFirst()),
                               structure: Self.structure)
        profileIndication = UInt8(try reader.readBits(8))
        constraintFlags = UInt8(try reader.readBits(8))
        levelIndication = UInt8(try reader.readBits(8))
        sequenceParameterSetID = try reader.readUE()
        try Self.check("seq_parameter_set_id", sequenceParameterSetID, in: Self.parameterSetIDRange)

        chromaFormat = Self.defaultChromaFormat
        separateColourPlane = false
        bitDepthLuma = Self.defaultBitDepth
        bitDepthChroma = Self.defaultBitDepth
        if Self.profilesWithChromaFormat.contains(profileIndication) {
            chromaFormat = try reader.readUE()
            guard chromaFormat <= Self.chroma444 else {
                throw BitstreamError.invalidField(structure: Self.structure, field: "chroma_format_idc",
                                                  value: Int(chromaFormat))
            }
            if chromaFormat == Self.chroma444 {
                separateColourPlane = try reader.readFlag()
                // Decoders do not take colour planes coded apart (FFmpeg: "not supported").
                guard !separateColourPlane else {
                    throw BitstreamError.invalidField(structure: Self.structure, field: "separate_colour_plane_flag",
                                                      value: 1)
                }
            }
            bitDepthLuma = Self.defaultBitDepth
                + Int(try Self.readBitDepthMinus8(field: "bit_depth_luma_minus8", &reader))
            bitDepthChroma = Self.defaultBitDepth
                + Int(try Self.readBitDepthMinus8(field: "bit_depth_chroma_minus8", &reader))
            // Nor luma and chroma of different depths (FFmpeg: "Different chroma and luma bit depth").
            guard bitDepthChroma == bitDepthLuma else {
                throw BitstreamError.invalidField(structure: Self.structure, field: "bit_depth_chroma_minus8",
                                                  value: bitDepthChroma - Self.defaultBitDepth)
            }
            try reader.skipBits(1)  // qpprime_y_zero_transform_bypass_flag
            if try reader.readFlag() {  // seq_scaling_matrix_present_flag
                try Self.skipScalingLists(count: chromaFormat == Self.chroma444 ? 12 : 8, in: &reader)
            }
        }

        try Self.check("log2_max_frame_num_minus4", try reader.readUE(), in: Self.log2MinusFourRange)
        try Self.skipPictureOrderCount(in: &reader)
        try Self.check("max_num_ref_frames", try reader.readUE(), in: Self.referenceFrameRange)
        try reader.skipBits(1)  // gaps_in_frame_num_value_allowed_flag
        let widthInMacroblocks = Int(try reader.readUE()) + 1
        let heightInMapUnits = Int(try reader.readUE()) + 1
        frameMacroblocksOnly = try reader.readFlag()
        let codedWidth = widthInMacroblocks * Self.macroblockSize
        let codedHeight = (frameMacroblocksOnly ? 1 : 2) * heightInMapUnits * Self.macroblockSize
        guard Self.isDecodableSize(width: codedWidth, height: codedHeight) else {
            throw BitstreamError.invalidField(structure: Self.structure, field: "coded picture size (luma samples)",
                                              value: Self.saturatingArea(width: codedWidth, height: codedHeight))
        }
        if !frameMacroblocksOnly {
            try reader.skipBits(1)  // mb_adaptive_frame_field_flag
        }
        try reader.skipBits(1)  // direct_8x8_inference_flag
        cropping = .none
        if try reader.readFlag() {
            cropping = Cropping(left: try reader.readUE(), right: try reader.readUE(),
                                top: try reader.readUE(), bottom: try reader.readUE())
        }
        sampleAspectRatio = .square
        colourDescription = nil
        if try reader.readFlag() {  // vui_parameters_present_flag
            let vui = try VideoUsabilityHeader.read(&reader, reservedRatioIsError: Self.structure)
            sampleAspectRatio = vui.sampleAspectRatio ?? .square
            colourDescription = vui.colour
            if let refused = Self.refusedVUITailField(reader) {
                throw BitstreamError.invalidField(structure: Self.structure, field: refused.field, value: refused.value)
            }
        }

        // Frame size and crop units follow H.264 7.4.2.1.1 (equations 7-19 to 7-22).
        let chromaArrayType = separateColourPlane ? 0 : chromaFormat
        let (subWidth, subHeight) = Self.chromaSubsampling(chromaArrayType)
        let fieldFactor = frameMacroblocksOnly ? 1 : 2
        let cropUnitX = subWidth
        let cropUnitY = subHeight * fieldFactor
        let horizontalCrop = Int(cropping.left) + Int(cropping.right)
        let verticalCrop = Int(cropping.top) + Int(cropping.bottom)
        width = codedWidth - cropUnitX * horizontalCrop
        height = codedHeight - cropUnitY * verticalCrop
        guard width > 0, height > 0 else {
            throw BitstreamError.invalidField(structure: Self.structure, field: "frame cropping",
                                              value: horizontalCrop + verticalCrop)
        }
    }

    private static let structure = "H.264 SPS"
    /// seq_parameter_set_id is 0 to 31 (7.4.2.1.1): a decoder has 32 slots and refuses any other.
    private static let parameterSetIDRange: ClosedRange<UInt32> = 0...31
    /// log2_max_frame_num_minus4 and log2_max_pic_order_cnt_lsb_minus4 are 0 to 12 (7.4.2.1.1).
    private static let log2MinusFourRange: ClosedRange<UInt32> = 0...12

    /// max_num_ref_frames is at most MaxDpbFrames, 16 (A.3.1); FFmpeg refuses more ("too many reference frames").
    private static let referenceFrameRange: ClosedRange<UInt32> = 0...16
    /// cpb_cnt_minus1 is 0 to 31 (E.2.2); FFmpeg refuses more ("cpb_count invalid").
    private static let codedPictureBufferCountRange: ClosedRange<UInt32> = 0...31
    /// max_num_reorder_frames is at most 16 (E.2.1); FFmpeg refuses more ("illegal num_reorder_frames").
    private static let reorderFrameRange: ClosedRange<UInt32> = 0...16

    /// FFmpeg allocates no picture whose padded area reaches INT_MAX / 8 bytes (`av_image_check_size`,
    /// which its SPS reader calls): such an SPS is dropped, whatever the level says.
    /// A coded size's area for an error message, `Int.max` when the fields' product does not fit: 32-bit
    /// Exp-Golomb fields make sizes whose area overflows.
    static func saturatingArea(width: Int, height: Int) -> Int {
        let area = width.multipliedReportingOverflow(by: height)
        return area.overflow ? Int.max : area.partialValue
    }

    static func isDecodableSize(width: Int, height: Int) -> Bool {
        let paddedArea = (width + 128).multipliedReportingOverflow(by: height + 128)
        return width > 0 && height > 0 && !paddedArea.overflow && paddedArea.partialValue < Int(Int32.max) / 8
    }

    /// The VUI after the colour description (E.1.1), read for the counts a decoder refuses. A VUI cut
    /// short is read as far as it goes, as decoders do; the reader is a copy, so nothing after it is read.
    private static func refusedVUITailField(_ reader: BitReader) -> (field: String, value: Int)? {
        var reader = reader
        return try? readVUITail(&reader)
    }

    private static func readVUITail(_ reader: inout BitReader) throws -> (field: String, value: Int)? {
        if try reader.readFlag() {  // chroma_loc_info_present_flag
            _ = try reader.readUE()  // chroma_sample_loc_type_top_field
            _ = try reader.readUE()  // chroma_sample_loc_type_bottom_field
        }
        if try reader.readFlag() {  // timing_info_present_flag
            try reader.skipBits(32 + 32 + 1)  // num_units_in_tick, time_scale, fixed_frame_rate_flag
        }
        let nalHRD = try reader.readFlag()
        if nalHRD, let refused = try readHRDParameters(&reader) { return refused }
        let vclHRD = try reader.readFlag()
        if vclHRD, let refused = try readHRDParameters(&reader) { return refused }
        if nalHRD || vclHRD {
            try reader.skipBits(1)  // low_delay_hrd_flag
        }
        try reader.skipBits(1)  // pic_struct_present_flag
        guard try reader.readFlag() else { return nil }  // bitstream_restriction_flag
        try reader.skipBits(1)  // motion_vectors_over_pic_boundaries_flag
        for _ in 0..<4 {  // max_bytes_per_pic_denom, max_bits_per_mb_denom, log2_max_mv_length_*
            _ = try reader.readUE()
        }
        let reorderFrames = try reader.readUE()
        _ = try reader.readUE()  // max_dec_frame_buffering
        return reorderFrameRange.contains(reorderFrames) ? nil : ("max_num_reorder_frames", Int(reorderFrames))
    }

    /// hrd_parameters() (E.1.2).
    private static func readHRDParameters(_ reader: inout BitReader) throws -> (field: String, value: Int)? {
        let countMinus1 = try reader.readUE()
        guard codedPictureBufferCountRange.contains(countMinus1) else { return ("cpb_cnt_minus1", Int(countMinus1)) }
        try reader.skipBits(4 + 4)  // bit_rate_scale, cpb_size_scale
        for _ in 0...countMinus1 {
            _ = try reader.readUE()  // bit_rate_value_minus1
            _ = try reader.readUE()  // cpb_size_value_minus1
            try reader.skipBits(1)  // cbr_flag
        }
        try reader.skipBits(4 * 5)  // the four delay and offset lengths
        return nil
    }

    private static func check(_ field: String, _ value: UInt32, in range: ClosedRange<UInt32>) throws {
        guard range.contains(value) else {
            throw BitstreamError.invalidField(structure: structure, field: field, value: Int(value))
        }
    }
    private static let macroblockSize = 16
    private static let defaultBitDepth = 8
    private static let defaultChromaFormat: UInt32 = 1
    private static let chroma444: UInt32 = 3

    /// bit_depth_luma_minus8 and bit_depth_chroma_minus8 are 0 to 6 (7.4.2.1.1); the `avcC` trailer
    /// writes them in three bits.
    private static let bitDepthMinus8Range: ClosedRange<UInt32> = 0...6
    /// delta_scale is -128 to 127 (7.4.2.1.1.1); beyond, the running scale's sum overflows.
    private static let deltaScaleRange: ClosedRange<Int32> = -128...127

    /// High and later profiles carry chroma_format_idc, bit depths and scaling lists.
    private static let profilesWithChromaFormat: Set<UInt8> = [
        100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135,
    ]

    /// SubWidthC and SubHeightC (Table 6-1); 1×1 when chroma has no separate crop grid.
    private static func chromaSubsampling(_ chromaArrayType: UInt32) -> (Int, Int) {
        switch chromaArrayType {
        case 1: (2, 2)
        case 2: (2, 1)
        default: (1, 1)
        }
    }

    /// scaling_list() (7.3.2.1.1.1): only the delta_scale codes are in the stream, and a list ends
    /// early when the running scale reaches 0 (use the default list).
    private static func skipScalingLists(count: Int, in reader: inout BitReader) throws {
        for listIndex in 0..<count {
            guard try reader.readFlag() else { continue }  // scaling_list_present_flag
            let size = listIndex < 6 ? 16 : 64
            var lastScale: Int32 = 8
            var nextScale: Int32 = 8
            for _ in 0..<size where nextScale != 0 {
                let delta = try reader.readSE()
                guard deltaScaleRange.contains(delta) else {
                    throw BitstreamError.invalidField(structure: structure, field: "delta_scale", value: Int(delta))
                }
                nextScale = (lastScale + delta + 256) % 256
                lastScale = nextScale == 0 ? lastScale : nextScale
            }
        }
    }

    private static func readBitDepthMinus8(field: String, _ reader: inout BitReader) throws -> UInt32 {
        let value = try reader.readUE()
        guard bitDepthMinus8Range.contains(value) else {
            throw BitstreamError.invalidField(structure: structure, field: field, value: Int(value))
        }
        return value
    }

    private static func skipPictureOrderCount(in reader: inout BitReader) throws {
        switch try reader.readUE() {  // pic_order_cnt_type
        case 0:
            try check("log2_max_pic_order_cnt_lsb_minus4", try reader.readUE(), in: log2MinusFourRange)
        case 1:
            try reader.skipBits(1)  // delta_pic_order_always_zero_flag
            _ = try reader.readSE()  // offset_for_non_ref_pic
            _ = try reader.readSE()  // offset_for_top_to_bottom_field
            let cycleLength = try reader.readUE()
            try check("num_ref_frames_in_pic_order_cnt_cycle", cycleLength, in: 0...255)
            for _ in 0..<cycleLength {
                _ = try reader.readSE()  // offset_for_ref_frame
            }
        case 2:
            break
        case let type:
            throw BitstreamError.invalidField(structure: structure, field: "pic_order_cnt_type", value: Int(type))
        }
    }
}
