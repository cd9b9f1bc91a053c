/// Header fields read and written as bytes, for what runs on every request (an answer's head in
/// `HTTP1Session` and `HTTP2Session`, Accept-Encoding): names lower-cased and compared by bytes,
/// numbers written as digits, no string made per field. Every name this server sends is ASCII;
/// another goes through `lowercased()`.
enum HeaderBytes {
    /// Appends `name` in lower case (HTTP/2 sends no upper-case name, RFC 9113 8.2.1).
    static func appendLowercased(_ name: String, to bytes: inout [UInt8]) {
        let start = bytes.count
        bytes.append(contentsOf: name.utf8)
        let ascii = bytes.withUnsafeMutableBufferPointer { bytes in
            for index in start..<bytes.count {
                guard bytes[index] < 0x80 else { return false }
                bytes[index] = lowercased(bytes[index])
            }
            return true
        }
        guard !ascii else { return }
        bytes.removeSubrange(start...)
        bytes.append(contentsOf: name.lowercased().utf8)
    }

    /// Whether `name` in lower case is `lowercase`.
    static func name(_ name: String, is lowercase: String) -> Bool {
        var expected = lowercase.utf8.makeIterator()
        for byte in name.utf8 {
            guard byte < 0x80 else { return name.lowercased() == lowercase }
            // An ASCII byte lower-cases to one ASCII byte: a difference here stays one.
            guard lowercased(byte) == expected.next() else { return false }
        }
        return expected.next() == nil
    }

    /// Appends `value` in decimal digits, as `String(value)` writes it.
    static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        guard value >= 0 else { return bytes.append(contentsOf: String(value).utf8) }
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }

    /// An ASCII byte in lower case.
    static func lowercased(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
    }
}
