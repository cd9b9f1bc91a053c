/// Ticks per second of a timeline: 90 000 for video, the sample rate for audio, 1 000 000 for capture
/// times. Every timescale in hlscap is one; MP4's boxes store it in 32 bits.
public struct Timescale: Sendable, Hashable, Comparable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    public let ticksPerSecond: UInt32

    /// The video timescale: a tick of 1/90 000 s divides every common frame duration.
    public static let video = Timescale(90_000)
    /// Capture times, on the monotonic clock.
    public static let microseconds = Timescale(1_000_000)

    public init(_ ticksPerSecond: some BinaryInteger) {
        precondition(ticksPerSecond > 0 && ticksPerSecond <= UInt32.max, "a timescale is 1 to 2³² − 1 ticks a second")
        self.ticksPerSecond = UInt32(ticksPerSecond)
    }

    public init(integerLiteral value: UInt32) {
        self.init(value)
    }

    /// Ticks per second for arithmetic on 64-bit tick counts.
    public var perSecond: Int64 { Int64(ticksPerSecond) }

    /// `ticks` of this timescale in `other`, rounded to the nearest tick.
    public func convert(_ ticks: Int64, to other: Timescale) -> Int64 {
        rescale(ticks, multipliedBy: other.perSecond, dividedBy: perSecond)
    }

    public func seconds(_ ticks: Int64) -> Double { Double(ticks) / Double(ticksPerSecond) }

    /// Whole ticks in `milliseconds`, rounded down.
    public func ticks(milliseconds: Int64) -> Int64 { milliseconds * perSecond / 1000 }

    public var description: String { String(ticksPerSecond) }

    public static func < (lhs: Timescale, rhs: Timescale) -> Bool { lhs.ticksPerSecond < rhs.ticksPerSecond }
}
