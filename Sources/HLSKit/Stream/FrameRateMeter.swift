/// The peak frame rate of a video track, for FRAME-RATE (RFC 8216bis 4.4.6.2: the maximum frame rate).
///
/// Each frame closes a window: the shortest run of frames before it that lasts at least a second; the
/// peak is the highest rate over those windows. A peak within `jitterTolerance` of the mean rate is
/// timestamp jitter (a constant rate stored in milliseconds), and the mean is reported instead.
public struct FrameRateMeter: Sendable, Equatable {
    public let timescale: Timescale
    /// How far above the mean a peak must be to count as a faster rate.
    public static let jitterTolerance = 0.05

    private var window: [Int64] = []
    private var windowHead = 0
    private var windowTicks: Int64 = 0
    private var frameCount = 0
    private var totalTicks: Int64 = 0
    private var peak = 0.0

    public init(timescale: Timescale) {
        self.timescale = timescale
    }

    public mutating func add(durationTicks: Int64) {
        guard durationTicks > 0 else { return }
        frameCount += 1
        totalTicks += durationTicks
        window.append(durationTicks)
        windowTicks += durationTicks
        while windowTicks - window[windowHead] >= timescale.perSecond {
            windowTicks -= window[windowHead]
            windowHead += 1
        }
        if windowHead > 4096 {
            window.removeFirst(windowHead)
            windowHead = 0
        }
        if windowTicks >= timescale.perSecond {
            peak = max(peak, Double(window.count - windowHead) / timescale.seconds(windowTicks))
        }
    }

    /// Frames per second: the peak, or the mean when the peak is only jitter or the video is shorter than a
    /// second; nil before any frame.
    public var framesPerSecond: Double? {
        guard totalTicks > 0 else { return nil }
        let mean = Double(frameCount) / timescale.seconds(totalTicks)
        return peak > mean * (1 + Self.jitterTolerance) ? peak : mean
    }
}
