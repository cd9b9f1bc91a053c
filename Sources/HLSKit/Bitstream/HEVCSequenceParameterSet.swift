/// The fields of an HEVC sequence parameter set (H.265 7.3.2.2.1) that a muxer needs: profile, tier
/// and level for `hvcC` and CODECS, chroma format and bit depths for `hvcC`, the picture size after the
/// conformance window, and from the VUI the sample aspect ratio and colour description.
public struct HEVCSequenceParameterSet: Sendable, Equatable {
    public var videoParameterSetID: UInt8
    /// sps_max_sub_layers_minus1 + 1: `hvcC`'s numTemporalLayers.
    public var subLayerCount: Int
    public var temporalIDNesting: Bool
    public var profileTierLevel: HEVCProfileTierLevel
    public var sequenceParameterSetID: UInt32
    /// 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4.
    public var chromaFormat: UInt32
    public var separateColourPlane: Bool
    /// pic_width_in_luma_samples and pic_height_in_luma_samples: the decoded picture, before cropping.
    public var codedWidth: Int
    public var codedHeight: Int
    /// conf_win_*_offset, in chroma sample units.
    public var conformanceWindow: H264SequenceParameterSet.Cropping
    /// Picture size in luma samples inside the conformance window.
    public var width: Int
    public var height: Int
    public var bitDepthLuma: Int
    public var bitDepthChroma: Int
    /// From the VUI; 1:1 when the SPS does not say.
    public var sampleAspectRatio: H264SequenceParameterSet.SampleAspectRatio
    /// From the VUI; nil when the SPS has no colour description.
    public var colourDescription: ColourDescription?

    /// Width in square pixels, for `tkhd`: the width stretched by the sample aspect ratio.
    public var displayWidth: Int {
        guard !sampleAspectRatio.isSquare, sampleAspectRatio.vertical != 0 else { return width }
        let numerator = width * Int(sampleAspectRatio.horizontal)
        let denominator = Int(sampleAspectRatio.vertical)
        return (numerator + denominator / 2) / denominator
    }

