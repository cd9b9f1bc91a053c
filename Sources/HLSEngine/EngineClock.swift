import Foundation
import HLSMedia

/// The engine's time: the monotonic clock its sources stamp frames with, and the wall clock that
/// EXT-X-PROGRAM-DATE-TIME tells. Tests give their own, so that program date-times are known.
public protocol EngineClock: Sendable {
    /// Microseconds on the capture clock (`MonotonicClock`).
    func monotonicMicroseconds() -> Int64
    func now() -> Date
}

/// The system's clocks.
public struct SystemClock: EngineClock {
    public init() {}

    public func monotonicMicroseconds() -> Int64 { MonotonicClock.nowMicroseconds() }
    public func now() -> Date { Date() }
}

extension EngineClock {
    /// Seconds on the monotonic clock, for timers.
    var monotonicSeconds: Double { Double(monotonicMicroseconds()) / 1_000_000 }
}
