import Foundation

/// Segments that start off a stream's segment grid, read from their program date-times: an operator's
/// mark (SIGUSR1, `startSegmentAtNextFrame`) cuts one; every other segment starts a whole number of
/// segment durations after the first, within the millisecond the date-times are written to.
public enum SegmentGridCheck {
    public static func startsOffTheGrid(_ starts: [Date], segmentSeconds: Double,
                                        toleranceSeconds: Double = 0.005) -> [Date] {
        guard let first = starts.first else { return [] }
        return starts.filter { start in
            let sinceFirst = start.timeIntervalSince(first)
            return abs(sinceFirst - (sinceFirst / segmentSeconds).rounded() * segmentSeconds) > toleranceSeconds
        }
    }
}