    /// Parses an SPS NAL unit, two-byte header included, emulation prevention bytes still in place.
    public init(parsing nalUnit: some Collection<UInt8>) throws {
        guard let header = nalUnit.first, nalUnit.count > HEVCNALUnit.headerSize else {
            throw BitstreamError.truncated(structure: Self.structure)
        }
        guard HEVCNALUnitType(headerByte: header) == .sequenceParameterSet else {
            throw BitstreamError.invalidField(structure: Self.structure, field: "nal_unit_type",
                                              value: Int(HEVCNALUnit.typeField(ofHeaderByte: header)))
        }
        var reader = BitReader(H264NALUnit.removingEmulationPrevention(nalUnit.dropFirst(HEVCNALUnit.headerSize)),
                               structure: Self.structure)
        videoParameterSetID = UInt8(try reader.readBits(4))
        let maxSubLayersMinus1 = Int(try reader.readBits(3))
        guard maxSubLayersMinus1 < HEVCProfileTierLevel.maxSubLayers - 1 else {
            throw BitstreamError.invalidField(structure: Self.structure, field: "sps_max_sub_layers_minus1",
                                              value: maxSubLayersMinus1)
        }
        subLayerCount = maxSubLayersMinus1 + 1
        temporalIDNesting = try reader.readFlag()
        profileTierLevel = try HEVCProfileTierLevel(reading: &reader, maxSubLayersMinus1: maxSubLayersMinus1)
        sequenceParameterSetID = try reader.readUE()
        try Self.check("sps_seq_parameter_set_id", sequenceParameterSetID, in: Self.parameterSetIDRange)
        chromaFormat = try reader.readUE()
        guard chromaFormat <= Self.chroma444 else {
            throw BitstreamError.invalidField(structure: Self.structure, field: "chroma_format_idc",
                                              value: Int(chromaFormat))
        }
        separateColourPlane = chromaFormat == Self.chroma444 ? try reader.readFlag() : false
        codedWidth = Int(try reader.readUE())
        codedHeight = Int(try reader.readUE())
        conformanceWindow = .none
        if try reader.readFlag() {  // conformance_window_flag
            conformanceWindow = .init(left: try reader.readUE(), right: try reader.readUE(),
                                      top: try reader.readUE(), bottom: try reader.readUE())
        }
        bitDepthLuma = Self.baseBitDepth + Int(try Self.readBitDepthMinus8(field: "bit_depth_luma_minus8", &reader))
        bitDepthChroma = Self.baseBitDepth
            + Int(try Self.readBitDepthMinus8(field: "bit_depth_chroma_minus8", &reader))
        // FFmpeg decodes 8, 9, 10 and 12 bits, luma and chroma alike; it drops an SPS with others.
        guard Self.decodableBitDepths.contains(bitDepthLuma) else {
            throw BitstreamError.invalidField(structure: Self.structure, field: "bit_depth_luma_minus8",
                                              value: bitDepthLuma - Self.baseBitDepth)
        }
        guard chromaFormat == 0 || bitDepthChroma == bitDepthLuma else {
            throw BitstreamError.invalidField(structure: Self.structure, field: "bit_depth_chroma_minus8",
                                              value: bitDepthChroma - Self.baseBitDepth)
        }
        let pictureOrderCountBitsMinus4 = try reader.readUE()
        try Self.check("log2_max_pic_order_cnt_lsb_minus4", pictureOrderCountBitsMinus4, in: Self.log2MinusFourRange)
        let pictureOrderCountBits = Int(pictureOrderCountBitsMinus4) + Self.pictureOrderCountBitsOffset
        let orderingInfoForEverySubLayer = try reader.readFlag()
        for _ in (orderingInfoForEverySubLayer ? 0 : maxSubLayersMinus1)...maxSubLayersMinus1 {
            try Self.check("sps_max_dec_pic_buffering_minus1", try reader.readUE(), in: Self.pictureBufferMinus1Range)
            try Self.check("sps_max_num_reorder_pics", try reader.readUE(), in: Self.pictureBufferMinus1Range)
            _ = try reader.readUE()  // sps_max_latency_increase_plus1
        }
        let minCodingBlockBitsMinus3 = try reader.readUE()
        try Self.check("log2_min_luma_coding_block_size_minus3", minCodingBlockBitsMinus3, in: Self.codingBlockBitsRange)
        let codingTreeBlockBits = Int(minCodingBlockBitsMinus3) + 3 + Int(try reader.readUE())
        // Coding tree blocks of 16 to 64 luma samples (A.4.1), pictures made of whole coding blocks
        // (7.4.3.2.1): FFmpeg drops an SPS with others ("CTB size out of range", "Invalid coded frame dimensions").
        guard Self.codingTreeBlockBitsRange.contains(codingTreeBlockBits) else {
            throw BitstreamError.invalidField(structure: Self.structure, field: "log2_diff_max_min_luma_coding_block_size",
                                              value: codingTreeBlockBits - Int(minCodingBlockBitsMinus3) - 3)
        }
        let minCodingBlockMask = (1 << (Int(minCodingBlockBitsMinus3) + 3)) - 1
        guard codedWidth & minCodingBlockMask == 0, codedHeight & minCodingBlockMask == 0,
              H264SequenceParameterSet.isDecodableSize(width: codedWidth, height: codedHeight) else {
            throw BitstreamError.invalidField(structure: Self.structure, field: "pic_width_in_luma_samples",
                                              value: codedWidth)
        }
        _ = try reader.readUE()  // log2_min_luma_transform_block_size_minus2
        _ = try reader.readUE()  // log2_diff_max_min_luma_transform_block_size
        _ = try reader.readUE()  // max_transform_hierarchy_depth_inter
        _ = try reader.readUE()  // max_transform_hierarchy_depth_intra
        // scaling_list_enabled_flag, then sps_scaling_list_data_present_flag
        if try reader.readFlag(), try reader.readFlag() {
            try Self.skipScalingListData(in: &reader)
        }
        try reader.skipBits(2)  // amp_enabled_flag, sample_adaptive_offset_enabled_flag
        if try reader.readFlag() {  // pcm_enabled_flag
            try reader.skipBits(4 + 4)  // pcm_sample_bit_depth_luma_minus1, _chroma_minus1
            _ = try reader.readUE()  // log2_min_pcm_luma_coding_block_size_minus3
            _ = try reader.readUE()  // log2_diff_max_min_pcm_luma_coding_block_size
            try reader.skipBits(1)  // pcm_loop_filter_disabled_flag
        }
        try Self.skipShortTermReferencePictureSets(in: &reader)
        if try reader.readFlag() {  // long_term_ref_pics_present_flag
            for _ in 0..<(try reader.readUE()) {  // num_long_term_ref_pics_sps
                try reader.skipBits(pictureOrderCountBits + 1)  // lt_ref_pic_poc_lsb_sps, used_by_curr_pic_lt_sps_flag
            }
        }
        try reader.skipBits(2)  // sps_temporal_mvp_enabled_flag, strong_intra_smoothing_enabled_flag
        sampleAspectRatio = .square
        colourDescription = nil
        if try reader.readFlag() {  // vui_parameters_present_flag
            let vui = try VideoUsabilityHeader.read(&reader)
            sampleAspectRatio = vui.sampleAspectRatio ?? .square
            colourDescription = vui.colour
        }

        // The window is in chroma sample units (7.4.3.2.1, SubWidthC and SubHeightC of Table 6-1).
        let (subWidth, subHeight) = Self.chromaSubsampling(separateColourPlane ? 0 : chromaFormat)
        width = codedWidth - subWidth * (Int(conformanceWindow.left) + Int(conformanceWindow.right))
        height = codedHeight - subHeight * (Int(conformanceWindow.top) + Int(conformanceWindow.bottom))
        guard width > 0, height > 0 else {
            throw BitstreamError.invalidField(structure: Self.structure, field: "conformance window",
                                              value: codedWidth - width + codedHeight - height)
        }
    }

