import CFFmpeg
import HLSKit

extension Rational {
    init(_ value: AVRational) { self.init(value.num, value.den) }

    /// `nil` for FFmpeg's "unknown" values, which have a zero numerator or denominator.
    init?(ifKnown value: AVRational) {
        guard value.num != 0, value.den != 0 else { return nil }
        self.init(value)
    }

    var avRational: AVRational { AVRational(num: numerator, den: denominator) }

    /// `ticks` of this time base in microseconds, rounded to the nearest.
    func microseconds(_ ticks: Int64) -> Int64 {
        av_rescale_q(ticks, avRational, AVRational(num: 1, den: 1_000_000))
    }
}
