import HLSTestSupport
import Testing
@testable import HLSKit

/// In-band parameter sets judged against the sample entry: what a decoder refuses, or a picture the
/// init section does not describe, is named; repeats and new ids are fine.
@Suite struct BitstreamInBandParameterSetsTests {
    /// The h264-aac fixture's SPS (320x240 Constrained Baseline, id 0) and PPS.
    static let sps = [UInt8](hex: "6742c00dda0507ec0440000003004000000c83c50aa800")
    static let pps = [UInt8](hex: "68ce3c80")

    func entry() throws -> InBandParameterSets {
        let configuration = try AVCDecoderConfiguration(annexB: [0, 0, 0, 1] + Self.sps + [0, 0, 0, 1] + Self.pps)
        return InBandParameterSets(configuration)
    }

    func units(_ hexes: String...) -> [ArraySlice<UInt8>] {
        hexes.map { [UInt8](hex: $0)[...] }
    }

    @Test func repeatsAndSlicesPass() throws {
        var sets = try entry()
        #expect(sets.check([Self.sps[...], Self.pps[...], [0x65, 0x88, 0x84][...]]) == nil)
    }

    @Test(arguments: [
        ("6742c00d05368141fb011000000300100000030320f142aa", "seq_parameter_set_id"),
        ("6742c00dda0507ed9040000003004000000c83c50aa8", "aspect_ratio_idc"),
    ])
    func anSPSADecoderRefusesIsNamed(nalUnit: String, field: String) throws {
        var sets = try entry()
        let found = sets.check(units(nalUnit))
        let problem = try #require(found)
        #expect(problem.hasPrefix("an H.264 sequence parameter set in the samples cannot be read"), "\(problem)")
        #expect(problem.contains(field), "\(problem)")
    }

    /// The sample entry's own SPS, dropped by a decoder, leaves nothing to decode: it is named, and
    /// the samples are judged against what the decoder has, which is no SPS 0.
    @Test func anSPSADecoderRefusesInTheSampleEntryIsNamed() throws {
        let reserved = [UInt8](hex: "6742c00dda0507ed9040000003004000000c83c50aa8")
        let configuration = try AVCDecoderConfiguration(sequenceParameterSets: [Self.sps, reserved],
                                                        pictureParameterSets: [Self.pps])
        let sets = InBandParameterSets(configuration)
        let problem = try #require(sets.sampleEntryProblem)
        #expect(problem.hasPrefix("an H.264 sequence parameter set in the sample entry (avcC) cannot be read"), "\(problem)")
        #expect(problem.contains("aspect_ratio_idc"), "\(problem)")
        #expect(try entry().sampleEntryProblem == nil)
    }

    /// The same id for a 640x480 picture: the sample entry says 320x240.
    @Test func aChangedPictureIsAContradiction() throws {
        var sets = try entry()
        let found = sets.check(units("6742c00dda0280f6c044000003000400000300c83c50aa80"))
        let problem = try #require(found)
        #expect(problem.contains("changes in the samples from 320x240"), "\(problem)")
    }

    @Test func aPPSNamingAnSPSNobodySentIsNamed() throws {
        var sets = try entry()
        // pic_parameter_set_id 0, seq_parameter_set_id 7.
        let found = sets.check(units("688882"))
        let problem = try #require(found)
        #expect(problem.contains("refers to sequence parameter set 7"), "\(problem)")
    }
}
