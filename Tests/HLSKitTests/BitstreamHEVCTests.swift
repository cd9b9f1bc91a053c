import HLSTestSupport
import Testing
@testable import HLSKit

/// Real HEVC parameter sets. Each was written by `ffmpeg -f lavfi -i testsrc2=size=WxH:rate=25 -frames:v 1
/// -c:v libx265 -x265-params log-level=error [options] -f hevc -` (FFmpeg 5.1, x265 3.5), read back with
/// `ffprobe -show_streams`, and `record` is the `hvcC` FFmpeg's mp4 muxer wrote for the same stream
/// with `-c copy -tag:v hvc1`.
struct HEVCFixture: Sendable, CustomTestStringConvertible {
    let name: String
    let vps: [UInt8]
    let sps: [UInt8]
    let pps: [UInt8]
    let record: [UInt8]?
    let codecs: String
    let chromaFormat: UInt32
    let bitDepth: Int
    let codedSize: (width: Int, height: Int)
    let size: (width: Int, height: Int)
    let displayWidth: Int
    let subLayers: Int
    let colour: ColourDescription?

    var testDescription: String { name }

    /// The record built from these parameter sets.
    func configuration() throws -> HEVCDecoderConfiguration {
        try HEVCDecoderConfiguration(videoParameterSets: [vps], sequenceParameterSets: [sps], pictureParameterSets: [pps])
    }

