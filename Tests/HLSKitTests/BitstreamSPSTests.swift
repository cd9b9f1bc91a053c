import HLSTestSupport
import Testing
@testable import HLSKit

/// Real SPS NAL units. Each was written by
/// `ffmpeg -f lavfi -i testsrc2=size=WxH:rate=25 -frames:v 1 -c:v libx264 -profile:v P [-vf setsar=S]
///  [-pix_fmt F] -f h264 -` and checked against `ffprobe -show_streams`, except `highScalingLists`.
struct SPSFixture: Sendable, CustomTestStringConvertible {
    let name: String
    let nalUnit: [UInt8]
    let profile: UInt8
    let constraints: UInt8
    let level: UInt8
    let chromaFormat: UInt32
    let bitDepth: Int
    let width: Int
    let height: Int
    let cropping: H264SequenceParameterSet.Cropping
    let sampleAspectRatio: H264SequenceParameterSet.SampleAspectRatio
    let displayWidth: Int

    var testDescription: String { name }

    static let all: [SPSFixture] = [
        // 320x240, -profile:v baseline (constrained baseline: constraint_set0 and 1)
        SPSFixture(name: "baseline 320x240", nalUnit: [UInt8](hex: "6742c00dd90141fb011000000300100000030320f142a480"),
                   profile: 66, constraints: 0xC0, level: 13, chromaFormat: 1, bitDepth: 8,
                   width: 320, height: 240, cropping: .none, sampleAspectRatio: .square, displayWidth: 320),
        // 640x360, -profile:v main: 23 macroblock rows cropped by 8 lines
        SPSFixture(name: "main 640x360", nalUnit: [UInt8](hex: "674d401eeca05017fcb808800000030080000019078b16cb"),
                   profile: 77, constraints: 0x40, level: 30, chromaFormat: 1, bitDepth: 8, width: 640, height: 360,
                   cropping: .init(left: 0, right: 0, top: 0, bottom: 4), sampleAspectRatio: .square,
                   displayWidth: 640),
        // 1920x1080, -profile:v high: 1088 coded lines cropped to 1080
        SPSFixture(name: "high 1920x1080",
                   nalUnit: [UInt8](hex: "67640028acd940780227e5c044000003000400000300c83c60c658"),
                   profile: 100, constraints: 0, level: 40, chromaFormat: 1, bitDepth: 8, width: 1920, height: 1080,
                   cropping: .init(left: 0, right: 0, top: 0, bottom: 4), sampleAspectRatio: .square,
                   displayWidth: 1920),
        // 720x576, -profile:v high -vf setsar=16/15: aspect_ratio_idc 255 with explicit 16:15
        SPSFixture(name: "high 720x576 SAR 16:15",
                   nalUnit: [UInt8](hex: "6764001eacd940b4126ffc0040003c40000003004000000c83c58b6580"),
                   profile: 100, constraints: 0, level: 30, chromaFormat: 1, bitDepth: 8, width: 720, height: 576,
                   cropping: .none, sampleAspectRatio: .init(horizontal: 16, vertical: 15), displayWidth: 768),
        // 352x288, -profile:v main -vf setsar=12/11: aspect_ratio_idc 2 from Table E-1
        SPSFixture(name: "main 352x288 SAR 12:11",
                   nalUnit: [UInt8](hex: "674d400deca0b04b6042000003000200000300641e28532c"),
                   profile: 77, constraints: 0x40, level: 13, chromaFormat: 1, bitDepth: 8, width: 352, height: 288,
                   cropping: .none, sampleAspectRatio: .init(horizontal: 12, vertical: 11), displayWidth: 384),
        // 352x288, -profile:v high10 -pix_fmt yuv420p10le
        SPSFixture(name: "high10 352x288", nalUnit: [UInt8](hex: "676e000da6cd9416096c0440000003004000000c83c50a6580"),
                   profile: 110, constraints: 0, level: 13, chromaFormat: 1, bitDepth: 10, width: 352, height: 288,
                   cropping: .none, sampleAspectRatio: .square, displayWidth: 352),
        // 176x144, -profile:v high444 -pix_fmt yuv444p: crop units of 1 in both directions
        SPSFixture(name: "high444 176x144", nalUnit: [UInt8](hex: "67f4000b919b28589d80880000030008000003019078a14cb0"),
                   profile: 244, constraints: 0, level: 11, chromaFormat: 3, bitDepth: 8, width: 176, height: 144,
                   cropping: .none, sampleAspectRatio: .square, displayWidth: 176),
        // The high 1920x1080 SPS with seq_scaling_matrix_present_flag set and lists 0 (explicit),
        // 1 (use default) and 6 (explicit 8x8) spliced in, re-escaped; FFmpeg decodes the stream
        // with it as 1920x1080. libx264 puts its matrices in the PPS, so none of its SPSs has lists.
        SPSFixture(name: "high scaling lists",
                   nalUnit: [UInt8](hex: "67640028ada49249249249422123232323232323232323232323232323232323232323"
                                    + "232323232323232323236ca03c0113f2e022000003000200000300641e30632c"),
                   profile: 100, constraints: 0, level: 40, chromaFormat: 1, bitDepth: 8, width: 1920, height: 1080,
                   cropping: .init(left: 0, right: 0, top: 0, bottom: 4), sampleAspectRatio: .square,
                   displayWidth: 1920),
    ]
}