    private static let structure = "HEVC SPS"
    /// sps_seq_parameter_set_id is 0 to 15 (7.4.3.2.1): a decoder has 16 slots and refuses any other.
    private static let parameterSetIDRange: ClosedRange<UInt32> = 0...15
    /// log2_max_pic_order_cnt_lsb_minus4 is 0 to 12 (7.4.3.2.1).
    private static let log2MinusFourRange: ClosedRange<UInt32> = 0...12
    /// sps_max_dec_pic_buffering_minus1 and sps_max_num_reorder_pics stay below MaxDpbSize, 16 (A.4.2).
    private static let pictureBufferMinus1Range: ClosedRange<UInt32> = 0...15
    /// log2_min_luma_coding_block_size_minus3: coding blocks of 8 to 64 luma samples.
    private static let codingBlockBitsRange: ClosedRange<UInt32> = 0...3
    private static let codingTreeBlockBitsRange: ClosedRange<Int> = 4...6
    private static let decodableBitDepths: Set<Int> = [8, 9, 10, 12]

    private static func check(_ field: String, _ value: UInt32, in range: ClosedRange<UInt32>) throws {
        guard range.contains(value) else {
            throw BitstreamError.invalidField(structure: structure, field: field, value: Int(value))
        }
    }
    private static let baseBitDepth = 8
    private static let chroma444: UInt32 = 3
    /// bit_depth_luma_minus8 and bit_depth_chroma_minus8 are 0 to 8 (7.4.3.2.1).
    private static let bitDepthMinus8Range: ClosedRange<UInt32> = 0...8
    /// log2_max_pic_order_cnt_lsb_minus4 + 4 bits hold a POC LSB.
    private static let pictureOrderCountBitsOffset = 4
    /// scaling_list_data(): four block sizes, six matrices each (two for 32x32, coded every third).
    private static let scalingListSizes = 4
    private static let scalingListMatrices = 6
    private static let largestScalingListSize = 3
    private static let maxScalingListCoefficients = 64
    /// A short_term_ref_pic_set() may predict from an earlier one; at most 64 sets, each of at most 16 pictures.
    private static let maxShortTermReferencePictureSets = 64