    static let all: [HEVCFixture] = [
        // -pix_fmt yuv420p: Main, level 2 (60), progressive and frame-only (constraint byte 0x90).
        HEVCFixture(
            name: "main 320x240", vps: [UInt8](hex: "40010c01ffff01600000030090000003000003003c959809"),
            sps: [UInt8](hex: "42010101600000030090000003000003003ca00a080f165959a4932bc05a020000030002000003003210"),
            pps: [UInt8](hex: "4401c172b46240"),
            record: [UInt8](hex: "0101600000009000000000003cf000fcfdf8f800000f03a00001001840010c01ffff0160000003"
                + "0090000003000003003c959809a10001002a42010101600000030090000003000003003ca00a080f165959a4932bc05a02"
                + "0000030002000003003210a2000100074401c172b46240"),
            codecs: "hvc1.1.6.L60.90", chromaFormat: 1, bitDepth: 8, codedSize: (320, 240), size: (320, 240),
            displayWidth: 320, subLayers: 1, colour: nil),
        // -pix_fmt yuv420p10le -color_primaries bt2020 -color_trc arib-std-b67 -colorspace bt2020nc: HLG.
        HEVCFixture(
            name: "main10 HLG 1920x1080", vps: [UInt8](hex: "40010c01ffff022000000300900000030000030078959809"),
            sps: [UInt8](hex: "420101022000000300900000030000030078a003c08010e4d96566924caf016a12241208000003"
                + "000800000300c840"),
            pps: [UInt8](hex: "4401c172b46240"),
            record: [UInt8](hex: "01022000000090000000000078f000fcfdfafa00000f03a00001001840010c01ffff0220000003"
                + "00900000030000030078959809a10001002f420101022000000300900000030000030078a003c08010e4d96566924caf01"
                + "6a12241208000003000800000300c840a2000100074401c172b46240"),
            codecs: "hvc1.2.4.L120.90", chromaFormat: 1, bitDepth: 10, codedSize: (1920, 1080), size: (1920, 1080),
            displayWidth: 1920, subLayers: 1,
            colour: ColourDescription(primaries: 9, transferCharacteristics: 18, matrixCoefficients: 9,
                                      isFullRange: false)),
        // -pix_fmt yuv420p10le -color_primaries bt2020 -color_trc smpte2084 -colorspace bt2020nc -color_range pc.
        HEVCFixture(
            name: "main10 PQ full range 3840x2160",
            vps: [UInt8](hex: "40010c01ffff022000000300900000030000030096959809"),
            sps: [UInt8](hex: "420101022000000300900000030000030096a001e020021c4d96566924caf016e1220120800000"
                + "03008000000c84"),
            pps: [UInt8](hex: "4401c172b46240"), record: nil,
            codecs: "hvc1.2.4.L150.90", chromaFormat: 1, bitDepth: 10, codedSize: (3840, 2160), size: (3840, 2160),
            displayWidth: 3840, subLayers: 1,
            colour: ColourDescription(primaries: 9, transferCharacteristics: 16, matrixCoefficients: 9,
                                      isFullRange: true)),
        // 180x100 -vf setsar=16/15: coded 184x104 with a conformance window, aspect_ratio_idc 255.
        HEVCFixture(
            name: "main 180x100 SAR 16:15", vps: [UInt8](hex: "40010c01ffff01600000030090000003000003001e959809"),
            sps: [UInt8](hex: "42010101600000030090000003000003001ea0172069dde5959a4932bffc0040003da020000003"
                + "00200000030321"),
            pps: [UInt8](hex: "4401c172b46240"),
            record: [UInt8](hex: "0101600000009000000000001ef000fcfdf8f800000f03a00001001840010c01ffff0160000003"
                + "0090000003000003001e959809a10001002e42010101600000030090000003000003001ea0172069dde5959a4932bffc00"
                + "40003da02000000300200000030321a2000100074401c172b46240"),
            codecs: "hvc1.1.6.L30.90", chromaFormat: 1, bitDepth: 8, codedSize: (184, 104), size: (180, 100),
            displayWidth: 192, subLayers: 1, colour: nil),
        // -pix_fmt yuv444p -color_primaries bt709 -color_trc bt709 -colorspace bt709: range extensions profile.
        HEVCFixture(
            name: "rext 4:4:4 176x144", vps: [UInt8](hex: "40010c01ffff0408000003009e0800000300003c959809"),
            sps: [UInt8](hex: "4201010408000003009e0800000300003c9002c4048b2cacd24995e02d40404041000003000100"
                + "0003001908"),
            pps: [UInt8](hex: "4401c172860c4624"),
            record: [UInt8](hex: "0104080000009e08000000003cf000fcfff8f800000f03a00001001740010c01ffff0408000003"
                + "009e0800000300003c959809a10001002c4201010408000003009e0800000300003c9002c4048b2cacd24995e02d4040"
                + "4041000003000100000300190" + "8a2000100084401c172860c4624"),
            codecs: "hvc1.4.10.L60.9E.8", chromaFormat: 3, bitDepth: 8, codedSize: (176, 144), size: (176, 144),
            displayWidth: 176, subLayers: 1,
            colour: ColourDescription(primaries: 1, transferCharacteristics: 1, matrixCoefficients: 1,
                                      isFullRange: false)),
        // 640x360, 8 frames, -x265-params temporal-layers=1:bframes=3: two sub-layers, not nested.
        HEVCFixture(
            name: "main 640x360 two temporal layers",
            vps: [UInt8](hex: "40010c02ffff01600000030090000003000003003f00009594aca048"),
            sps: [UInt8](hex: "42010201600000030090000003000003003f0000a005020169659594acb24995e02d0100000300"
                + "01000003001908"),
            pps: [UInt8](hex: "4401c172b46240"),
            record: [UInt8](hex: "0101600000009000000000003ff000fcfdf8f800001303a00001001c40010c02ffff0160000003"
                + "0090000003000003003f00009594aca048a10001002e42010201600000030090000003000003003f0000a00502016965"
                + "9594acb24995e02d010000030001000003001908a2000100074401c172b46240"),
            codecs: "hvc1.1.6.L63.90", chromaFormat: 1, bitDepth: 8, codedSize: (640, 360), size: (640, 360),
            displayWidth: 640, subLayers: 2, colour: nil),
        // -x265-params scaling-list=FILE with every list explicit (random 8…40 entries and DC values), and
        // BT.709 colour: the VUI comes after scaling_list_data(). FFmpeg decodes the stream as 320x240.
        HEVCFixture(
            name: "main 320x240 explicit scaling lists",
            vps: [UInt8](hex: "40010c01ffff01600000030090000003000003003c959809"),
            sps: [UInt8](hex: "42010101600000030090000003000003003ca00a080f165959a493e1005c0dc241e0c8401283005e0a040f06281b4110"
                + "210d050178a0830c82608306e0f81e86a0b04893854340903a1031414b0681709c130c1e381783a08984101b8c101a16"
                + "128c0640ac24094180e1e28784c4844a142438103314616283e28138a0883c04614860241607a0d8e130d9c1e07c2650"
                + "90403e64150a078148b0402860230b18266704a2858481704450330d30e85820c2a2858226281582406e16048404a40b"
                + "0350d41c0291824c190902005e0b082810990270b05460905c09c30161e0c443070151009c605411448602630a13181f"
                + "0906411064170370f0f05809c228602605e080485430198686850241130238581107ce141c1f09b62187836118782650"
                + "f0483e71828ad30a8a0f8240b8b110500d470220b870118b060131008c130310401406e1e043048484c12305e101a090"
                + "5840267102c48d1c8300ac28310d0f03520b824161260941c01043d090270b0828e125286c12025209078c3a19180981"
                + "a8e2e1285811b044140e8a0e82806a080e0983e0841802b1c387870168241c130b82c0a8a38641143a81202b38423410"
                + "101798171c78f8d1e080a0803e5180a4c0e01bc08013875438110d181b836160b4207290c343038687ce81d06c240ac1"
                + "54178341e2c128220a8e4120e8541007078250403e50e055840118240c86c1b0214321282c04e170641320661809306e"
                + "1a3040a140e8c10131a30c1d1470f07c2a0c858210e086382e201581001a94200a1831040100885c582a0d87c1d0b1a3"
                + "080cc1a38603434a1f1c4044170c0330f02507c0841082e0a9c4832098443c084130b04632121c08c58d06470b850168"
                + "24042088280fc28c70401582a14170f868c2506c170d43d9a1808882048250463c130743009c4068e1e0e8742c16102c"
                + "402b1a0c02a2c58402c1b20e0da1a0d01289120e81286c1016088198d05434286220d89181b0582c2e2a405cc3a3c343"
                + "c223a3c100701d98598341109060584460f205430151a100f05ce1e06e62218130640bce0f0178240421a0c82406e812"
                + "30b02710141220179048248810738721863e190581f1e705050460d01098240d416021141605ac1334101e1d0443c3c1"
                + "90e8b05050427069088701aa0c18321e042160c8808101282039a201802909040168360e983050c9c3c1b1c191640d0d"
                + "09064140271a0c82e085836121716c340a434c3a60580cc16190904a5186040606e41a0b858b0b0648090aa0d8a34343"
                + "41a836046120c8b04050c04cc2c10b04c1a38f4094160270c0290820540cce0f03a346040582b05c28b0461e90128403"
                + "e0e032101c0ac482c0b943824e360e0786c1730478f302c0e850a170b18118582e15068094241806e718c20160803b33"
                + "0b0641104c130250d204a0b01587814904982813044110420d0402f0f090c858380e55e02d4040404100000300010000"
                + "03001908"),
            pps: [UInt8](hex: "4401c172b46240"), record: nil,
            codecs: "hvc1.1.6.L60.90", chromaFormat: 1, bitDepth: 8, codedSize: (320, 240), size: (320, 240),
            displayWidth: 320, subLayers: 1,
            colour: ColourDescription(primaries: 1, transferCharacteristics: 1, matrixCoefficients: 1,
                                      isFullRange: false)),
    ]
}

