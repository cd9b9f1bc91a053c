import HLSTestSupport
import Testing
@testable import HLSKit

/// The box reader on hand-made bytes: sizes, nesting, full-box fields and damaged input.
@Suite struct MP4BoxReaderTests {
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + payload.count)
        return [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
            + Array(type.utf8) + payload
    }

    static func uint32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    @Test func containersNestAndOffsetsCountFromTheBuffer() throws {
        let tfdt = Self.box("tfdt", [1, 0, 0, 0] + [0, 0, 0, 0, 0, 0, 0x03, 0xE8])
        let bytes = Self.box("styp", Array("msdh".utf8)) + Self.box("moof", Self.box("traf", tfdt))
        let boxes = try MP4Box.parse(bytes)
        #expect(boxes.map(\.type) == ["styp", "moof"])
        let found = try #require(boxes.first("moof/traf/tfdt"))
        #expect(found.offset == 12 + 8 + 8)
        #expect(found.version == 1)
        #expect(try found.baseDecodeTime() == 1000)
    }

    @Test func largeSizeAndSizeZeroAreRead() throws {
        let large: [UInt8] = Self.uint32(1) + Array("free".utf8) + [0, 0, 0, 0, 0, 0, 0, 20] + [1, 2, 3, 4]
        let toEnd: [UInt8] = Self.uint32(0) + Array("mdat".utf8) + [9, 9, 9]
        let boxes = try MP4Box.parse(large + toEnd)
        #expect(boxes.map(\.size) == [20, 11])
        #expect(Array(boxes[0].payload) == [1, 2, 3, 4])
        #expect(Array(boxes[1].payload) == [9, 9, 9])
    }

    @Test func aBoxLargerThanItsParentIsRefusedWithItsOffset() {
        let bytes = Self.box("moof", Self.uint32(100) + Array("traf".utf8))
        #expect(throws: MP4ReadError.badBoxSize(type: "traf", offset: 8, size: 100)) { try MP4Box.parse(bytes) }
        #expect(throws: MP4ReadError.self) { try MP4Box.parse([0, 0, 0, 4, 0x66]) }
    }

    @Test func nestingDeeperThanAnyRealFileIsRefused() {
        var bytes: [UInt8] = []
        for _ in 0..<40 { bytes = Self.box("moov", bytes) }
        #expect(throws: MP4ReadError.self) { try MP4Box.parse(bytes) }
    }

    @Test func trackFragmentHeaderReadsTheOptionalFields() throws {
        // flags: base-data-offset, default duration, default flags, default-base-is-moof.
        let flags: UInt32 = 0x02_0000 | 0x01 | 0x08 | 0x20
        let payload = Self.uint32(flags) + Self.uint32(7) + [0, 0, 0, 0, 0, 0, 0, 64] + Self.uint32(3000)
            + Self.uint32(0x0101_0000)
        let header = try #require(try MP4Box.parse(Self.box("tfhd", payload)).first).trackFragmentHeader()
        #expect(header.trackID == 7)
        #expect(header.baseDataOffset == 64)
        #expect(header.defaultSampleDuration == 3000)
        #expect(header.defaultSampleSize == nil)
        #expect(header.defaultSampleFlags == 0x0101_0000)
    }

    @Test func aTrackRunCountThePayloadCannotHoldIsRefusedAtOnce() throws {
        // Four billion samples with a duration each, in a 16-byte payload: refused, not looped over.
        let trun = Self.box("trun", Self.uint32(0x100) + Self.uint32(0xFFFF_FFFF) + Self.uint32(1))
        #expect(throws: MP4ReadError.self) { try MP4Box.parse(trun)[0].trackRun() }
        let empty = Self.box("trun", Self.uint32(0) + Self.uint32(0xFFFF_FFFF))
        #expect(throws: MP4ReadError.self) { try MP4Box.parse(empty)[0].trackRun() }
    }

    /// fuzz-mp4-box's timeout: a `trun` with no per-sample fields counting 458,800 samples, with
    /// bytes left over, built every entry before it was refused (over 10 s under AddressSanitizer).
    /// The leftover bytes now refuse it first; the error is the same as before, only sooner.
    @Test func aTrackRunWithBytesLeftOverIsRefusedBeforeItsEntriesAreBuilt() throws {
        let trun = Self.box("trun", Self.uint32(0) + Self.uint32(458_800) + Self.uint32(0))
        #expect(throws: MP4ReadError.unexpected(box: "trun", detail: "4 bytes after the entries")) {
            try MP4Box.parse(trun)[0].trackRun()
        }
    }

    @Test func esdsWithOptionalFieldsGivesTheObjectTypeAndAudioSpecificConfig() throws {
        // ES_Descriptor with streamDependenceFlag and OCRstreamFlag set (2 bytes each after the flags).
        let specific: [UInt8] = [0x05, 0x02, 0x12, 0x10]
        let decoderConfig: [UInt8] = [0x04, UInt8(13 + specific.count), 0x40, 0x15] + [0, 0, 0] + [0, 0, 0, 0]
            + [0, 0, 0, 0] + specific
        let descriptor: [UInt8] = [0x03, UInt8(3 + 4 + decoderConfig.count), 0, 1, 0xA0, 0, 2, 0, 3] + decoderConfig
        let esds = Self.box("esds", [0, 0, 0, 0] + descriptor)
        let configuration = try MP4Box.parse(esds)[0].decoderConfiguration()
        #expect(configuration.objectType == 0x40)
        #expect(configuration.specificInfo == [0x12, 0x10])
    }

    @Test func codecStringsComeFromTheConfigurationRecords() throws {
        let avcC = Self.box("avcC", [1, 0x64, 0x00, 0x1F, 0xFF])
        let avc1 = Self.box("avc1", [UInt8](repeating: 0, count: 78) + avcC)
        #expect(try InitSectionInfo.codecString(try MP4Box.parse(avc1)[0]) == "avc1.64001f")
        // HEVC Main, level 3.1, general compatibility flag 1 set (bit-reversed: 6), constraints 0xB0.
        let hvcC = Self.box("hvcC", [1, 0x01, 0x60, 0, 0, 0, 0xB0, 0, 0, 0, 0, 0, 93] + [UInt8](repeating: 0, count: 10))
        let hvc1 = Self.box("hvc1", [UInt8](repeating: 0, count: 78) + hvcC)
        #expect(try InitSectionInfo.codecString(try MP4Box.parse(hvc1)[0]) == "hvc1.1.6.L93.B0")
        #expect(CodecMatch.normalized("MP4A.40.02") == CodecMatch.normalized("mp4a.40.2"))
        #expect(CodecMatch.normalized("avc1.64001F") == "avc1.64001f")
    }
}
