import CFFmpeg

/// A fraction such as a time base (1/90000) or a frame rate (30000/1001).
public struct Rational: Sendable, Hashable, CustomStringConvertible {
    public var numerator: Int32
    public var denominator: Int32

    public init(_ numerator: Int32, _ denominator: Int32) {
        self.numerator = numerator
        self.denominator = denominator
    }

    init(_ value: AVRational) { self.init(value.num, value.den) }

    /// `nil` for FFmpeg's "unknown" values, which have a zero numerator or denominator.
    init?(ifKnown value: AVRational) {
        guard value.num != 0, value.den != 0 else { return nil }
        self.init(value)
    }

    public var description: String { "\(numerator)/\(denominator)" }
}
