import CFFmpeg
import HLSKit

/// The first picture of a fragmented-MP4 segment as a JPEG: the segment's init section and the segment
/// are read from memory by libavformat, the first video frame decoded (an HLS segment starts with a
/// keyframe, so it decodes alone), converted to full-range YUV and encoded by FFmpeg's `mjpeg`.
///
/// Stateless and safe to call from any thread; each call owns its demuxer, decoder and encoder.
public enum KeyframePicture {
    /// JPEG quality as a quantiser scale: 2 is the best, 31 the worst; 3 looks like the video.
    public static let quantiserScale: Int32 = 3

    /// A JPEG of the first picture of `segment`, decoded with `initSection` in front of it; scaled to
    /// `width` pixels wide (the height keeping the picture's shape) when given, else at its own size.
    public static func jpeg(initSection: [UInt8], segment: [UInt8], width: Int? = nil) throws -> [UInt8] {
        let input = MemoryInput(initSection + segment)
        // libavformat holds the input only as an unretained pointer.
        let frame = try withExtendedLifetime(input) { try firstPicture(input) }
        let size = outputSize(of: frame, width: width)
        return try encode(fullRange(frame, width: size.width, height: size.height))
    }

    /// `frame`'s display size (square pixels), or that size scaled to `width`; both even for 4:2:0.
    static func outputSize(of frame: Frame, width: Int?) -> (width: Int, height: Int) {
        let aspect = frame.pointer.pointee.sample_aspect_ratio
        let pixelAspect = aspect.num > 0 && aspect.den > 0 ? Double(aspect.num) / Double(aspect.den) : 1
        let displayWidth = Double(frame.width) * pixelAspect
        let targetWidth = width.map(Double.init) ?? displayWidth.rounded()
        let targetHeight = Double(frame.height) * targetWidth / displayWidth
        let even = { (value: Double) in max(2, Int((value / 2).rounded()) * 2) }
        return (even(targetWidth), even(targetHeight))
    }

    /// Decodes the first video frame the input holds.
    private static func firstPicture(_ input: MemoryInput) throws -> Frame {
        FFmpegLog.installIfNeeded()
        let avio = try input.open()
        defer {
            var buffer: UnsafeMutableRawPointer? = UnsafeMutableRawPointer(avio.pointee.buffer)
            av_freep(&buffer)
            var context: UnsafeMutablePointer<AVIOContext>? = avio
            avio_context_free(&context)
        }
        guard let allocated = avformat_alloc_context() else { throw FFmpegError.outOfMemory }
        allocated.pointee.pb = avio
        allocated.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        // What the demuxer logs says more than its error code ("moov atom not found").
        let address = UnsafeMutableRawPointer(allocated)
        FFmpegLog.startRecordingErrors(of: address)
        var format: UnsafeMutablePointer<AVFormatContext>? = allocated
        let opened = avformat_open_input(&format, nil, nil, nil)
        // On failure avformat_open_input has freed the context already.
        guard opened >= 0, let format else {
            let logged = FFmpegLog.recordedError(of: address)
            FFmpegLog.stopRecordingErrors(of: address)
            throw KeyframePictureError.unreadable(FFmpegError(code: opened, loggedMessage: logged))
        }
        defer {
            FFmpegLog.stopRecordingErrors(of: address)
            var context: UnsafeMutablePointer<AVFormatContext>? = format
            avformat_close_input(&context)
        }
        let streamIndex = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard streamIndex >= 0, let stream = format.pointee.streams[Int(streamIndex)] else {
            throw KeyframePictureError.noVideo
        }
        guard let codec = avcodec_find_decoder(stream.pointee.codecpar.pointee.codec_id) else {
            throw KeyframePictureError.noDecoder(String(cString: avcodec_get_name(stream.pointee.codecpar.pointee.codec_id)))
        }
        let decoder = try CodecContext(codec: codec)
        try FFmpegError.check(avcodec_parameters_to_context(decoder.pointer, stream.pointee.codecpar))
        // One thread: the first picture comes out as soon as its packet is in, without frame-thread delay.
        decoder.pointer.pointee.thread_count = 1
        try decoder.open()

        var packet = try Packet()
        let frame = try Frame()
        var ended = false
        while true {
            switch try decoder.receiveFrame(into: frame.pointer) {
            case .output:
                return frame
            case .endOfStream:
                throw KeyframePictureError.noPicture
            case .needsInput:
                guard !ended else { throw KeyframePictureError.noPicture }
                packet.unref()
                let read = av_read_frame(format, packet.pointer)
                if read == FFmpegError.endOfFile.code || read == FFmpegError.invalidData.code {
                    ended = true
                    try decoder.sendPacket(nil)
                } else {
                    try FFmpegError.check(read)
                    if packet.streamIndex == Int(streamIndex) { try decoder.sendPacket(packet.pointer) }
                }
            }
        }
    }

