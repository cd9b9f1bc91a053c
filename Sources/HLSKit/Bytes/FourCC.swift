/// A four-character code: a box type, brand or handler type.
public struct FourCC: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The four characters as one big-endian integer, as stored in a file.
    public let rawValue: UInt32

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// Box types and brands are spelled in source as literals, so a bad one is a programming error.
    public init(stringLiteral value: String) {
        let scalars = Array(value.unicodeScalars)
        precondition(scalars.count == 4 && scalars.allSatisfy(\.isASCII),
                     "a FourCC is four ASCII characters, got \"\(value)\"")
        rawValue = scalars.reduce(0) { ($0 << 8) | $1.value }
    }

    public var bytes: [UInt8] {
        [UInt8(truncatingIfNeeded: rawValue >> 24), UInt8(truncatingIfNeeded: rawValue >> 16),
         UInt8(truncatingIfNeeded: rawValue >> 8), UInt8(truncatingIfNeeded: rawValue)]
    }

    public var description: String {
        String(decoding: bytes, as: UTF8.self)
    }
}
