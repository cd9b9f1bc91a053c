import CFFmpeg

/// Turns a camera's packets (raw YUYV, NV12 … or MJPEG) into yuv420p frames of our own.
///
/// FFmpeg's rawvideo and mjpeg decoders give a picture in the device's format; swscale then
/// copies it into a freshly allocated yuv420p frame, converting when needed. The copy also
/// hands the device's buffer straight back, so a pipeline that holds frames never starves
/// the driver of capture buffers.
final class PictureDecoder {
    private let context: UnsafeMutablePointer<AVCodecContext>
    private let decoded: Frame
    private var scaler: OpaquePointer?
    private var scalerInput: (width: Int32, height: Int32, format: Int32)?

    init(parameters: UnsafePointer<AVCodecParameters>) throws {
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw FFmpegError(code: hlscap_averror_decoder_not_found())
        }
        guard let context = avcodec_alloc_context3(codec) else { throw FFmpegError.outOfMemory }
        self.context = context
        do {
            decoded = try Frame()
            try FFmpegError.check(avcodec_parameters_to_context(context, parameters))
            try FFmpegError.check(avcodec_open2(context, codec, nil))
        } catch {
            var owned: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&owned)
            throw error
        }
    }

    deinit {
        sws_freeContext(scaler)
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
        let source = decoded.pointer.pointee
        let output = try Frame.capturedVideo(width: Int(source.width), height: Int(source.height))
        let scaler = try scaler(for: source)
        withUnsafePointer(to: source.data) { sourceData in
            withUnsafePointer(to: source.linesize) { sourceStrides in
                withUnsafePointer(to: output.pointer.pointee.data) { outputData in
                    withUnsafePointer(to: output.pointer.pointee.linesize) { outputStrides in
                        _ = sws_scale(scaler,
                                      Self.planes(sourceData), UnsafeRawPointer(sourceStrides).assumingMemoryBound(to: Int32.self),
                                      0, source.height,
                                      Self.mutablePlanes(outputData), UnsafeRawPointer(outputStrides).assumingMemoryBound(to: Int32.self))
                    }
                }
            }
        }
        output.pts = decoded.pts
        return output
    }

    /// The scaler for pictures like `source`, made again only if the device changes size or format.
    private func scaler(for source: AVFrame) throws -> OpaquePointer {
        if let scaler, let scalerInput, scalerInput == (source.width, source.height, source.format) {
            return scaler
        }
        sws_freeContext(scaler)
        scaler = sws_getContext(source.width, source.height, AVPixelFormat(source.format),
                                source.width, source.height, AV_PIX_FMT_YUV420P, SWS_BILINEAR, nil, nil, nil)
        guard let scaler else { throw FFmpegError(code: hlscap_averror(EINVAL), loggedMessage: "cannot convert the camera's pictures to yuv420p") }
        scalerInput = (source.width, source.height, source.format)
        return scaler
    }

    private typealias Planes = (UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?,
                                UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?,
                                UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt8>?)

    private static func planes(_ data: UnsafePointer<Planes>) -> UnsafePointer<UnsafePointer<UInt8>?> {
        UnsafeRawPointer(data).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
    }

    private static func mutablePlanes(_ data: UnsafePointer<Planes>) -> UnsafePointer<UnsafeMutablePointer<UInt8>?> {
        UnsafeRawPointer(data).assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
    }
}
