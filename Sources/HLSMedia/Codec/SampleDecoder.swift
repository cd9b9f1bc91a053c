import CFFmpeg
import HLSKit

/// Decodes the samples of a copied H.264 or HEVC track (length-prefixed NAL units, the `avcC` or `hvcC`
/// record as the decoder's configuration): the pictures a ladder's lower rungs are scaled from while the
/// top rung is the source's own stream. Use from one thread at a time.
///
/// One decoding thread, so a picture comes out as soon as its sample is in (frame threads would hold a
/// picture back per thread); frames carry the track's timescale, `pts` its presentation time.
public final class SampleDecoder {
    public let track: TrackDescription
    private let context: CodecContext
    private let packet: Packet

    public init(track: TrackDescription) throws {
        self.track = track
        let (codecID, record): (AVCodecID, [UInt8]) = switch track.format {
        case .h264(let format): (AV_CODEC_ID_H264, format.decoderConfiguration.serialized)
        case .hevc(let format): (AV_CODEC_ID_HEVC, format.decoderConfiguration.serialized)
        case .aac: preconditionFailure("a sample decoder decodes video")
        }
        guard let codec = avcodec_find_decoder(codecID) else {
            throw CodecError.decoderNotFound(codec: String(cString: avcodec_get_name(codecID)), path: "the copied video")
        }
        context = try CodecContext(codec: codec)
        // libavcodec reads extradata with padding after it, and frees it with the context.
        guard let extradata = av_mallocz(record.count + Int(AV_INPUT_BUFFER_PADDING_SIZE)) else { throw FFmpegError.outOfMemory }
        record.withUnsafeBytes { extradata.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        context.pointer.pointee.extradata = extradata.assumingMemoryBound(to: UInt8.self)
        context.pointer.pointee.extradata_size = Int32(record.count)
        context.pointer.pointee.pkt_timebase = AVRational(num: 1, den: Int32(track.timescale.ticksPerSecond))
        context.pointer.pointee.thread_count = 1
        try context.open()
        packet = try Packet()
    }

    /// The pictures `sample` completes, in presentation order; a sample the decoder rejects as damaged
    /// gives none, and decoding goes on with the next.
    public func decode(_ sample: EncodedSample) throws -> [Frame] {
        let pointer = packet.pointer
        av_packet_unref(pointer)
        defer { av_packet_unref(pointer) }
        try FFmpegError.check(av_new_packet(pointer, Int32(sample.data.count)))
        if let data = pointer.pointee.data {
            sample.data.withUnsafeBufferPointer { data.update(from: $0.baseAddress!, count: $0.count) }
        }
        pointer.pointee.dts = sample.decodeTime
        pointer.pointee.pts = sample.presentationTime
        pointer.pointee.duration = sample.durationHint ?? 0
        pointer.pointee.flags = sample.isSync ? AV_PKT_FLAG_KEY : 0
        let sent = avcodec_send_packet(context.pointer, pointer)
        guard sent != FFmpegError.invalidData.code else { return [] }
        try FFmpegError.check(sent)
        return try receiveAll()
    }

    /// The pictures the decoder still holds, at the end of the stream.
    public func flush() throws -> [Frame] {
        try context.sendPacket(nil)
        return try receiveAll()
    }

    private func receiveAll() throws -> [Frame] {
        var frames: [Frame] = []
        while true {
            let frame = try Frame(timeBase: Rational(1, Int32(track.timescale.ticksPerSecond)))
            let received = avcodec_receive_frame(context.pointer, frame.pointer)
            // Damaged data is skipped, as a player would; the next picture decodes.
            if received == FFmpegError.invalidData.code { continue }
            if received == FFmpegError.tryAgain.code || received == FFmpegError.endOfFile.code { return frames }
            try FFmpegError.check(received)
            let pts = frame.pointer.pointee.best_effort_timestamp
            guard pts != hlscap_nopts_value() else { continue }
            frame.pts = pts
            frames.append(frame)
        }
    }
}
