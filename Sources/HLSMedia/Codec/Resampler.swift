import CFFmpeg
import HLSKit

/// Converts decoded audio of any rate, layout and sample format to planar float (fltp) at
/// the encoder's rate and channel count (libswresample).
///
/// It sets itself up from the first frame and again whenever the input format changes
/// mid-stream, which decoders of some streams do.
public final class Resampler {
    public let outputSampleRate: Int
    public let outputChannelCount: Int
    /// Whether the output keeps to the input's timestamps rather than to its sample count: audio
    /// captured from a device whose sample clock drifts from the system clock, timed by `SampleClock`.
    /// Each frame is then stretched or squeezed (by up to `maximumCompensation`) to last on the output
    /// what its timestamps say it lasted, plus whatever the output is behind or ahead of them, so it
    /// keeps to the timestamps within a sample or two. ffmpeg's `aresample=async` only stretches in
    /// proportion to the gap, which leaves a drifting clock's audio behind by the drift times a second
    /// (5 ms for 0.5 %). A gap of more than `hardCompensationSeconds` (samples lost in an overrun) is
    /// not stretched over: the caller fills or cuts it (`AudioLane`), and the timeline starts again.
    public let followsTimestamps: Bool

    /// 2 %: four times the worst drift a microphone shows.
    public static let maximumCompensation = 0.02
    /// 20 ms: what scheduling jitter never reaches and a lost stretch of samples does.
    public static let hardCompensationSeconds = 0.02

    /// With `followsTimestamps`: the first timestamp (µs) and the output samples since, and the last
    /// frame's timestamp and length.
    private var timeline: (originMicroseconds: Int64, outputSamples: Int64)?
    private var previousFrame: (microseconds: Int64, sampleCount: Int)?

    /// Rates outside this range are not audio anyone records; they point at a broken stream.
    public static let acceptedInputRates = 1_000...384_000

    private var context: OpaquePointer?
    private var inputFormat: InputFormat?

    private struct InputFormat: Equatable {
        var sampleRate: Int32
        var channelCount: Int32
        var channelMask: UInt64
        var sampleFormat: Int32
    }

    public init(outputSampleRate: Int, outputChannelCount: Int, followsTimestamps: Bool = false) {
        self.outputSampleRate = outputSampleRate
        self.outputChannelCount = outputChannelCount
        self.followsTimestamps = followsTimestamps
    }

    public convenience init(for settings: AudioEncoderSettings, followsTimestamps: Bool = false) {
        self.init(outputSampleRate: settings.sampleRate, outputChannelCount: settings.channelCount,
                  followsTimestamps: followsTimestamps)
    }

    deinit { swr_free(&context) }

    /// Converts `frame`; its `pts` becomes the same instant counted in output samples.
    /// Returns nothing while the resampler is still filling its filter, and two frames when
    /// the input format changed (the old format's tail, then the new frame).
    public func convert(_ frame: Frame) throws -> [Frame] {
        // swresample compares each frame's layout with the one it was set up with, so a frame
        // that states only a channel count (WAV, raw PCM) carries the usual layout for it first.
        let layout = frame.pointer.pointee.ch_layout
        if layout.order == AV_CHANNEL_ORDER_UNSPEC {
            av_channel_layout_default(&frame.pointer.pointee.ch_layout, layout.nb_channels)
        }
        let format = try Self.inputFormat(of: frame)
        var frames: [Frame] = []
        if format != inputFormat {
            if inputFormat != nil, let tail = try flush() { frames.append(tail) }
            try configure(for: frame, format: format)
        }
        let output = try outputFrame()
        if followsTimestamps, let microseconds = frame.pts(inTimescale: 1_000_000) {
            try compensate(frame, at: microseconds, inputRate: Int(format.sampleRate))
        }
        try FFmpegError.check(swr_convert_frame(context, output.pointer, frame.pointer))
        if let pts = frame.pts(inTimescale: Timescale(outputSampleRate)) { output.pts = pts }
        timeline?.outputSamples += Int64(output.sampleCount)
        if output.sampleCount > 0 { frames.append(output) }
        return frames
    }

