import Testing
@testable import HLSKit

@Suite struct BytesTests {
    @Test func writesIntegersBigEndian() {
        var writer = ByteWriter()
        writer.write(UInt8(0x01))
        writer.write(UInt16(0x0203))
        writer.write(UInt32(0x0405_0607))
        writer.write(UInt64(0x0809_0A0B_0C0D_0E0F))
        writer.write(Int32(-2))
        writer.write(Int16(-1))
        writer.write(uint24: 0x10_1112)
        #expect(writer.bytes == [
            0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F,
            0xFF, 0xFF, 0xFF, 0xFE, 0xFF, 0xFF, 0x10, 0x11, 0x12,
        ])
    }

    @Test func fourCCFromLiteral() {
        let type: FourCC = "url "
        #expect(type.rawValue == 0x7572_6C20)
        #expect(type.bytes == [0x75, 0x72, 0x6C, 0x20])
        #expect(type.description == "url ")
    }

    @Test func boxPatchesSizeAndReturnsStart() {
        var writer = ByteWriter()
        writer.write(bytes: [0xAA, 0xBB])
        let start = writer.box("free") { $0.write(bytes: [1, 2, 3]) }
        #expect(start == 2)
        #expect(writer.bytes == [0xAA, 0xBB, 0, 0, 0, 11, 0x66, 0x72, 0x65, 0x65, 1, 2, 3])
    }

    @Test func nestedFullBoxesCarryVersionFlagsAndSizes() {
        var writer = ByteWriter()
        writer.box("moof") { moof in
            moof.fullBox("tfhd", version: 1, flags: 0x02_0001) { $0.write(UInt32(7)) }
        }
        #expect(writer.bytes == [
            0, 0, 0, 24, 0x6D, 0x6F, 0x6F, 0x66,
            0, 0, 0, 16, 0x74, 0x66, 0x68, 0x64, 1, 0x02, 0x00, 0x01, 0, 0, 0, 7,
        ])
    }

    @Test func setPatchesInPlaceWithoutMovingTheEnd() {
        var writer = ByteWriter()
        writer.write(UInt32(0))
        writer.write(UInt8(9))
        writer.set(Int32(-3), at: 0)
        #expect(writer.bytes == [0xFF, 0xFF, 0xFF, 0xFD, 9])
        writer.set(UInt32(0x0102_0304), at: 1)
        #expect(writer.bytes == [0xFF, 0x01, 0x02, 0x03, 0x04])
    }
}
