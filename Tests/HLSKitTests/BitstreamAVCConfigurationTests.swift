import HLSTestSupport
import Testing
@testable import HLSKit

@Suite struct BitstreamAVCConfigurationTests {
    /// The avcC FFmpeg's mp4 muxer wrote for `ffmpeg -f lavfi -i testsrc2=size=720x576:rate=25 -t 2
    /// -c:v libx264 -profile:v high -vf setsar=16/15 out.mp4`, High profile trailer included.
    static let ffmpegHighRecord = [UInt8](hex: "0164001effe1001d6764001eacd940b4126ffc0040003c40000003004000000c83c58b"
                                          + "658001000668ebe3cb22c0fdf8f800")
    static let baselineSPS = [UInt8](hex: "6742c00dd90141fb011000000300100000030320f142a480")
    static let baselinePPS = [UInt8](hex: "68cb83cb20")

    @Test func parsesAndReserializesFFmpegRecord() throws {
        let config = try AVCDecoderConfiguration(parsing: Self.ffmpegHighRecord)
        #expect(config.profileIndication == 100)
        #expect(config.profileCompatibility == 0)
        #expect(config.levelIndication == 30)
        #expect(config.nalUnitLengthSize == 4)
        #expect(config.sequenceParameterSets == [Array(Self.ffmpegHighRecord[8..<37])])
        #expect(config.pictureParameterSets == [[UInt8](hex: "68ebe3cb22c0")])
        #expect(config.serialized == Self.ffmpegHighRecord)
    }

    @Test func baselineRecordHasNoTrailer() throws {
        let config = try AVCDecoderConfiguration(sequenceParameterSets: [Self.baselineSPS],
                                                 pictureParameterSets: [Self.baselinePPS])
        let expected: [UInt8] = [0x01, 0x42, 0xC0, 0x0D, 0xFF, 0xE1, 0x00, 0x18] + Self.baselineSPS
            + [0x01, 0x00, 0x05] + Self.baselinePPS
        #expect(config.serialized == expected)
        #expect(try AVCDecoderConfiguration(parsing: expected) == config)
    }

    @Test func high10RecordTrailerCarriesBitDepth() throws {
        let sps = SPSFixture.all.first { $0.name == "high10 352x288" }!.nalUnit
        let config = try AVCDecoderConfiguration(sequenceParameterSets: [sps], pictureParameterSets: [Self.baselinePPS])
        // chroma_format 1, bit_depth_luma_minus8 2, bit_depth_chroma_minus8 2, no SPS extensions
        #expect(config.serialized.suffix(4) == [0xFD, 0xFA, 0xFA, 0x00])
    }

    @Test(arguments: SPSFixture.all)
    func codecsStringIsProfileCompatibilityLevelInLowercaseHex(fixture: SPSFixture) throws {
        let config = try AVCDecoderConfiguration(sequenceParameterSets: [fixture.nalUnit],
                                                 pictureParameterSets: [Self.baselinePPS])
        let expected = "avc1." + [fixture.profile, fixture.constraints, fixture.level]
            .map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        #expect(config.codecsString == expected)
    }

    @Test(arguments: [
        ("baseline 320x240", "avc1.42c00d"), ("main 640x360", "avc1.4d401e"), ("high 1920x1080", "avc1.640028"),
    ])
    func knownCodecsStrings(name: String, codecs: String) throws {
        let sps = SPSFixture.all.first { $0.name == name }!.nalUnit
        let config = try AVCDecoderConfiguration(sequenceParameterSets: [sps], pictureParameterSets: [Self.baselinePPS])
        #expect(config.codecsString == codecs)
    }

    @Test func buildsFromAnnexBKeyframe() throws {
        let keyframe = [0, 0, 0, 1, 0x09, 0x10] + [0, 0, 0, 1] + Self.baselineSPS + [0, 0, 1] + Self.baselinePPS
            + [0, 0, 1, 0x65, 0x88, 0x84]
        let config = try AVCDecoderConfiguration(annexB: keyframe)
        #expect(config.sequenceParameterSets == [Self.baselineSPS])
        #expect(config.pictureParameterSets == [Self.baselinePPS])
        #expect(config.codecsString == "avc1.42c00d")
    }

    @Test func missingParameterSetsThrow() {
        #expect(throws: BitstreamError.missingParameterSets) {
            try AVCDecoderConfiguration(annexB: [0, 0, 1] + Self.baselineSPS)
        }
        #expect(throws: BitstreamError.missingParameterSets) {
            try AVCDecoderConfiguration(sequenceParameterSets: [], pictureParameterSets: [Self.baselinePPS])
        }
    }

    /// An SPS whose bit_depth_chroma_minus8 is beyond 0 to 6 trapped when the record's trailer was
    /// written (found by fuzz-avcc); the SPS is now rejected.
    @Test func rejectsAnSPSWithABitDepthOutOfRange() {
        #expect(throws: BitstreamError.invalidField(structure: "H.264 SPS", field: "bit_depth_chroma_minus8",
                                                    value: 1663)) {
            try AVCDecoderConfiguration(annexB: [UInt8](hex: "0000016764000174006801496800000168"))
        }
    }

    /// Parameter sets an Annex-B stream can carry but the record cannot count or measure: they
    /// trapped or wrote a record with another count. The first is what fuzz-avcc found: 32 SPS.
    @Test func rejectsParameterSetsTheRecordCannotHold() {
        let annexB = [UInt8](hex: "00000167ececececb9b9b900000168" + String(repeating: "00000167", count: 31))
        #expect(throws: BitstreamError.invalidField(structure: "avcC", field: "numOfSequenceParameterSets", value: 32)) {
            try AVCDecoderConfiguration(annexB: annexB)
        }
        #expect(throws: BitstreamError.invalidField(structure: "avcC", field: "numOfSequenceParameterSets", value: 32)) {
            try AVCDecoderConfiguration(sequenceParameterSets: Array(repeating: Self.baselineSPS, count: 32),
                                        pictureParameterSets: [Self.baselinePPS])
        }
        #expect(throws: BitstreamError.invalidField(structure: "avcC", field: "numOfPictureParameterSets", value: 256)) {
            try AVCDecoderConfiguration(sequenceParameterSets: [Self.baselineSPS],
                                        pictureParameterSets: Array(repeating: Self.baselinePPS, count: 256))
        }
        let long = Self.baselinePPS + [UInt8](repeating: 0x80, count: 70_000)
        #expect(throws: BitstreamError.invalidField(structure: "avcC", field: "parameter set length", value: long.count)) {
            try AVCDecoderConfiguration(sequenceParameterSets: [Self.baselineSPS], pictureParameterSets: [long])
        }
    }

    @Test func rejectsBadRecords() {
        #expect(throws: BitstreamError.invalidField(structure: "avcC", field: "configurationVersion", value: 0)) {
            try AVCDecoderConfiguration(parsing: [0x00] + Self.ffmpegHighRecord.dropFirst())
        }
        #expect(throws: BitstreamError.truncated(structure: "avcC")) {
            try AVCDecoderConfiguration(parsing: Array(Self.ffmpegHighRecord.prefix(20)))
        }
        #expect(throws: BitstreamError.invalidField(structure: "avcC", field: "lengthSizeMinusOne", value: 2)) {
            try AVCDecoderConfiguration(parsing: Array(Self.ffmpegHighRecord.prefix(4)) + [0xFE, 0xE0, 0x00])
        }
    }
}