@Suite struct BitstreamHEVCTests {
    @Test(arguments: HEVCFixture.all)
    func parsesRealSequenceParameterSets(fixture: HEVCFixture) throws {
        let sps = try HEVCSequenceParameterSet(parsing: fixture.sps)
        #expect(sps.chromaFormat == fixture.chromaFormat)
        #expect(sps.bitDepthLuma == fixture.bitDepth)
        #expect(sps.bitDepthChroma == fixture.bitDepth)
        #expect(sps.codedWidth == fixture.codedSize.width)
        #expect(sps.codedHeight == fixture.codedSize.height)
        #expect(sps.width == fixture.size.width)
        #expect(sps.height == fixture.size.height)
        #expect(sps.displayWidth == fixture.displayWidth)
        #expect(sps.subLayerCount == fixture.subLayers)
        #expect(sps.colourDescription == fixture.colour)
    }

    @Test(arguments: HEVCFixture.all)
    func codecsStringIsDerivedFromTheSPS(fixture: HEVCFixture) throws {
        let config = try fixture.configuration()
        #expect(config.codecsString == fixture.codecs)
    }

    /// Built from the parameter sets alone, the record matches FFmpeg's byte for byte.
    @Test(arguments: HEVCFixture.all.filter { $0.record != nil })
    func recordMatchesFFmpegs(fixture: HEVCFixture) throws {
        let record = try #require(fixture.record)
        let built = try fixture.configuration()
        #expect(built.serialized == record)
        let parsed = try HEVCDecoderConfiguration(parsing: record)
        #expect(parsed == built)
        #expect(parsed.serialized == record)
    }

