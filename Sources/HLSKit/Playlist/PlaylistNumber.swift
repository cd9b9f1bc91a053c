/// The number syntaxes of RFC 8216bis 4.2, which are stricter than Swift's numeric initializers
/// (those accept signs, exponents, "inf" and hexadecimal).
enum PlaylistNumber {
    private static let thousandthsPerUnit = 1_000
    private static let largestInThousandths = Double(Int.max / thousandthsPerUnit)

    /// `Character.isNumber` would also accept other scripts' digits, which HLS never allows.
    static func isDigit(_ character: Character) -> Bool {
        ("0"..."9").contains(character)
    }

    static func isDigits(_ text: Substring) -> Bool {
        !text.isEmpty && text.allSatisfy(isDigit)
    }

    /// decimal-integer: `[0-9]+`.
    static func decimalInteger(_ text: Substring) -> Int? {
        isDigits(text) ? Int(text) : nil
    }

    /// decimal-floating-point: digits with at most one '.', no sign or exponent; values too large
    /// to count in thousandths are rejected rather than trapping later.
    static func decimalFloatingPoint(_ text: Substring) -> Double? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard isDigits(parts[0]), parts.count == 1 || isDigits(parts[1]),
              let value = Double(text), value < largestInThousandths else { return nil }
        return value
    }

    /// `value` rounded to thousandths, as the text carries it.
    static func milliseconds(_ value: Double) -> Int {
        Int((value * Double(thousandthsPerUnit)).rounded())
    }

    /// Whole units, halves rounded up, as RFC 8216bis 4.4.3.1 rounds EXTINF durations.
    static func roundedToNearestSecond(_ milliseconds: Int) -> Int {
        (milliseconds + thousandthsPerUnit / 2) / thousandthsPerUnit
    }

    /// `value` rounded to thousandths, as a `Double` again.
    static func quantizedToMilliseconds(_ value: Double) -> Double {
        Double(milliseconds(value)) / Double(thousandthsPerUnit)
    }

    /// Three decimals, independent of the locale: `2.000`, `29.970`.
    static func threeDecimals(_ value: Double) -> String {
        let millis = milliseconds(value)
        let sign = millis < 0 ? "-" : ""
        let fraction = String(abs(millis) % thousandthsPerUnit)
        return "\(sign)\(abs(millis) / thousandthsPerUnit)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}
