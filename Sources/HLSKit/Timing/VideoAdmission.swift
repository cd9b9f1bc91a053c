/// Which captured video frames go to the writing queue, and which are dropped because it is behind.
///
/// Up to `queueLimit` frames wait; later ones are dropped, so a slow encoder costs frames, not
/// latency. But a segment ends at the first encoded frame at or after its boundary: if every frame
/// for seconds were dropped (a CPU starved for a while), the segment would run past the target
/// duration, which RFC 8216bis 4.4.3.1 forbids and players refuse. So a frame that comes
/// `longestGapMicroseconds` or more after the last one taken is taken anyway, up to `hardLimit`
/// waiting: the segments stay within a quarter second of their boundary through stalls of a few
/// seconds, for at most `hardLimit - queueLimit` more pictures in memory.
public struct VideoAdmission: Sendable {
    /// A quarter second at 30 fps.
    public static let queueLimit = 8
    /// Under half a second, so a segment that ends this late still rounds to the target duration.
    public static let longestGapMicroseconds: Int64 = 250_000
    /// Four seconds of stall at one frame every quarter second.
    public static let hardLimit = queueLimit + 16

    public private(set) var queued = 0
    private var lastTakenMicroseconds: Int64?

    public init() {}

    /// Whether the frame captured at `captureMicroseconds` goes to the queue; one that does is
    /// `release`d once encoded.
    public mutating func take(captureMicroseconds: Int64) -> Bool {
        let overdue = lastTakenMicroseconds.map { captureMicroseconds - $0 >= Self.longestGapMicroseconds } ?? true
        guard queued < Self.queueLimit || (overdue && queued < Self.hardLimit) else { return false }
        queued += 1
        lastTakenMicroseconds = captureMicroseconds
        return true
    }

    public mutating func release() {
        queued -= 1
    }
}