    /// `frame` as full-range 4:2:0 (what JPEG means by YUV) at `width`×`height`.
    private static func fullRange(_ frame: Frame, width: Int, height: Int) throws -> Frame {
        let output = try Frame.video(width: width, height: height, pixelFormat: AV_PIX_FMT_YUVJ420P, timeBase: frame.timeBase)
        guard let scaler = sws_getContext(Int32(frame.width), Int32(frame.height), frame.pixelFormat,
                                          Int32(width), Int32(height), AV_PIX_FMT_YUVJ420P,
                                          SWS_BICUBIC, nil, nil, nil) else {
            throw CodecError.unexpectedFrame("libswscale cannot convert \(frame.width)x\(frame.height) "
                + "format \(frame.pixelFormat.rawValue) to \(width)x\(height) yuvj420p")
        }
        defer { sws_freeContext(scaler) }
        try FFmpegError.check(sws_scale_frame(scaler, output.pointer, frame.pointer))
        output.pointer.pointee.color_range = AVCOL_RANGE_JPEG
        return output
    }

    private static func encode(_ frame: Frame) throws -> [UInt8] {
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_MJPEG) else { throw CodecError.encoderNotFound(codec: "mjpeg") }
        let encoder = try CodecContext(codec: codec)
        encoder.pointer.pointee.width = Int32(frame.width)
        encoder.pointer.pointee.height = Int32(frame.height)
        encoder.pointer.pointee.pix_fmt = AV_PIX_FMT_YUVJ420P
        encoder.pointer.pointee.color_range = AVCOL_RANGE_JPEG
        encoder.pointer.pointee.time_base = AVRational(num: 1, den: 25)
        encoder.pointer.pointee.flags |= AV_CODEC_FLAG_QSCALE
        encoder.pointer.pointee.global_quality = FF_QP2LAMBDA * quantiserScale
        try encoder.open()
        frame.pts = 0
        frame.pointer.pointee.quality = FF_QP2LAMBDA * quantiserScale
        try encoder.sendFrame(frame.pointer)
        try encoder.sendFrame(nil)
        var packet = try Packet()
        var bytes: [UInt8] = []
        try encoder.receivePackets(into: &packet) { bytes += $0.bytes }
        guard !bytes.isEmpty else { throw KeyframePictureError.noPicture }
        return bytes
    }
}

/// Why no picture could be made from a segment.
public enum KeyframePictureError: Error, Equatable, CustomStringConvertible {
    /// libavformat could not read the init section and segment as MP4.
    case unreadable(FFmpegError)
    case noVideo
    case noDecoder(String)
    /// The segment held no picture the decoder could decode.
    case noPicture

    public var description: String {
        switch self {
        case .unreadable(let error): "the init section and segment cannot be read as MP4: \(error)"
        case .noVideo: "the stream has no video track"
        case .noDecoder(let codec): "this FFmpeg build has no \(codec) decoder"
        case .noPicture: "the segment holds no picture that decodes"
        }
    }
}

/// Bytes in memory read by libavformat through an `AVIOContext` (read and seek callbacks).
final class MemoryInput {
    private let bytes: [UInt8]
    private var position = 0
    /// libavformat reads through a buffer of this size.
    private static let bufferByteCount = 32_768

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// A new context reading these bytes; the caller frees its buffer and the context, and keeps
    /// `self` alive while it is used.
    func open() throws -> UnsafeMutablePointer<AVIOContext> {
        guard let buffer = av_malloc(Self.bufferByteCount) else { throw FFmpegError.outOfMemory }
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        guard let context = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), Int32(Self.bufferByteCount),
                                               0, opaque, Self.read, nil, Self.seek) else {
            var unused: UnsafeMutableRawPointer? = buffer
            av_freep(&unused)
            throw FFmpegError.outOfMemory
        }
        return context
    }

    private static let read: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 = {
        opaque, destination, capacity in
        let input = Unmanaged<MemoryInput>.fromOpaque(opaque!).takeUnretainedValue()
        let count = min(Int(capacity), input.bytes.count - input.position)
        guard count > 0, let destination else { return hlscap_averror_eof() }
        input.bytes.withUnsafeBufferPointer { source in
            destination.update(from: source.baseAddress! + input.position, count: count)
        }
        input.position += count
        return Int32(count)
    }

    private static let seek: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64 = { opaque, offset, whence in
        let input = Unmanaged<MemoryInput>.fromOpaque(opaque!).takeUnretainedValue()
        let target: Int
        switch whence & ~AVSEEK_FORCE {
        case AVSEEK_SIZE: return Int64(input.bytes.count)
        case SEEK_SET: target = Int(offset)
        case SEEK_CUR: target = input.position + Int(offset)
        case SEEK_END: target = input.bytes.count + Int(offset)
        default: return Int64(hlscap_averror(EINVAL))
        }
        guard (0...input.bytes.count).contains(target) else { return Int64(hlscap_averror(EINVAL)) }
        input.position = target
        return Int64(target)
    }
}
