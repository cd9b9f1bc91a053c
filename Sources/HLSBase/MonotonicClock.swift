#if canImport(Glibc)
import Glibc
#endif

/// CLOCK_MONOTONIC in microseconds: the one clock every captured frame's `pts` is on.
public enum MonotonicClock {
    public static func nowMicroseconds() -> Int64 { microseconds(of: CLOCK_MONOTONIC) }

    /// Maps a wall-clock time in microseconds (what some FFmpeg devices stamp packets with)
    /// onto the monotonic clock, using the offset between the two clocks right now.
    public static func fromWallClock(_ wallMicroseconds: Int64) -> Int64 {
        wallMicroseconds - microseconds(of: CLOCK_REALTIME) + nowMicroseconds()
    }

    /// Sleeps until the monotonic clock reaches `deadline` (microseconds).
    public static func sleep(until deadline: Int64) {
        var target = timespec(tv_sec: Int(deadline / 1_000_000), tv_nsec: Int(deadline % 1_000_000) * 1000)
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
    }

    private static func microseconds(of clock: clockid_t) -> Int64 {
        var now = timespec()
        clock_gettime(clock, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }
}
