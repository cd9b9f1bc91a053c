import HLSKit

/// The audio half of transcoding: resample, place on the output timeline, exact AAC frames.
///
/// Audio time is the count of samples written. Each input's first frame is placed exactly where its
/// timestamp says (silence fills a gap, an overlap is cut); later frames only re-align when their
/// timestamps stray more than `Resampler.hardCompensationSeconds` from the count, as after a real gap.
public final class AudioLane {
    public let encoder: AudioEncoder
    let trackIndex: Int
    let sampleRate: Int

    private let resampler: Resampler
    private let fifo: AudioFIFO
    private var writtenSamples: Int64 = 0
    private var alignsNextFrameExactly = true
    /// Whether `encode` measures the peak level of what it converts (for a live status line).
    public var measuresLevel = false
    /// The peak level of the frames the last `encode` converted, 0…1.
    public private(set) var lastPeakLevel: Float = 0


    /// `followsTimestamps`: the input is captured audio whose device clock drifts (`Resampler`).
    public init(settings: AudioEncoderSettings, trackIndex: Int, followsTimestamps: Bool = false) throws {
        encoder = try AudioEncoder(settings: settings, trackIndex: trackIndex)
        self.trackIndex = trackIndex
        sampleRate = settings.sampleRate
        resampler = Resampler(for: settings, followsTimestamps: followsTimestamps)
        fifo = try AudioFIFO(for: settings)
    }

    /// The next frame starts a new input: place it exactly.
    public func startInput() {
        alignsNextFrameExactly = true
    }

    /// Encodes a decoded frame that belongs at `ticks` (90 kHz output timeline; nil when it has no
    /// timestamp); returns where the written audio now ends, in ticks.
    public func encode(_ frame: Frame, atTicks ticks: Int64?, into samples: inout [EncodedSample]) throws -> Int64 {
        var converted = try resampler.convert(frame)
        if measuresLevel { lastPeakLevel = converted.reduce(0) { max($0, $1.peakLevel()) } }
        if let ticks {
            let drift = VideoEncoder.timescale.convert(ticks, to: Timescale(sampleRate)) - writtenSamples
            // The same 20 ms past which a resampler that follows timestamps stops stretching: timestamps of
            // compressed audio jitter by less; real gaps are longer.
            let tolerance = Int64((Double(sampleRate) * Resampler.hardCompensationSeconds).rounded())
            if alignsNextFrameExactly || abs(drift) > tolerance {
                if drift > 0 {
                    try write(Frame.silence(sampleCount: Int(drift), sampleRate: sampleRate,
                                            channelCount: encoder.settings.channelCount), into: &samples)
                } else if drift < 0 {
                    converted = try Self.dropping(-drift, from: converted)
                }
            }
            alignsNextFrameExactly = false
        }
        for block in converted { try write(block, into: &samples) }
        return endTicks
    }

    /// Silence from the end of the written audio until `endTicks`.
    public func pad(untilTicks endTicks: Int64, into samples: inout [EncodedSample]) throws {
        let missing = VideoEncoder.timescale.convert(endTicks, to: Timescale(sampleRate)) - writtenSamples
        if missing > 0 {
            try write(Frame.silence(sampleCount: Int(missing), sampleRate: sampleRate,
                                    channelCount: encoder.settings.channelCount), into: &samples)
        }
    }

    public func flush() throws -> [EncodedSample] {
        var samples: [EncodedSample] = []
        if let tail = try resampler.flush() { try write(tail, into: &samples) }
        if let remainder = try fifo.readRemainder() { samples += try encoder.encode(remainder) }
        samples += try encoder.flush()
        return samples
    }

    public var endTicks: Int64 { Timescale(sampleRate).convert(writtenSamples, to: VideoEncoder.timescale) }

    private func write(_ frame: Frame, into samples: inout [EncodedSample]) throws {
        frame.pts = writtenSamples
        frame.timeBase = Rational(1, Int32(sampleRate))
        try fifo.write(frame)
        writtenSamples += Int64(frame.sampleCount)
        while let block = try fifo.readFrame() { samples += try encoder.encode(block) }
    }

    private static func dropping(_ count: Int64, from frames: [Frame]) throws -> [Frame] {
        var remaining = Int(count)
        var kept: [Frame] = []
        for frame in frames {
            if remaining >= frame.sampleCount {
                remaining -= frame.sampleCount
            } else {
                kept.append(remaining > 0 ? try frame.droppingLeadingSamples(remaining) : frame)
                remaining = 0
            }
        }
        return kept
    }
}
