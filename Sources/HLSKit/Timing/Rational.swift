/// A fraction such as a time base (1/90000) or a frame rate (30000/1001).
public struct Rational: Sendable, Hashable, CustomStringConvertible {
    public var numerator: Int32
    public var denominator: Int32

    public init(_ numerator: Int32, _ denominator: Int32) {
        self.numerator = numerator
        self.denominator = denominator
    }

    public var description: String { "\(numerator)/\(denominator)" }

    /// A frame rate to the nearest whole frame a second, from 1 to 240 (30000/1001 is 30); nil for a rate that
    /// is not one (a zero or negative part).
    public var wholeFramesPerSecond: Int? {
        guard numerator > 0, denominator > 0 else { return nil }
        return min(240, max(1, Int((Double(numerator) / Double(denominator)).rounded())))
    }
}
