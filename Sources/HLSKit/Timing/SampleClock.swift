/// Capture times of audio samples, from the count of samples received and the device's real rate.
///
/// Devices stamp packets with the clock when they read them, which jitters with scheduling, and
/// ALSA plugins may deliver one sample frame per packet. The sample count is exact, but a device's
/// sample clock is never exactly the system clock the camera's frames are timed by: ±100 ppm is
/// usual, 0.5 % happens. Counted at the nominal rate, such audio would slide away from the video by
/// that share of the running time (3 s an hour at 0.1 %).
///
/// So sample `n` is at `anchor + (n - anchor sample) × period`. The period starts at the nominal one;
/// once `minimumFitSeconds` of packets are in, it is re-estimated every second: a straight line
/// fitted through the packet times of the last `fitWindowSeconds` gives the device's real rate, and
/// the period is steered so that the timeline meets that line within `steeringSeconds`. The timeline
/// is smooth like the count and right like the clock. A packet it misses by more than
/// `resyncThreshold` (samples lost in an overrun) moves the anchor to that packet's time.
public struct SampleClock {
    public let sampleRate: Int
    public let resyncThresholdMicroseconds: Int64
    /// Samples received so far: the index of the next sample.
    public private(set) var sampleCount: Int64 = 0
    /// How many times the anchor moved after the first packet.
    public private(set) var resyncCount = 0
    /// How fast the device's sample clock runs against the system clock, in parts per million above
    /// its nominal rate (negative: slower); 0 until the first estimate.
    public private(set) var partsPerMillion: Double = 0
    private var anchor: (sample: Int64, microseconds: Double)?
    private var microsecondsPerSample: Double
    /// (first sample, clock time) of packets, at most `pointsPerSecond` a second, oldest first.
    private var points: [(sample: Int64, microseconds: Int64)] = []
    private var nextEstimateSample: Int64 = 0

    public static let defaultResyncThresholdMicroseconds: Int64 = 50_000
    public static let fitWindowSeconds = 30
    public static let minimumFitSeconds = 1
    public static let steeringSeconds = 1.0
    public static let pointsPerSecond = 20
    /// The period never strays further from the nominal one: the resampler stretches no more (2 %).
    public static let maximumDeviation = 0.02

    public init(sampleRate: Int, resyncThresholdMicroseconds: Int64 = defaultResyncThresholdMicroseconds) {
        precondition(sampleRate > 0, "sample rate must be positive")
        self.sampleRate = sampleRate
        self.resyncThresholdMicroseconds = resyncThresholdMicroseconds
        microsecondsPerSample = 1_000_000 / Double(sampleRate)
    }

    /// Counts a packet of `samples` samples whose first sample the clock puts at `clockMicroseconds`.
    /// Returns true when it made a new estimate of the device's rate (`partsPerMillion`).
    @discardableResult
    public mutating func receive(samples: Int, clockMicroseconds: Int64) -> Bool {
        if anchor == nil || abs(Double(clockMicroseconds) - exactTime(ofSample: sampleCount)) > Double(resyncThresholdMicroseconds) {
            if anchor != nil { resyncCount += 1 }
            anchor = (sampleCount, Double(clockMicroseconds))
            // Samples were lost: the line through the packets before them no longer holds.
            points = []
            nextEstimateSample = sampleCount + Int64(sampleRate * Self.minimumFitSeconds)
        }
        if points.last.map({ sampleCount - $0.sample >= Int64(sampleRate / Self.pointsPerSecond) }) ?? true {
            points.append((sampleCount, clockMicroseconds))
            let oldest = sampleCount - Int64(sampleRate * Self.fitWindowSeconds)
            if let expired = points.firstIndex(where: { $0.sample >= oldest }), expired > 0 {
                points.removeFirst(expired)
            }
        }
        sampleCount += Int64(samples)
        // Until the packets span enough time to fit, every packet tries again.
        guard sampleCount >= nextEstimateSample, estimate() else { return false }
        nextEstimateSample = sampleCount + Int64(sampleRate)
        return true
    }

    /// The capture time of sample `index` (counted from the first sample received), in
    /// microseconds on the clock; only valid once a packet has been received.
    public func time(ofSample index: Int64) -> Int64 {
        Int64(exactTime(ofSample: index).rounded())
    }

    private func exactTime(ofSample index: Int64) -> Double {
        guard let anchor else { preconditionFailure("no audio received yet") }
        return anchor.microseconds + Double(index - anchor.sample) * microsecondsPerSample
    }

    /// Fits the packet times, then steers the period from the next sample on (the timeline stays
    /// continuous) so that it meets the fitted line `steeringSeconds` later.
    private mutating func estimate() -> Bool {
        guard let first = points.first, let last = points.last,
              last.sample - first.sample >= Int64(sampleRate * Self.minimumFitSeconds) else { return false }
        let count = Double(points.count)
        let meanX = points.reduce(0.0) { $0 + Double($1.sample - first.sample) } / count
        let meanY = points.reduce(0.0) { $0 + Double($1.microseconds - first.microseconds) } / count
        var covariance = 0.0
        var variance = 0.0
        for point in points {
            let x = Double(point.sample - first.sample) - meanX
            covariance += x * (Double(point.microseconds - first.microseconds) - meanY)
            variance += x * x
        }
        guard variance > 0 else { return false }
        let fittedPeriod = covariance / variance
        guard fittedPeriod > 0 else { return false }
        let now = sampleCount
        let fitted = Double(first.microseconds) + meanY + (Double(now - first.sample) - meanX) * fittedPeriod
        let current = exactTime(ofSample: now)
        let steeringSamples = Self.steeringSeconds * 1_000_000 / fittedPeriod
        anchor = (now, current)
        let nominal = 1_000_000 / Double(sampleRate)
        microsecondsPerSample = min(max(fittedPeriod + (fitted - current) / steeringSamples,
                                        nominal * (1 - Self.maximumDeviation)), nominal * (1 + Self.maximumDeviation))
        partsPerMillion = (1_000_000 / (fittedPeriod * Double(sampleRate)) - 1) * 1_000_000
        return true
    }
}
