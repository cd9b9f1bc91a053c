import CFFmpeg
import HLSBase

/// Turns a camera's packets (raw YUYV, NV12 …, MJPEG or H.264) into yuv420p frames of our own.
///
/// FFmpeg's rawvideo and mjpeg decoders give a picture in the device's format; swscale then
/// copies it into a freshly allocated yuv420p frame, converting when needed. The copy also
/// hands the device's buffer straight back, so a pipeline that holds frames never starves
/// the driver of capture buffers.
final class PictureDecoder {
    private let context: UnsafeMutablePointer<AVCodecContext>
    private let decoded: Frame
    private var scaler: Scaler?
    /// An H.264 camera's packets before its first keyframe cannot be decoded: its reader skips them.
    var waitsForKeyframe: Bool

    init(parameters: UnsafePointer<AVCodecParameters>) throws {
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw FFmpegError(code: hlscap_averror_decoder_not_found())
        }
        guard let context = avcodec_alloc_context3(codec) else { throw FFmpegError.outOfMemory }
        self.context = context
        waitsForKeyframe = parameters.pointee.codec_id == AV_CODEC_ID_H264
        do {
            decoded = try Frame(timeBase: MonotonicClock.timeBase)
            try FFmpegError.check(avcodec_parameters_to_context(context, parameters))
            try FFmpegError.check(avcodec_open2(context, codec, nil))
        } catch {
            var owned: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&owned)
            throw error
        }
    }

    deinit {
        var owned: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&owned)
    }

    /// Decodes one packet into a yuv420p frame carrying its `pts`; nil when the
    /// decoder gave no picture for it.
    func decode(_ packet: borrowing Packet) throws -> Frame? {
        try FFmpegError.check(avcodec_send_packet(context, packet.pointer))
        decoded.unref()
        let result = avcodec_receive_frame(context, decoded.pointer)
        if result == FFmpegError.tryAgain.code { return nil }
        try FFmpegError.check(result)
        return try scaler(for: decoded).scale(decoded)
    }

    /// The converter for pictures of this size, made again only if the device changes size.
    private func scaler(for picture: Frame) throws -> Scaler {
        if let scaler, scaler.width == picture.width, scaler.height == picture.height { return scaler }
        let scaler = Scaler(width: picture.width, height: picture.height, keepsAspectRatio: false)
        self.scaler = scaler
        return scaler
    }
}
