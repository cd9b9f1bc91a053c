/// The capture times of one camera's frames on the monotonic clock.
///
/// FFmpeg's video4linux2 device passes the driver's buffer timestamps through, in microseconds, and
/// nearly every driver takes them from CLOCK_MONOTONIC at the moment the frame was captured. Some give
/// none (zero, as a Raspberry Pi's encoder nodes do), stamps on another clock, or stamps that do not
/// advance: from the first such frame on, every frame gets the time it was dequeued instead, so one
/// run's times never mix the two clocks. Times handed out always increase, by at least one frame: frames
/// that waited in the driver's buffers are dequeued one right after another, and would otherwise all get
/// the same instant.
struct CameraTimestamps {
    /// The camera's frame duration: the least a frame on the capture clock comes after the one before.
    let frameMicroseconds: Int64

    init(frameMicroseconds: Int64 = 1) {
        self.frameMicroseconds = max(1, frameMicroseconds)
    }

    /// Stamps further than this from the monotonic clock's present are not on it.
    static let toleranceMicroseconds: Int64 = 10_000_000

    /// Whether the driver's stamps are still used (false once one was found unusable).
    private(set) var usesDriverTime = true
    private var lastMicroseconds: Int64?

    /// The capture time of a frame the driver stamped `driverMicroseconds` (nil: no stamp), dequeued at
    /// `dequeuedMicroseconds` on the monotonic clock.
    mutating func captureTime(driverMicroseconds: Int64?, dequeuedMicroseconds now: Int64) -> Int64 {
        if usesDriverTime {
            if let stamp = driverMicroseconds, stamp > 0, abs(stamp - now) <= Self.toleranceMicroseconds,
               lastMicroseconds.map({ stamp > $0 }) ?? true {
                lastMicroseconds = stamp
                return stamp
            }
            usesDriverTime = false
        }
        // A frame dequeued right after the last (or before its driver stamp) still comes a frame after it.
        let time = max(now, (lastMicroseconds ?? now - frameMicroseconds) + frameMicroseconds)
        lastMicroseconds = time
        return time
    }
}