@Suite struct BitstreamSPSTests {
    @Test(arguments: SPSFixture.all)
    func parsesRealSequenceParameterSets(fixture: SPSFixture) throws {
        let sps = try H264SequenceParameterSet(parsing: fixture.nalUnit)
        #expect(sps.profileIndication == fixture.profile)
        #expect(sps.constraintFlags == fixture.constraints)
        #expect(sps.levelIndication == fixture.level)
        #expect(sps.chromaFormat == fixture.chromaFormat)
        #expect(sps.bitDepthLuma == fixture.bitDepth)
        #expect(sps.bitDepthChroma == fixture.bitDepth)
        #expect(sps.frameMacroblocksOnly)
        #expect(sps.cropping == fixture.cropping)
        #expect(sps.width == fixture.width)
        #expect(sps.height == fixture.height)
        #expect(sps.sampleAspectRatio == fixture.sampleAspectRatio)
        #expect(sps.displayWidth == fixture.displayWidth)
    }

    /// `-profile:v high -color_primaries bt709 -color_trc bt709 -colorspace bt709 -color_range pc`, 320x240.
    @Test func readsTheColourDescriptionFromTheVUI() throws {
        let nalUnit = [UInt8](hex: "6764000dacd94141fb016e020202800000030080000019078a14cb")
        let sps = try H264SequenceParameterSet(parsing: nalUnit)
        #expect(sps.colourDescription == ColourDescription(primaries: 1, transferCharacteristics: 1,
                                                           matrixCoefficients: 1, isFullRange: true))
        #expect(sps.width == 320)
        for fixture in SPSFixture.all {
            #expect(try H264SequenceParameterSet(parsing: fixture.nalUnit).colourDescription == nil, "\(fixture.name)")
        }
    }

    @Test func rejectsOtherNALUnitTypes() {
        #expect(throws: BitstreamError.unexpectedNALUnitType(expected: .sequenceParameterSet, found: 8)) {
            try H264SequenceParameterSet(parsing: [0x68, 0xCB, 0x83, 0xCB, 0x20])
        }
    }

    /// A delta_scale far outside -128...127 overflowed the running scale's sum (found by fuzz-h264-sps).
    @Test func rejectsADeltaScaleOutOfRange() {
        #expect(throws: BitstreamError.invalidField(structure: "H.264 SPS", field: "delta_scale", value: 2_147_483_561)) {
            try H264SequenceParameterSet(parsing: [UInt8](hex: "676e6676ff2500000000ffffff52"))
        }
    }

    @Test func truncatedSPSThrows() {
        let cut = Array(SPSFixture.all[2].nalUnit.prefix(8))
        #expect(throws: BitstreamError.truncated(structure: "H.264 SPS")) {
            try H264SequenceParameterSet(parsing: cut)
        }
    }

    /// What a decoder refuses, the parser refuses: FFmpeg drops such an SPS ("sps_id out of range",
    /// "illegal aspect ratio"), so a copy that kept it would decode nothing. The fixture's SPS
    /// (`6742c00dda0507ec…`), edited by Tests/Tools/h264_sps_edit.py.
    @Test(arguments: [
        ("6742c00d05368141fb011000000300100000030320f142aa", "seq_parameter_set_id", 40),
        ("6742c00dda0507ed9040000003004000000c83c50aa8", "aspect_ratio_idc", 100),
    ])
    func rejectsWhatADecoderRefuses(nalUnit: String, field: String, value: Int) {
        #expect(throws: BitstreamError.invalidField(structure: "H.264 SPS", field: field, value: value)) {
            try H264SequenceParameterSet(parsing: [UInt8](hex: nalUnit))
        }
        #expect(throws: Never.self) {
            try H264SequenceParameterSet(parsing: [UInt8](hex: "6742c00dda0507ec0440000003004000000c83c50aa800"))
        }
    }
}