    @Test func parsedRecordKeepsItsFields() throws {
        let fixture = try #require(HEVCFixture.all.first { $0.subLayers == 2 })
        let config = try HEVCDecoderConfiguration(parsing: try #require(fixture.record))
        #expect(config.temporalLayerCount == 2)
        #expect(!config.temporalIDNested)
        #expect(config.nalUnitLengthSize == 4)
        #expect(config.profileTierLevel.profileIDC == 1)
        #expect(config.profileTierLevel.levelIDC == 63)
        #expect(config.arrays.map(\.type) == [32, 33, 34])
        #expect(config.arrays.allSatisfy { $0.isComplete })
        #expect(config.videoParameterSets == [fixture.vps])
        #expect(config.sequenceParameterSets == [fixture.sps])
        #expect(config.pictureParameterSets == [fixture.pps])
    }

    /// The example of ISO/IEC 14496-15 E.3 and RFC 6381's style: Main, level 3.1, progressive, non-packed,
    /// frame-only; a high-tier profile-space-1 string with two constraint bytes.
    @Test func codecsStringFollowsTheSpecificationExamples() {
        let main = HEVCProfileTierLevel(profileSpace: 0, isHighTier: false, profileIDC: 1,
                                        compatibilityFlags: 0x6000_0000, constraintIndicatorFlags: 0xB000_0000_0000,
                                        levelIDC: 93)
        #expect(main.codecsString() == "hvc1.1.6.L93.B0")
        #expect(main.codecsString(sampleEntry: "hev1") == "hev1.1.6.L93.B0")
        let spaced = HEVCProfileTierLevel(profileSpace: 1, isHighTier: true, profileIDC: 4,
                                          compatibilityFlags: 0x8200_0000, constraintIndicatorFlags: 0xB023_0000_0000,
                                          levelIDC: 120)
        #expect(spaced.codecsString() == "hvc1.A4.41.H120.B0.23")
        let bare = HEVCProfileTierLevel(profileSpace: 0, isHighTier: false, profileIDC: 2,
                                        compatibilityFlags: 0x2000_0000, constraintIndicatorFlags: 0, levelIDC: 150)
        #expect(bare.codecsString() == "hvc1.2.4.L150")
    }

    /// An `hev1` input may declare 2-byte lengths and incomplete arrays; the output's samples get 4-byte
    /// lengths and an `hvc1` entry, so the record must say so. SEI arrays keep their flag.
    @Test func recordForRewrittenSamples() throws {
        var input = try HEVCFixture.all[0].configuration()
        input.nalUnitLengthSize = 2
        for index in input.arrays.indices { input.arrays[index].isComplete = false }
        input.arrays.append(.init(isComplete: false, type: HEVCNALUnitType.prefixSEI.rawValue, nalUnits: [[0x4E, 0x01]]))
        let output = input.forFourByteLengthSamples
        #expect(output.nalUnitLengthSize == 4)
        #expect(output.arrays.map(\.isComplete) == [true, true, true, false])
        #expect(output.sequenceParameterSets == input.sequenceParameterSets)
        #expect(output.hasParameterSets)
        input.arrays.removeAll { $0.type == HEVCNALUnitType.pictureParameterSet.rawValue }
        #expect(!input.hasParameterSets)
    }

    @Test func configurationFromAnnexBData() throws {
        let fixture = HEVCFixture.all[0]
        let startCode: [UInt8] = [0, 0, 0, 1]
        let annexB = startCode + fixture.vps + startCode + fixture.sps + startCode + fixture.pps
        let config = try HEVCDecoderConfiguration(annexB: annexB)
        #expect(config.serialized == fixture.record)
        #expect(throws: BitstreamError.missingHEVCParameterSets) {
            try HEVCDecoderConfiguration(annexB: startCode + fixture.sps + startCode + fixture.pps)
        }
    }

