/// Capture times of audio samples, from the count of samples received.
///
/// Devices stamp packets with the clock when they read them, which jitters with scheduling,
/// and ALSA plugins may deliver one sample frame per packet. The sample count is exact, so
/// sample `n` is at `anchor + n / sampleRate`; the anchor is the clock time of the first packet
/// and moves only when the clock and the count disagree by more than `resyncThreshold` (the
/// device's rate drifts from the clock's, or samples were lost in an overrun).
struct SampleClock {
    let sampleRate: Int
    let resyncThresholdMicroseconds: Int64
    /// Samples received so far: the index of the next sample.
    private(set) var sampleCount: Int64 = 0
    /// How many times the anchor moved after the first packet.
    private(set) var resyncCount = 0
    private var anchor: (sample: Int64, microseconds: Int64)?

    static let defaultResyncThresholdMicroseconds: Int64 = 50_000

    init(sampleRate: Int, resyncThresholdMicroseconds: Int64 = defaultResyncThresholdMicroseconds) {
        precondition(sampleRate > 0, "sample rate must be positive")
        self.sampleRate = sampleRate
        self.resyncThresholdMicroseconds = resyncThresholdMicroseconds
    }

    /// Counts a packet of `samples` samples whose first sample the clock puts at `clockMicroseconds`.
    mutating func receive(samples: Int, clockMicroseconds: Int64) {
        if anchor == nil {
            anchor = (sampleCount, clockMicroseconds)
        } else if abs(clockMicroseconds - time(ofSample: sampleCount)) > resyncThresholdMicroseconds {
            anchor = (sampleCount, clockMicroseconds)
            resyncCount += 1
        }
        sampleCount += Int64(samples)
    }

    /// The capture time of sample `index` (counted from the first sample received), in
    /// microseconds on the clock; only valid once a packet has been received.
    func time(ofSample index: Int64) -> Int64 {
        guard let anchor else { preconditionFailure("no audio received yet") }
        return anchor.microseconds + (index - anchor.sample) * 1_000_000 / Int64(sampleRate)
    }
}