/// An SPS written field by field (H.264 7.3.2.1.1, E.1.1), for values no encoder writes: High profile,
/// 4:2:0, 320x240, a VUI with timing, optional NAL HRD parameters and bitstream restrictions.
struct WrittenSPS: Sendable {
    var chromaFormat: UInt32 = 1
    var separateColourPlane = false
    var bitDepthLumaMinus8: UInt32 = 0
    var bitDepthChromaMinus8: UInt32 = 0
    var maxReferenceFrames: UInt32 = 1
    var widthInMacroblocksMinus1: UInt32 = 19
    var heightInMapUnitsMinus1: UInt32 = 14
    /// cpb_cnt_minus1 of NAL HRD parameters; none when nil.
    var codedPictureBufferCountMinus1: UInt32?
    /// max_num_reorder_frames of the bitstream restrictions; none when nil.
    var reorderFrames: UInt32?
    /// The VUI ends after time_scale, as a cut-short one does.
    var cutAfterTiming = false

    init(_ edit: (inout WrittenSPS) -> Void = { _ in }) {
        edit(&self)
    }

    var nalUnit: [UInt8] {
        var bits = BitWriter()
        bits.write(100, 8)  // profile_idc: High
        bits.write(0, 8)  // constraint flags
        bits.write(30, 8)  // level_idc
        bits.writeUE(0)  // seq_parameter_set_id
        bits.writeUE(chromaFormat)
        if chromaFormat == 3 { bits.write(separateColourPlane ? 1 : 0, 1) }
        bits.writeUE(bitDepthLumaMinus8)
        bits.writeUE(bitDepthChromaMinus8)
        bits.write(0, 2)  // qpprime_y_zero_transform_bypass_flag, seq_scaling_matrix_present_flag
        bits.writeUE(0)  // log2_max_frame_num_minus4
        bits.writeUE(2)  // pic_order_cnt_type
        bits.writeUE(maxReferenceFrames)
        bits.write(0, 1)  // gaps_in_frame_num_value_allowed_flag
        bits.writeUE(widthInMacroblocksMinus1)
        bits.writeUE(heightInMapUnitsMinus1)
        bits.write(0b110, 3)  // frame_mbs_only_flag, direct_8x8_inference_flag, frame_cropping_flag
        bits.write(1, 1)  // vui_parameters_present_flag
        bits.write(0, 4)  // aspect ratio, overscan, video signal type, chroma location: absent
        bits.write(1, 1)  // timing_info_present_flag
        bits.write(1, 32)  // num_units_in_tick
        bits.write(50, 32)  // time_scale
        guard !cutAfterTiming else { return [0x67] + bits.escapedRBSP }
        bits.write(1, 1)  // fixed_frame_rate_flag
        bits.write(codedPictureBufferCountMinus1 == nil ? 0 : 1, 1)  // nal_hrd_parameters_present_flag
        if let count = codedPictureBufferCountMinus1 {
            bits.writeUE(count)
            bits.write(0, 8)  // bit_rate_scale, cpb_size_scale
            for _ in 0...count {
                bits.writeUE(1000)  // bit_rate_value_minus1
                bits.writeUE(1000)  // cpb_size_value_minus1
                bits.write(0, 1)  // cbr_flag
            }
            bits.write(0, 20)  // the four delay and offset lengths
        }
        bits.write(0, 1)  // vcl_hrd_parameters_present_flag
        if codedPictureBufferCountMinus1 != nil { bits.write(0, 1) }  // low_delay_hrd_flag
        bits.write(0, 1)  // pic_struct_present_flag
        bits.write(reorderFrames == nil ? 0 : 1, 1)  // bitstream_restriction_flag
        if let reorderFrames {
            bits.write(1, 1)  // motion_vectors_over_pic_boundaries_flag
            for value: UInt32 in [0, 0, 16, 16, reorderFrames, max(reorderFrames, 1)] { bits.writeUE(value) }
        }
        return [0x67] + bits.escapedRBSP
    }
}

