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

    public init(outputSampleRate: Int, outputChannelCount: Int) {
        self.outputSampleRate = outputSampleRate
        self.outputChannelCount = outputChannelCount
    }

    public convenience init(for settings: AudioEncoderSettings) {
        self.init(outputSampleRate: settings.sampleRate, outputChannelCount: settings.channelCount)
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
        try FFmpegError.check(swr_convert_frame(context, output.pointer, frame.pointer))
        if let pts = frame.pts(inTimescale: Int64(outputSampleRate)) { output.pts = pts }
        if output.sampleCount > 0 { frames.append(output) }
        return frames
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