    private static func readBitDepthMinus8(field: String, _ reader: inout BitReader) throws -> UInt32 {
        let value = try reader.readUE()
        guard bitDepthMinus8Range.contains(value) else {
            throw BitstreamError.invalidField(structure: structure, field: field, value: Int(value))
        }
        return value
    }

    /// SubWidthC and SubHeightC (Table 6-1); 1×1 when chroma has no separate crop grid.
    private static func chromaSubsampling(_ chromaArrayType: UInt32) -> (Int, Int) {
        switch chromaArrayType {
        case 1: (2, 2)
        case 2: (2, 1)
        default: (1, 1)
        }
    }

    /// scaling_list_data() (7.3.4).
    private static func skipScalingListData(in reader: inout BitReader) throws {
        for sizeID in 0..<scalingListSizes {
            let step = sizeID == largestScalingListSize ? 3 : 1
            for _ in stride(from: 0, to: scalingListMatrices, by: step) {
                if try !reader.readFlag() {  // scaling_list_pred_mode_flag
                    _ = try reader.readUE()  // scaling_list_pred_matrix_id_delta
                    continue
                }
                let coefficients = min(maxScalingListCoefficients, 1 << (4 + (sizeID << 1)))
                if sizeID > 1 {
                    _ = try reader.readSE()  // scaling_list_dc_coef_minus8
                }
                for _ in 0..<coefficients {
                    _ = try reader.readSE()  // scaling_list_delta_coef
                }
            }
        }
    }

    /// num_short_term_ref_pic_sets and each st_ref_pic_set(i) (7.3.7). A set predicted from the one
    /// before it has one flag pair per picture of that set plus one, so the picture counts are tracked.
    private static func skipShortTermReferencePictureSets(in reader: inout BitReader) throws {
        let count = Int(try reader.readUE())
        guard count <= maxShortTermReferencePictureSets else {
            throw BitstreamError.invalidField(structure: structure, field: "num_short_term_ref_pic_sets",
                                              value: count)
        }
        var pictureCounts: [Int] = []
        for index in 0..<count {
            if index > 0, try reader.readFlag() {  // inter_ref_pic_set_prediction_flag
                try reader.skipBits(1)  // delta_rps_sign
                _ = try reader.readUE()  // abs_delta_rps_minus1
                var pictures = 0
                // In the SPS delta_idx_minus1 is absent (0): the reference is the set just before.
                for _ in 0...pictureCounts[index - 1] {
                    // use_delta_flag is present only when used_by_curr_pic_flag is 0, and is 1 when absent.
                    if try reader.readFlag() || reader.readFlag() { pictures += 1 }
                }
                pictureCounts.append(pictures)
            } else {
                // Summed as Int: two counts near UInt32.max overflowed their sum.
                let negative = Int(try reader.readUE())
                let positive = Int(try reader.readUE())
                guard negative + positive <= maxShortTermReferencePictureSets else {
                    throw BitstreamError.invalidField(structure: structure, field: "num_negative_pics",
                                                      value: negative)
                }
                for _ in 0..<(negative + positive) {
                    _ = try reader.readUE()  // delta_poc_s0_minus1 or delta_poc_s1_minus1
                    try reader.skipBits(1)  // used_by_curr_pic_s0_flag or _s1_flag
                }
                pictureCounts.append(negative + positive)
            }
        }
    }
}
