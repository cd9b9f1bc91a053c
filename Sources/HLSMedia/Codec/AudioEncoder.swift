import CFFmpeg
import HLSKit

/// What the AAC encoder produces.
public struct AudioEncoderSettings: Sendable, Equatable {
    public var sampleRate: Int
    public var channelCount: Int
    /// Bits per second.
    public var bitrate: Int

    public init(sampleRate: Int = 48_000, channelCount: Int = 2, bitrate: Int = 128_000) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.bitrate = bitrate
    }
}

/// AAC-LC through FFmpeg's native `aac` encoder.
///
/// Frames go in as planar float (fltp) at the configured rate and channel count, 1024
/// samples each (the last may be shorter), with `pts` counted in samples. Samples come out
/// with decode times in samples as the encoder stamps them: the first one starts
/// `primingSamples` before the first frame, the encoder's delay, which the segmenter places
/// before the first video frame.
public final class AudioEncoder {
    /// AAC codes 1024 samples per frame.
    public static let frameSampleCount = 1024

    public let settings: AudioEncoderSettings
    public let trackIndex: Int
    /// The decoder configuration for the init segment (the encoder's extradata).
    public let audioSpecificConfig: AudioSpecificConfig
    /// Samples of encoder delay at the start of the output (`initial_padding`).
    public let primingSamples: Int

    private let context: CodecContext
    private var packet: Packet

    private static let encoderName = "aac"
    /// The channel counts an AudioSpecificConfig channelConfiguration can state.
    private static let channelCounts: Set = [1, 2, 3, 4, 5, 6, 8]

    public init(settings: AudioEncoderSettings, trackIndex: Int) throws {
        guard let codec = avcodec_find_encoder_by_name(Self.encoderName) else {
            throw CodecError.encoderNotFound(codec: Self.encoderName)
        }
        guard Self.channelCounts.contains(settings.channelCount) else {
            throw CodecError.unsupportedSettings("AAC cannot carry \(settings.channelCount) channels here")
        }
        guard AudioSpecificConfig.samplingFrequencies.contains(settings.sampleRate) else {
            throw CodecError.unsupportedSettings("AAC has no \(settings.sampleRate) Hz sampling frequency")
        }
        self.settings = settings
        self.trackIndex = trackIndex
        context = try CodecContext(codec: codec)
        let codecContext = context.pointer
        codecContext.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        codecContext.pointee.sample_rate = Int32(settings.sampleRate)
        av_channel_layout_default(&codecContext.pointee.ch_layout, Int32(settings.channelCount))
        codecContext.pointee.bit_rate = Int64(settings.bitrate)
        codecContext.pointee.time_base = AVRational(num: 1, den: Int32(settings.sampleRate))
        codecContext.pointee.profile = FF_PROFILE_AAC_LOW
        codecContext.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        try context.open()
        packet = try Packet()

        do {
            audioSpecificConfig = try AudioSpecificConfig(parsing: context.extradata)
        } catch {
            throw CodecError.unsupportedSettings("the AAC encoder produced no usable AudioSpecificConfig (\(error))")
        }
        primingSamples = Int(codecContext.pointee.initial_padding)
    }

    /// Encodes one frame of fltp samples; returns the samples the encoder finished.
    public func encode(_ frame: Frame) throws -> [EncodedSample] {
        guard frame.sampleRate == settings.sampleRate, frame.channelCount == settings.channelCount,
              frame.sampleFormat == AV_SAMPLE_FMT_FLTP, frame.sampleCount <= Self.frameSampleCount else {
            throw CodecError.unexpectedFrame("\(frame.sampleCount) samples at \(frame.sampleRate) Hz, "
                + "\(frame.channelCount) channels, format \(frame.sampleFormat.rawValue); the encoder takes up to "
                + "\(Self.frameSampleCount) fltp samples at \(settings.sampleRate) Hz, \(settings.channelCount) channels")
        }
        guard let pts = frame.pts(inTimescale: Timescale(settings.sampleRate)) else {
            throw CodecError.unexpectedFrame("audio frame without a timestamp")
        }
        let input = try frame.newReference()
        input.pts = pts
        try context.sendFrame(input.pointer)
        return try receiveSamples()
    }

    /// Drains the encoder's delay; it takes no more frames afterwards.
    public func flush() throws -> [EncodedSample] {
        try context.sendFrame(nil)
        return try receiveSamples()
    }

    private func receiveSamples() throws -> [EncodedSample] {
        var samples: [EncodedSample] = []
        try context.receivePackets(into: &packet) { packet in
            guard let pts = packet.pts else {
                throw CodecError.unexpectedFrame("the AAC encoder returned a packet without a timestamp")
            }
            samples.append(EncodedSample(track: trackIndex, decodeTime: pts,
                                         durationHint: packet.duration > 0 ? packet.duration : nil,
                                         isSync: true, data: packet.bytes))
        }
        return samples
    }
}
