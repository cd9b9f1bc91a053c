extension Array where Element == UInt8 {
    /// Bytes from a string of hex digit pairs, for fixtures pasted from tools.
    public init(hex: String) {
        let digits = Array(hex.utf8)
        precondition(digits.count % 2 == 0, "hex fixture has an odd number of digits")
        self = stride(from: 0, to: digits.count, by: 2).map { index in
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else {
                preconditionFailure("hex fixture has a non-hex digit near offset \(index)")
            }
            return byte
        }
    }
}
