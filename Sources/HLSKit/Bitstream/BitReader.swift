/// Reads a byte array MSB-first, bit by bit, including the Exp-Golomb codes of H.264 headers.
public struct BitReader: Sendable {
    private let bytes: [UInt8]
    private var bitOffset = 0
    /// Names the structure being read in truncation errors.
    private let structure: String

    public init(_ bytes: [UInt8], structure: String) {
        self.bytes = bytes
        self.structure = structure
    }

    public var bitsRemaining: Int { bytes.count * 8 - bitOffset }

    public mutating func readBit() throws -> UInt32 {
        guard bitOffset < bytes.count * 8 else { throw BitstreamError.truncated(structure: structure) }
        let byte = bytes[bitOffset >> 3]
        let bit = (byte >> (7 - UInt8(bitOffset & 7))) & 1
        bitOffset += 1
        return UInt32(bit)
    }

    public mutating func readFlag() throws -> Bool {
        try readBit() == 1
    }

    /// Reads `count` bits (at most 32) as an unsigned number.
    public mutating func readBits(_ count: Int) throws -> UInt32 {
        precondition((0...32).contains(count), "readBits reads at most 32 bits, asked for \(count)")
        guard count <= bitsRemaining else { throw BitstreamError.truncated(structure: structure) }
        var value: UInt32 = 0
        for _ in 0..<count {
            value = (value << 1) | (try readBit())
        }
        return value
    }

    public mutating func skipBits(_ count: Int) throws {
        guard count <= bitsRemaining else { throw BitstreamError.truncated(structure: structure) }
        bitOffset += count
    }

    /// Unsigned Exp-Golomb code, ue(v) (H.264 9.1).
    public mutating func readUE() throws -> UInt32 {
        var leadingZeroBits = 0
        while try readBit() == 0 {
            leadingZeroBits += 1
            // 32 leading zeros would encode a value beyond UInt32; no H.264 header field needs it.
            guard leadingZeroBits < 32 else {
                throw BitstreamError.invalidField(structure: structure, field: "Exp-Golomb code",
                                                  value: leadingZeroBits)
            }
        }
        let suffix = try readBits(leadingZeroBits)
        return UInt32((UInt64(1) << leadingZeroBits) - 1 + UInt64(suffix))
    }

    /// Signed Exp-Golomb code, se(v) (H.264 9.1.1): 1, −1, 2, −2, … for codes 1, 2, 3, 4, …
    public mutating func readSE() throws -> Int32 {
        let code = Int64(try readUE())
        let magnitude = (code + 1) / 2
        return Int32(code % 2 == 1 ? magnitude : -magnitude)
    }
}