    @Test func accessUnitDropsDelimitersAndRepeatedParameterSetsAndFindsIRAP() throws {
        let fixture = HEVCFixture.all[0]
        let config = try fixture.configuration()
        let startCode: [UInt8] = [0, 0, 0, 1]
        let delimiter: [UInt8] = [0x46, 0x01, 0x10]  // type 35
        let idrSlice: [UInt8] = [0x26, 0x01, 0xAF, 0x09]  // type 19, IDR_W_RADL
        let craSlice: [UInt8] = [0x2A, 0x01, 0xAF]  // type 21
        let trailingSlice: [UInt8] = [0x02, 0x01, 0xD0]  // type 1, TRAIL_R
        let otherPPS: [UInt8] = [0x44, 0x01, 0xC1, 0x73]
        let keyframe = try HEVCAccessUnit(startCode + delimiter + startCode + fixture.vps + startCode + fixture.sps
                                              + startCode + fixture.pps + startCode + otherPPS + startCode + idrSlice,
                                          framing: .annexB, configuration: config)
        #expect(keyframe.isIntraRandomAccessPoint)
        #expect(keyframe.bytes == [0, 0, 0, 4] + otherPPS + [0, 0, 0, 4] + idrSlice)

        let twoByteLengths: [UInt8] = [0, 3] + craSlice
        let cra = try HEVCAccessUnit(twoByteLengths, framing: .lengthPrefixed(lengthSize: 2), configuration: config)
        #expect(cra.isIntraRandomAccessPoint)
        #expect(cra.bytes == [0, 0, 0, 3] + craSlice)

        let passedThrough: [UInt8] = [0, 0, 0, 3] + trailingSlice
        let trailing = try HEVCAccessUnit(passedThrough, framing: .lengthPrefixed(lengthSize: 4), configuration: config)
        #expect(!trailing.isIntraRandomAccessPoint)
        #expect(trailing.bytes == passedThrough)
    }

