import Testing
@testable import HLSServer

/// The buffer a TLS connection sends from: bytes appended and read in keep their order across growth,
/// a read keeps only what it wrote, sent bytes move the start, and a reset frees a buffer that grew
/// too large.
@Suite struct OutputBufferTests {
    private func contents(_ buffer: OutputBuffer) -> [UInt8] { Array(buffer.unsent) }

    @Test func bytesKeepTheirOrderAcrossGrowthAndAReadKeepsOnlyWhatItWrote() {
        let buffer = OutputBuffer()
        #expect(buffer.isDrained && buffer.unsent.isEmpty)
        buffer.append(Array("head\r\n".utf8))
        let body = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        // A read lent 64 KB that writes 40,000 bytes: the rest of the room is not kept.
        let answer = buffer.append(reading: 64 * 1024) { free in
            body.withUnsafeBytes { free.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(40_000))) }
            return (40_000, "read")
        }
        #expect(answer == "read")
        #expect(buffer.count == 6 + 40_000)
        // A second read past the capacity grows the buffer, keeping what is there.
        buffer.append(reading: 80_000) { free in
            body.withUnsafeBytes { free.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[40_000...].prefix(60_000))) }
            return (60_000, ())
        }
        #expect(contents(buffer) == Array("head\r\n".utf8) + body)
        // A read that fails writes nothing.
        buffer.append(reading: 1024) { _ in (-1, ()) }
        #expect(buffer.count == 6 + body.count)
    }

    @Test func sentBytesMoveTheStartAndAResetEmptiesOrFrees() {
        let buffer = OutputBuffer()
        buffer.append(Array(0..<200))
        buffer.consume(150)
        #expect(!buffer.isDrained)
        #expect(contents(buffer) == Array(150..<200))
        buffer.consume(50)
        #expect(buffer.isDrained)
        buffer.reset(keepingCapacityUpTo: 1024)
        #expect(buffer.count == 0 && buffer.start == 0)
        buffer.append(Array(repeating: 1, count: 5000))
        buffer.consume(5000)
        // Over the capacity kept: freed, and the next bytes make a new buffer.
        buffer.reset(keepingCapacityUpTo: 1024)
        buffer.append([9, 8, 7])
        #expect(contents(buffer) == [9, 8, 7])
    }
}
