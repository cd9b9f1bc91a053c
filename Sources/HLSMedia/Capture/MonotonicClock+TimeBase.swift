import HLSBase
import HLSKit

extension MonotonicClock {
    /// The unit of every capture timestamp.
    public static let timeBase = Rational(1, 1_000_000)
}
