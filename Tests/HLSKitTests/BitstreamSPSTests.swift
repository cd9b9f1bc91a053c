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
