import CFFmpeg
import HLSKit

/// Collects planar float (fltp) audio and hands it out in frames of exactly
/// `frameSampleCount` samples, as the AAC encoder takes them.
///
/// Output timestamps count samples: the first frame starts at the first input frame's
/// `pts` (rescaled to samples) and every later one where the previous ended, so audio time
/// follows the samples received rather than jittery capture timestamps.
public final class AudioFIFO {
    public let sampleRate: Int
    public let channelCount: Int
    public let frameSampleCount: Int

    private let fifo: OpaquePointer
    /// The pts of the next frame handed out; set by the first frame written (0 when it has none).
    private var nextPts: Int64?

    public init(sampleRate: Int, channelCount: Int, frameSampleCount: Int = AudioEncoder.frameSampleCount) throws {
        guard let fifo = av_audio_fifo_alloc(AV_SAMPLE_FMT_FLTP, Int32(channelCount), Int32(frameSampleCount)) else {
            throw FFmpegError.outOfMemory
        }
        self.fifo = fifo
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.frameSampleCount = frameSampleCount
    }

    public convenience init(for settings: AudioEncoderSettings) throws {
        try self.init(sampleRate: settings.sampleRate, channelCount: settings.channelCount)
    }

    deinit { av_audio_fifo_free(fifo) }

    /// Samples waiting to be handed out.
    public var bufferedSampleCount: Int { Int(av_audio_fifo_size(fifo)) }

    /// Appends the samples of `frame`, which must be fltp at this FIFO's rate and channel count.
    public func write(_ frame: Frame) throws {
        guard frame.sampleFormat == AV_SAMPLE_FMT_FLTP, frame.sampleRate == sampleRate,
              frame.channelCount == channelCount else {
            throw CodecError.unexpectedFrame("\(frame.channelCount) channels at \(frame.sampleRate) Hz, format "
                + "\(frame.sampleFormat.rawValue); the FIFO holds fltp, \(channelCount) channels at \(sampleRate) Hz")
        }
        if nextPts == nil { nextPts = frame.pts(inTimescale: Timescale(sampleRate)) }
        let planes = UnsafeMutablePointer<UnsafeMutableRawPointer?>(OpaquePointer(frame.pointer.pointee.extended_data))
        let written = try FFmpegError.check(av_audio_fifo_write(fifo, planes, Int32(frame.sampleCount)))
        guard Int(written) == frame.sampleCount else { throw FFmpegError.outOfMemory }
    }

    /// The next full frame, or nil while fewer than `frameSampleCount` samples wait.
    public func readFrame() throws -> Frame? {
        guard bufferedSampleCount >= frameSampleCount else { return nil }
        return try read(frameSampleCount)
    }

    /// At the end of the stream: the samples left, as one shorter frame (nil when none are).
    public func readRemainder() throws -> Frame? {
        guard bufferedSampleCount > 0 else { return nil }
        return try read(bufferedSampleCount)
    }

    private func read(_ count: Int) throws -> Frame {
        let frame = try Frame.fltp(sampleCount: count, sampleRate: sampleRate, channelCount: channelCount)
        let planes = UnsafeMutablePointer<UnsafeMutableRawPointer?>(OpaquePointer(frame.pointer.pointee.extended_data))
        let read = try FFmpegError.check(av_audio_fifo_read(fifo, planes, Int32(count)))
        guard Int(read) == count else { throw FFmpegError.invalidData }
        let pts = nextPts ?? 0
        frame.pts = pts
        nextPts = pts + Int64(count)
        return frame
    }
}
