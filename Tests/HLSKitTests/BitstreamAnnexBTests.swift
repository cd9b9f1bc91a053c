import HLSTestSupport
import Testing
@testable import HLSKit

@Suite struct BitstreamAnnexBTests {
    // Access unit delimiter, SPS, PPS of a libx264 baseline stream written with
    // `ffmpeg -f lavfi -i testsrc2=size=320x240:rate=25 -frames:v 1 -c:v libx264 -profile:v baseline
    //  -x264-params aud=1 -f h264 -`, and a made-up IDR slice and filler.
    static let aud: [UInt8] = [0x09, 0x10]
    static let sps = [UInt8](hex: "6742c00dd90141fb011000000300100000030320f142a480")
    static let pps = [UInt8](hex: "68cb83cb20")
    static let idr: [UInt8] = [0x65, 0x88, 0x84, 0x00, 0x21]
    static let filler: [UInt8] = [0x0C, 0xFF, 0xFF, 0x80]

    @Test func splitsOnThreeAndFourByteStartCodes() {
        let stream = [0, 0, 0, 1] + Self.aud + [0, 0, 1] + Self.sps + [0, 0, 0, 1] + Self.pps
            + [0, 0, 1] + Self.idr
        let units = AnnexB.nalUnits(in: stream).map(Array.init)
        #expect(units == [Self.aud, Self.sps, Self.pps, Self.idr])
    }

    @Test func dropsLeadingGarbageAndTrailingZeros() {
        let stream: [UInt8] = [0xAB, 0, 0, 1] + Self.pps + [0, 0] + [0, 0, 0, 1] + Self.idr + [0, 0]
        #expect(AnnexB.nalUnits(in: stream).map(Array.init) == [Self.pps, Self.idr])
        #expect(AnnexB.nalUnits(in: [0, 0, 1]).isEmpty)
        #expect(AnnexB.nalUnits(in: Self.idr).isEmpty)
    }

    /// The skipping scan finds what a byte-by-byte one finds, on bytes made mostly of 0s and 1s so that
    /// start codes, near misses and runs of zeros of every length come up at every position.
    @Test func startCodesMatchAByteByByteScan() {
        var generator = SeededGenerator(state: 7)
        for _ in 0..<2_000 {
            let count = Int.random(in: 0...40, using: &generator)
            let bytes = (0..<count).map { _ in [0, 0, 0, 1, 1, 2, 0xFF].randomElement(using: &generator)! as UInt8 }
            var expected: [Int] = []
            var index = 0
            while index + 2 < bytes.count {
                if bytes[index] == 0 && bytes[index + 1] == 0 && bytes[index + 2] == 1 {
                    expected.append(index)
                    index += 3
                } else {
                    index += 1
                }
            }
            #expect(AnnexB.startCodes(in: bytes) == expected, "\(bytes)")
        }
    }

    @Test func lengthPrefixedDropsDelimitersAndFiller() {
        let accessUnit = [0, 0, 0, 1] + Self.aud + [0, 0, 1] + Self.sps + [0, 0, 1] + Self.pps
            + [0, 0, 0, 1] + Self.idr + [0, 0, 1] + Self.filler
        let expected: [UInt8] = [0, 0, 0, UInt8(Self.sps.count)] + Self.sps + [0, 0, 0, 5] + Self.pps
            + [0, 0, 0, 5] + Self.idr
        #expect(AnnexB.lengthPrefixed(accessUnit) == expected)
    }

    @Test(arguments: [
        ([0, 0, 1, 0x65] as [UInt8], true),
        ([0, 0, 0, 1, 0x65], true),
        ([0, 0, 0, 5, 0x65], false),
        ([0, 0, 2, 0x65], false),
        ([0, 0], false),
    ])
    func detectsAnnexB(bytes: [UInt8], isAnnexB: Bool) {
        #expect(AnnexB.isAnnexB(bytes) == isAnnexB)
    }

    @Test(arguments: [1, 2, 4])
    func convertsLengthSizesToFourBytes(lengthSize: Int) throws {
        func prefix(_ unit: [UInt8]) -> [UInt8] {
            (0..<lengthSize).reversed().map { UInt8(truncatingIfNeeded: unit.count >> (8 * $0)) } + unit
        }
        let sample = prefix(Self.pps) + prefix(Self.idr)
        let converted = try LengthPrefixed.withFourByteLengths(sample, lengthSize: lengthSize)
        #expect(converted == [0, 0, 0, 5] + Self.pps + [0, 0, 0, 5] + Self.idr)
        #expect(try LengthPrefixed.nalUnits(in: sample, lengthSize: lengthSize).map(Array.init) == [Self.pps, Self.idr])
    }

    @Test func rejectsOverrunningLengthAndBadLengthSize() {
        #expect(throws: BitstreamError.truncated(structure: "length-prefixed NAL unit")) {
            try LengthPrefixed.nalUnits(in: [0, 0, 0, 9, 0x65, 0x88], lengthSize: 4)
        }
        #expect(throws: BitstreamError.truncated(structure: "NAL unit length")) {
            try LengthPrefixed.nalUnits(in: [0, 0, 0, 1, 0x65, 0, 0], lengthSize: 4)
        }
        #expect(throws: BitstreamError.invalidField(structure: "length-prefixed NAL units",
                                                    field: "length size", value: 3)) {
            try LengthPrefixed.withFourByteLengths([0, 0, 1, 0x65], lengthSize: 3)
        }
    }

    @Test(arguments: [
        ([0x00, 0x00, 0x03, 0x01] as [UInt8], [0x00, 0x00, 0x01] as [UInt8]),
        ([0x00, 0x00, 0x03, 0x00, 0x00, 0x03], [0x00, 0x00, 0x00, 0x00]),
        ([0x00, 0x03, 0x00, 0x00, 0x03, 0x03], [0x00, 0x03, 0x00, 0x00, 0x03]),
        ([0x11, 0x00, 0x00, 0x03], [0x11, 0x00, 0x00]),
    ])
    func removesEmulationPrevention(escaped: [UInt8], rbsp: [UInt8]) {
        #expect(H264NALUnit.removingEmulationPrevention(escaped) == rbsp)
    }

    @Test func bitReaderReadsExpGolomb() throws {
        // ue: 1 → 0, 010 → 1, 011 → 2, 00100 → 3; se: 010 → +1, 011 → −1, 00100 → +2, 00101 → −2
        var reader = BitReader([0b1010_0110, 0b0100_0100, 0b1100_1000, 0b0101_0000], structure: "test")
        #expect(try reader.readUE() == 0)
        #expect(try reader.readUE() == 1)
        #expect(try reader.readUE() == 2)
        #expect(try reader.readUE() == 3)
        #expect(try reader.readSE() == 1)
        #expect(try reader.readSE() == -1)
        #expect(try reader.readSE() == 2)
        #expect(try reader.readSE() == -2)
        #expect(reader.bitsRemaining == 4)
        #expect(throws: BitstreamError.truncated(structure: "test")) { try reader.readBits(5) }
    }
}
