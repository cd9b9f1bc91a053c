import Foundation

/// EXT-X-PROGRAM-DATE-TIME values: ISO 8601 / RFC 3339 date-times, kept to millisecond precision.
///
/// Written by hand rather than with a date formatter so that rendering is the same on every
/// platform and a parsed value renders back to the same text.
public enum ProgramDateTime {
    private static let millisecondsPerSecond: Int64 = 1_000
    private static let millisecondsPerDay: Int64 = 86_400_000
    private static let secondsPerMinute: Int64 = 60
    private static let secondsPerHour: Int64 = 3_600

    /// Times are written to the millisecond (rounded), so a moment read back from one may fall up to
    /// half of this before or after the moment it was written from.
    public static let precisionSeconds = 0.001

    /// `2026-11-29T15:06:01.902Z`: always UTC, always three fractional digits.
    public static func format(_ date: Date) -> String {
        let totalMilliseconds = Int64((date.timeIntervalSince1970 * Double(millisecondsPerSecond)).rounded())
        let days = floorDivide(totalMilliseconds, millisecondsPerDay)
        let millisecondOfDay = totalMilliseconds - days * millisecondsPerDay
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        let secondOfDay = millisecondOfDay / millisecondsPerSecond
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))"
            + "T\(padded(secondOfDay / secondsPerHour, 2)):\(padded(secondOfDay % secondsPerHour / secondsPerMinute, 2))"
            + ":\(padded(secondOfDay % secondsPerMinute, 2)).\(padded(millisecondOfDay % millisecondsPerSecond, 3))Z"
    }

    /// Accepts `YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm|±hhmm|±hh)`; fractions are rounded to milliseconds.
    public static func parse(_ text: Substring) -> Date? {
        var reader = FieldReader(text)
        guard let year = reader.digits(count: 4), reader.skip("-"),
              let month = reader.digits(count: 2), reader.skip("-"),
              let day = reader.digits(count: 2), reader.skip("T"),
              let hour = reader.digits(count: 2), reader.skip(":"),
              let minute = reader.digits(count: 2), reader.skip(":"),
              let second = reader.digits(count: 2)
        else { return nil }
        var fractionMilliseconds: Int64 = 0
        if reader.skip(".") {
            guard let fraction = reader.fraction() else { return nil }
            fractionMilliseconds = Int64((fraction * Double(millisecondsPerSecond)).rounded())
        }
        guard let offsetSeconds = reader.timeZoneOffsetSeconds(), reader.isAtEnd else { return nil }
        // A leap second (ss = 60) is allowed by RFC 3339 and lands on the next minute's first second.
        guard (1...12).contains(month), hour < 24, minute < 60, second <= 60 else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        guard civilDate(daysSinceEpoch: days) == (year, month, day) else { return nil }
        let secondOfDay = hour * secondsPerHour + minute * secondsPerMinute + second
        let totalMilliseconds = days * millisecondsPerDay
            + (secondOfDay - offsetSeconds) * millisecondsPerSecond + fractionMilliseconds
        return Date(timeIntervalSince1970: Double(totalMilliseconds) / Double(millisecondsPerSecond))
    }

    private static func padded(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    private static func floorDivide(_ dividend: Int64, _ divisor: Int64) -> Int64 {
        let quotient = dividend / divisor
        return dividend % divisor < 0 ? quotient - 1 : quotient
    }

    // Proleptic Gregorian calendar conversions in 400-year eras, counting years from March so that
    // the leap day is the last day of the year (H. Hinnant, "chrono-compatible date algorithms").
    private static let daysPerEra: Int64 = 146_097
    private static let daysFromEraStartToEpoch: Int64 = 719_468

    private static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let marchYear = month <= 2 ? year - 1 : year
        let era = floorDivide(marchYear, 400)
        let yearOfEra = marchYear - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * daysPerEra + dayOfEra - daysFromEraStartToEpoch
    }

    private static func civilDate(daysSinceEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + daysFromEraStartToEpoch
        let era = floorDivide(shifted, daysPerEra)
        let dayOfEra = shifted - era * daysPerEra
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let marchMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * marchMonth + 2) / 5 + 1
        let month = marchMonth < 10 ? marchMonth + 3 : marchMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private struct FieldReader {
        private var rest: Substring

        init(_ text: Substring) { rest = text }

        var isAtEnd: Bool { rest.isEmpty }

        mutating func skip(_ character: Character) -> Bool {
            guard rest.first == character else { return false }
            rest = rest.dropFirst()
            return true
        }

        mutating func digits(count: Int) -> Int64? {
            let field = rest.prefix(count)
            guard field.count == count, PlaylistNumber.isDigits(field) else { return nil }
            rest = rest.dropFirst(count)
            return Int64(field)
        }

        mutating func fraction() -> Double? {
            let field = rest.prefix(while: PlaylistNumber.isDigit)
            guard !field.isEmpty else { return nil }
            rest = rest.dropFirst(field.count)
            return Double("0." + field)
        }

        mutating func timeZoneOffsetSeconds() -> Int64? {
            if skip("Z") { return 0 }
            let sign: Int64
            if skip("+") { sign = 1 } else if skip("-") { sign = -1 } else { return nil }
            guard let hours = digits(count: 2) else { return nil }
            let minutes = skip(":") || !rest.isEmpty ? digits(count: 2) : 0
            guard let minutes, hours < 24, minutes < 60 else { return nil }
            return sign * (hours * secondsPerHour + minutes * secondsPerMinute)
        }
    }
}