    /// Sets how many samples this frame gains or loses on the output (see `followsTimestamps`).
    private func compensate(_ frame: Frame, at microseconds: Int64, inputRate: Int) throws {
        let outputRate = Double(outputSampleRate)
        let nominal = Double(frame.sampleCount) * outputRate / Double(inputRate)
        guard nominal >= 1 else { return }
        // Where this frame's first sample belongs on the output, and where it will come out.
        let delay = Double(swr_get_delay(context, Int64(outputSampleRate)))
        var behind = 0.0
        if let timeline {
            let target = Double(microseconds - timeline.originMicroseconds) * outputRate / 1_000_000
            behind = target - (Double(timeline.outputSamples) + delay)
        }
        if timeline == nil || abs(behind) > Self.hardCompensationSeconds * outputRate {
            timeline = (microseconds - Int64(((Double(timeline?.outputSamples ?? 0) + delay) * 1_000_000 / outputRate).rounded()),
                        timeline?.outputSamples ?? 0)
            previousFrame = nil
            behind = 0
        }
        // How long the frame lasts on the clock: as long as the previous one did, per sample.
        var lasts = nominal
        if let previousFrame, microseconds > previousFrame.microseconds {
            lasts = Double(microseconds - previousFrame.microseconds) * outputRate / 1_000_000
                * Double(frame.sampleCount) / Double(previousFrame.sampleCount)
        }
        previousFrame = (microseconds, frame.sampleCount)
        let limit = Self.maximumCompensation * nominal
        let delta = min(max(lasts - nominal + behind, -limit), limit)
        try FFmpegError.check(swr_set_compensation(context, Int32(delta.rounded()), Int32(nominal.rounded())))
    }

    /// The samples still inside the resampler's filter, at the end of the stream.
    public func flush() throws -> Frame? {
        guard context != nil else { return nil }
        let output = try outputFrame()
        try FFmpegError.check(swr_convert_frame(context, output.pointer, nil))
        return output.sampleCount > 0 ? output : nil
    }

    /// An empty output frame; swr_convert_frame sizes and allocates its buffers.
    private func outputFrame() throws -> Frame {
        let frame = try Frame(timeBase: Rational(1, Int32(outputSampleRate)))
        frame.pointer.pointee.sample_rate = Int32(outputSampleRate)
        frame.pointer.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        av_channel_layout_default(&frame.pointer.pointee.ch_layout, Int32(outputChannelCount))
        return frame
    }

    private func configure(for frame: Frame, format: InputFormat) throws {
        swr_free(&context)
        var inputLayout = AVChannelLayout()
        defer { av_channel_layout_uninit(&inputLayout) }
        try FFmpegError.check(av_channel_layout_copy(&inputLayout, &frame.pointer.pointee.ch_layout))
        var outputLayout = AVChannelLayout()
        av_channel_layout_default(&outputLayout, Int32(outputChannelCount))
        defer { av_channel_layout_uninit(&outputLayout) }
        try FFmpegError.check(swr_alloc_set_opts2(
            &context, &outputLayout, AV_SAMPLE_FMT_FLTP, Int32(outputSampleRate),
            &inputLayout, AVSampleFormat(rawValue: format.sampleFormat), format.sampleRate, 0, nil))
        if followsTimestamps {
            // Resampling from the start, so that stretching never sets the resampler up again mid-stream.
            try FFmpegError.check(av_opt_set(UnsafeMutableRawPointer(context), "flags", "res", 0))
            timeline = nil
            previousFrame = nil
        }
        try FFmpegError.check(swr_init(context))
        inputFormat = format
    }

    private static func inputFormat(of frame: Frame) throws -> InputFormat {
        guard frame.channelCount > 0 else {
            throw CodecError.unsupportedAudio("the audio has no channels")
        }
        guard acceptedInputRates.contains(frame.sampleRate) else {
            throw CodecError.unsupportedAudio("a sample rate of \(frame.sampleRate) Hz is outside "
                + "\(acceptedInputRates.lowerBound)–\(acceptedInputRates.upperBound) Hz")
        }
        guard frame.sampleFormat != AV_SAMPLE_FMT_NONE else {
            throw CodecError.unsupportedAudio("the audio frame has no sample format")
        }
        let layout = frame.pointer.pointee.ch_layout
        return InputFormat(sampleRate: Int32(frame.sampleRate), channelCount: layout.nb_channels,
                           channelMask: layout.order == AV_CHANNEL_ORDER_NATIVE ? layout.u.mask : 0,
                           sampleFormat: frame.pointer.pointee.format)
    }
}
