import CFFmpeg

/// Decodes one stream of a `FileDemuxer` into frames. Use from one thread at a time.
///
/// Feed packets with `send(_:)` and, after each, call `receive()` until it returns
/// `.needsInput`; at the end of the file call `sendEndOfStream()` and receive until
/// `.endOfStream`. Frames carry the stream's time base, and the decoder's best guess of
/// each frame's presentation time as `pts`.
public final class Decoder {
    public enum DecodeResult {
        case frame(Frame)
        case needsInput
        case endOfStream
    }

    /// The stream as the demuxer describes it.
    public let stream: InputStreamInfo
    /// The file the stream comes from, named in errors.
    public let path: String
    private let context: CodecContext
    private var packet: Packet

    /// Frame threads and slice threads, as many as FFmpeg thinks the machine has cores for.
    private static let automaticThreadCount: Int32 = 0

    /// Opens a decoder for the stream at `streamIndex` in `demuxer.streams`. A stream whose
    /// configuration (such as a damaged avcC or SPS) the decoder refuses throws `MediaInputError`.
    public init(demuxer: FileDemuxer, streamIndex: Int) throws {
        stream = demuxer.streams[streamIndex]
        path = demuxer.path
        let parameters = demuxer.codecParameters(ofStream: streamIndex)
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw CodecError.decoderNotFound(codec: stream.codecName, path: demuxer.path)
        }
        context = try CodecContext(codec: codec)
        do {
            try FFmpegError.check(avcodec_parameters_to_context(context.pointer, parameters))
            let timeBase = stream.timeBase
            // Lets the decoder interpret packet timestamps and durations (best_effort_timestamp, skip samples).
            context.pointer.pointee.pkt_timebase = AVRational(num: timeBase.numerator, den: timeBase.denominator)
            context.pointer.pointee.thread_count = Self.automaticThreadCount
            context.pointer.pointee.thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE
            try context.open()
        } catch where error != .outOfMemory {
            throw Self.undecodable(stream, path: path, error)
        }
        packet = try Packet()
    }

    /// Sends one compressed packet. A packet whose data the decoder rejects as invalid throws
    /// `CodecError.corruptPacket`; decoding can continue with the next one. A decoder that cannot
    /// go on with this stream throws `MediaInputError`.
    public func send(_ demuxed: DemuxedPacket) throws {
        try packet.fill(from: demuxed)
        defer { packet.unref() }
        do {
            try context.sendPacket(packet.pointer)
        } catch where error == .invalidData {
            throw CodecError.corruptPacket(error)
        } catch where error != .outOfMemory {
            throw Self.undecodable(stream, path: path, error)
        }
    }

    /// Tells the decoder no more packets come, so that it gives up the frames it holds back.
    public func sendEndOfStream() throws {
        do {
            try context.sendPacket(nil)
        } catch where error != .outOfMemory {
            throw Self.undecodable(stream, path: path, error)
        }
    }

    /// The next decoded frame, if one is ready. Damaged data found while decoding throws
    /// `CodecError.corruptPacket`; receiving can continue afterwards. A decoder that cannot go on
    /// with this stream throws `MediaInputError`.
    public func receive() throws -> DecodeResult {
        let frame = try Frame(timeBase: stream.timeBase)
        let result: CodecContext.ReceiveResult
        do {
            result = try context.receiveFrame(into: frame.pointer)
        } catch where error == .invalidData {
            throw CodecError.corruptPacket(error)
        } catch where error != .outOfMemory {
            throw Self.undecodable(stream, path: path, error)
        }
        switch result {
        case .needsInput: return .needsInput
        case .endOfStream: return .endOfStream
        case .output:
            frame.pts = frame.pointer.pointee.best_effort_timestamp == hlscap_nopts_value()
                ? nil : frame.pointer.pointee.best_effort_timestamp
            return .frame(frame)
        }
    }
}

extension Decoder {
    /// The decoder gave up on the stream itself (its configuration, or a feature FFmpeg lacks): the
    /// file's data is at fault, not the machine.
    static func undecodable(_ stream: InputStreamInfo, path: String, _ error: FFmpegError) -> MediaInputError {
        MediaInputError(kind: .corrupt, path: path,
                        detail: "its \(stream.codecName) stream cannot be decoded: \(error)")
    }
}
