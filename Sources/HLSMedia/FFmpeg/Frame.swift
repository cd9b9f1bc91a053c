import CFFmpeg
import HLSKit

/// An owned `AVFrame`: a decoded picture or a block of audio samples, with its time.
///
/// A class rather than a `~Copyable` struct because frames travel between threads through queues;
/// whoever holds the reference owns the frame, and nobody keeps one after handing it on.
public final class Frame {
    let pointer: UnsafeMutablePointer<AVFrame>
    /// The unit of `pts`; FFmpeg 5.1 codecs do not keep `AVFrame.time_base` themselves.
    public var timeBase: Rational

    public init(timeBase: Rational = Rational(1, 1_000_000)) throws {
        guard let pointer = av_frame_alloc() else { throw FFmpegError.outOfMemory }
        self.pointer = pointer
        self.timeBase = timeBase
    }

    /// Takes ownership of an allocated `AVFrame`, such as one from `av_frame_clone`.
    init(owning pointer: UnsafeMutablePointer<AVFrame>, timeBase: Rational) {
        self.pointer = pointer
        self.timeBase = timeBase
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&frame)
    }

    /// Presentation time in `timeBase`; nil when unknown.
    public var pts: Int64? {
        get { pointer.pointee.pts == hlscap_nopts_value() ? nil : pointer.pointee.pts }
        set { pointer.pointee.pts = newValue ?? hlscap_nopts_value() }
    }

    /// `pts` expressed in ticks of `timescale` (90 000 for video, the sample rate for audio).
    public func pts(inTimescale timescale: Timescale) -> Int64? {
        pts.map { rescale($0, multipliedBy: Int64(timeBase.numerator) * timescale.perSecond,
                          dividedBy: Int64(timeBase.denominator)) }
    }

    public var width: Int { Int(pointer.pointee.width) }
    public var height: Int { Int(pointer.pointee.height) }
    /// Audio samples per channel.
    public var sampleCount: Int { Int(pointer.pointee.nb_samples) }
    public var sampleRate: Int { Int(pointer.pointee.sample_rate) }
    public var channelCount: Int { Int(pointer.pointee.ch_layout.nb_channels) }

    /// Releases the buffers so the frame can be filled again.
    public func unref() { av_frame_unref(pointer) }
}

/// A frame on its way to another queue (capture thread → writing queue, writing queue → recording).
///
/// Unchecked sendable: `Frame`'s ownership rule — the sender keeps no reference once it has handed
/// the frame on, so only the receiving queue ever touches it.
public struct FrameHandoff: @unchecked Sendable {
    public let frame: Frame

    public init(_ frame: Frame) {
        self.frame = frame
    }
}