/// Every SPS FFmpeg 5.1's `ff_h264_decode_seq_parameter_set` drops is one the parser refuses, so the
/// copy path and the validator, which both ask the parser, agree with the decoder.
@Suite struct BitstreamSPSDecoderRefusalTests {
    @Test func theWrittenSPSParses() throws {
        let sps = try H264SequenceParameterSet(parsing: WrittenSPS().nalUnit)
        #expect(sps.width == 320 && sps.height == 240 && sps.profileIndication == 100)
        let restricted = try H264SequenceParameterSet(parsing: WrittenSPS { $0.reorderFrames = 16; $0.codedPictureBufferCountMinus1 = 31 }.nalUnit)
        #expect(restricted.width == 320)
        // A VUI cut short after its timing is read as far as it goes, as FFmpeg reads it.
        #expect(try H264SequenceParameterSet(parsing: WrittenSPS { $0.cutAfterTiming = true }.nalUnit).height == 240)
    }

    @Test(arguments: [
        ("separate colour planes", WrittenSPS { $0.chromaFormat = 3; $0.separateColourPlane = true },
         "separate_colour_plane_flag", 1),
        ("luma and chroma of different depths", WrittenSPS { $0.bitDepthLumaMinus8 = 2 }, "bit_depth_chroma_minus8", 0),
        ("17 reference frames", WrittenSPS { $0.maxReferenceFrames = 17 }, "max_num_ref_frames", 17),
        ("a picture too large to allocate", WrittenSPS { $0.widthInMacroblocksMinus1 = 1023; $0.heightInMapUnitsMinus1 = 1023 },
         "coded picture size (luma samples)", 16384 * 16384),
        // Sizes whose area does not fit 64 bits are refused as too large, not a trap (found by fuzz-avcc).
        ("a size whose area overflows", WrittenSPS { $0.widthInMacroblocksMinus1 = .max - 1; $0.heightInMapUnitsMinus1 = .max - 1 },
         "coded picture size (luma samples)", Int.max),
        ("33 coded picture buffers", WrittenSPS { $0.codedPictureBufferCountMinus1 = 32 }, "cpb_cnt_minus1", 32),
        ("17 reorder frames", WrittenSPS { $0.reorderFrames = 17 }, "max_num_reorder_frames", 17),
    ])
    func refusesWhatFFmpegDrops(name: String, sps: WrittenSPS, field: String, value: Int) {
        #expect(throws: BitstreamError.invalidField(structure: "H.264 SPS", field: field, value: value), "\(name)") {
            try H264SequenceParameterSet(parsing: sps.nalUnit)
        }
    }
}
