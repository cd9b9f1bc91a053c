/// A fraction such as a time base (1/90000) or a frame rate (30000/1001).
public struct Rational: Sendable, Hashable, CustomStringConvertible {
    public var numerator: Int32
    public var denominator: Int32

    public init(_ numerator: Int32, _ denominator: Int32) {
        self.numerator = numerator
        self.denominator = denominator
    }

    public var description: String { "\(numerator)/\(denominator)" }
}