    /// bit_depth_luma_minus8 is 0 to 8; a configuration built from an SPS with 14 wrote it in
    /// hvcC's three bits, and the record read back as another bit depth (found by fuzz-hvcc).
    @Test func rejectsABitDepthOutOfRange() {
        let annexB = [UInt8](hex: "000001400000014201011006000000000000000741727220fffe595200000144")
        #expect(throws: BitstreamError.invalidField(structure: "HEVC SPS", field: "bit_depth_luma_minus8", value: 14)) {
            try HEVCDecoderConfiguration(annexB: annexB)
        }
    }

    /// An SPS may declare 16-bit video, which hvcC's bit depth fields cannot carry (the record would read
    /// back as 8-bit) and FFmpeg does not decode: the SPS is refused, so no record is made. The 320x240
    /// fixture's SPS with both bit depths rewritten to 16.
    @Test func recordRefusesABitDepthItCannotCarry() throws {
        let vps = [UInt8](hex: "40010c01ffff01600000030090000003000003003c959809")
        let sps = [UInt8](hex: "42010101600000030090000003000003003ca00a080f109125959a4932bc05a0200000030020000003032100")
        let pps = [UInt8](hex: "4401c172b46240")
        let refused = BitstreamError.invalidField(structure: "HEVC SPS", field: "bit_depth_luma_minus8", value: 8)
        #expect(throws: refused) { try HEVCSequenceParameterSet(parsing: sps) }
        #expect(throws: refused) {
            try HEVCDecoderConfiguration(videoParameterSets: [vps], sequenceParameterSets: [sps], pictureParameterSets: [pps])
        }
    }

    /// A parameter set longer than the record's 16-bit length trapped when the record was written.
    @Test func recordRefusesAParameterSetLongerThanItsLengthField() throws {
        let fixture = try #require(HEVCFixture.all.first)
        let long = fixture.pps + [UInt8](repeating: 0x80, count: 70_000)
        #expect(throws: BitstreamError.invalidField(structure: "hvcC", field: "nalUnitLength", value: long.count)) {
            try HEVCDecoderConfiguration(videoParameterSets: [fixture.vps], sequenceParameterSets: [fixture.sps],
                                         pictureParameterSets: [long])
        }
    }

    /// num_negative_pics and num_positive_pics near UInt32.max overflowed their sum (found by fuzz-hevc-sps,
    /// in an SPS that is now refused earlier for its coding tree blocks; written again with valid ones).
    @Test func rejectsReferencePictureCountsWhoseSumOverflows() {
        #expect(throws: BitstreamError.invalidField(structure: "HEVC SPS", field: "log2_diff_max_min_luma_coding_block_size",
                                                    value: 0)) {
            try HEVCSequenceParameterSet(parsing: [UInt8](hex: "4200000005000000000000006c6500fffffa0300000000ffffffff69"))
        }
        #expect(throws: BitstreamError.invalidField(structure: "HEVC SPS", field: "num_negative_pics",
                                                    value: 4_294_967_294)) {
            try HEVCSequenceParameterSet(parsing: WrittenHEVCSPS { $0.shortTermSet = (4_294_967_294, 3) }.nalUnit)
        }
    }

    @Test func rejectsOtherNALUnitTypesAndTruncation() {
        #expect(throws: BitstreamError.invalidField(structure: "HEVC SPS", field: "nal_unit_type", value: 34)) {
            try HEVCSequenceParameterSet(parsing: HEVCFixture.all[0].pps)
        }
        #expect(throws: BitstreamError.truncated(structure: "HEVC SPS")) {
            try HEVCSequenceParameterSet(parsing: Array(HEVCFixture.all[0].sps.prefix(20)))
        }
    }
}

/// An HEVC SPS written field by field (7.3.2.2.1): Main, 4:2:0, 320x240, 16x16 coding tree blocks,
/// no VUI; for values no encoder writes.
struct WrittenHEVCSPS: Sendable {
    var sequenceParameterSetID: UInt32 = 0
    var width: UInt32 = 320
    var bitDepthLumaMinus8: UInt32 = 0
    var bitDepthChromaMinus8: UInt32 = 0
    var pictureOrderCountBitsMinus4: UInt32 = 4
    var decodedPictureBufferMinus1: UInt32 = 4
    var codingTreeBlockDifference: UInt32 = 1
    /// One short-term reference picture set of these counts, its pictures left out; none when nil.
    var shortTermSet: (negative: UInt32, positive: UInt32)?

    init(_ edit: (inout WrittenHEVCSPS) -> Void = { _ in }) {
        edit(&self)
    }

    var nalUnit: [UInt8] {
        var bits = BitWriter()
        bits.write(0b0000_000_1, 8)  // sps_video_parameter_set_id, sps_max_sub_layers_minus1, temporal_id_nesting
        bits.write(0b00_0_00001, 8)  // general_profile_space, tier, profile_idc: Main
        bits.write(0x6000_0000, 32)  // general_profile_compatibility_flags
        bits.write(0b1001, 4)  // progressive, interlaced, non-packed, frame-only
        bits.write(0, 44)  // reserved, general_inbld_flag
        bits.write(60, 8)  // general_level_idc: 2
        bits.writeUE(sequenceParameterSetID)
        bits.writeUE(1)  // chroma_format_idc
        bits.writeUE(width)
        bits.writeUE(240)
        bits.write(0, 1)  // conformance_window_flag
        bits.writeUE(bitDepthLumaMinus8)
        bits.writeUE(bitDepthChromaMinus8)
        bits.writeUE(pictureOrderCountBitsMinus4)
        bits.write(1, 1)  // sps_sub_layer_ordering_info_present_flag
        bits.writeUE(decodedPictureBufferMinus1)
        bits.writeUE(2)  // sps_max_num_reorder_pics
        bits.writeUE(0)  // sps_max_latency_increase_plus1
        bits.writeUE(0)  // log2_min_luma_coding_block_size_minus3
        bits.writeUE(codingTreeBlockDifference)
        for value: UInt32 in [0, 2, 0, 0] { bits.writeUE(value) }  // transform block sizes and depths
        bits.write(0, 4)  // scaling lists, AMP, SAO, PCM
        bits.writeUE(shortTermSet == nil ? 0 : 1)  // num_short_term_ref_pic_sets
        if let shortTermSet {
            bits.writeUE(shortTermSet.negative)
            bits.writeUE(shortTermSet.positive)
        }
        bits.write(0, 4)  // long-term pictures, temporal MVP, strong intra smoothing, VUI
        bits.write(0, 1)  // sps_extension_present_flag
        return [0x42, 0x01] + bits.escapedRBSP
    }
}

/// What FFmpeg 5.1's `ff_hevc_parse_sps` drops, the parser refuses, so copying and the validator agree
/// with the decoder.
@Suite struct BitstreamHEVCSPSDecoderRefusalTests {
    @Test func theWrittenSPSParses() throws {
        let sps = try HEVCSequenceParameterSet(parsing: WrittenHEVCSPS().nalUnit)
        #expect(sps.width == 320 && sps.height == 240 && sps.bitDepthLuma == 8)
        #expect(try HEVCSequenceParameterSet(parsing: WrittenHEVCSPS { $0.bitDepthLumaMinus8 = 4; $0.bitDepthChromaMinus8 = 4 }.nalUnit)
            .bitDepthLuma == 12)
    }

    @Test(arguments: [
        ("id 16", WrittenHEVCSPS { $0.sequenceParameterSetID = 16 }, "sps_seq_parameter_set_id", 16),
        ("11-bit luma", WrittenHEVCSPS { $0.bitDepthLumaMinus8 = 3; $0.bitDepthChromaMinus8 = 3 }, "bit_depth_luma_minus8", 3),
        ("10-bit luma, 8-bit chroma", WrittenHEVCSPS { $0.bitDepthLumaMinus8 = 2 }, "bit_depth_chroma_minus8", 0),
        ("a 2^17 picture order count", WrittenHEVCSPS { $0.pictureOrderCountBitsMinus4 = 13 },
         "log2_max_pic_order_cnt_lsb_minus4", 13),
        ("17 pictures buffered", WrittenHEVCSPS { $0.decodedPictureBufferMinus1 = 16 }, "sps_max_dec_pic_buffering_minus1", 16),
        ("128x128 coding tree blocks", WrittenHEVCSPS { $0.codingTreeBlockDifference = 4 },
         "log2_diff_max_min_luma_coding_block_size", 4),
        ("a width of no whole coding blocks", WrittenHEVCSPS { $0.width = 322 }, "pic_width_in_luma_samples", 322),
    ])
    func refusesWhatFFmpegDrops(name: String, sps: WrittenHEVCSPS, field: String, value: Int) {
        #expect(throws: BitstreamError.invalidField(structure: "HEVC SPS", field: field, value: value), "\(name)") {
            try HEVCSequenceParameterSet(parsing: sps.nalUnit)
        }
    }
}
