import CFFmpeg

/// An owned `AVCodecContext` (`avcodec_alloc_context3` … `avcodec_free_context`) and the
/// send/receive calls that decoders and encoders share.
struct CodecContext: ~Copyable {
    let pointer: UnsafeMutablePointer<AVCodecContext>

    /// What a receive call produced.
    enum ReceiveResult: Equatable {
        /// The frame or packet passed in now holds output.
        case output
        /// Nothing more until more input is sent.
        case needsInput
        /// Everything has been drained after the end of input.
        case endOfStream
    }

    init(codec: UnsafePointer<AVCodec>) throws(FFmpegError) {
        FFmpegLog.installIfNeeded()
        guard let pointer = avcodec_alloc_context3(codec) else { throw .outOfMemory }
        self.pointer = pointer
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = pointer
        avcodec_free_context(&context)
    }

    /// Opens the codec; `options` go to the codec's private options (an unknown one is an error).
    func open(options: [String: String] = [:]) throws(FFmpegError) {
        var dictionary: OpaquePointer?
        defer { av_dict_free(&dictionary) }
        for (key, value) in options {
            try FFmpegError.check(av_dict_set(&dictionary, key, value, 0))
        }
        try FFmpegError.check(avcodec_open2(pointer, pointer.pointee.codec, &dictionary))
        if let unused = av_dict_get(dictionary, "", nil, AV_DICT_IGNORE_SUFFIX) {
            let key = String(cString: unused.pointee.key)
            throw FFmpegError(code: hlscap_averror(EINVAL), loggedMessage: "option '\(key)' is not recognised")
        }
    }

    /// Sends a packet to a decoder; `nil` starts draining.
    func sendPacket(_ packet: UnsafeMutablePointer<AVPacket>?) throws(FFmpegError) {
        try FFmpegError.check(avcodec_send_packet(pointer, packet))
    }

    func receiveFrame(into frame: UnsafeMutablePointer<AVFrame>) throws(FFmpegError) -> ReceiveResult {
        try Self.receiveResult(avcodec_receive_frame(pointer, frame))
    }

    /// Sends a frame to an encoder; `nil` starts draining.
    func sendFrame(_ frame: UnsafeMutablePointer<AVFrame>?) throws(FFmpegError) {
        try FFmpegError.check(avcodec_send_frame(pointer, frame))
    }

    func receivePacket(into packet: UnsafeMutablePointer<AVPacket>) throws(FFmpegError) -> ReceiveResult {
        try Self.receiveResult(avcodec_receive_packet(pointer, packet))
    }

    /// Every packet the encoder has ready, each handed to `body` and then released.
    func receivePackets(into packet: inout Packet, _ body: (borrowing Packet) throws -> Void) throws {
        while try receivePacket(into: packet.pointer) == .output {
            defer { packet.unref() }
            try body(packet)
        }
    }

    /// The codec's global header (`extradata`): SPS/PPS, the AudioSpecificConfig …
    var extradata: [UInt8] {
        guard let data = pointer.pointee.extradata, pointer.pointee.extradata_size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(pointer.pointee.extradata_size)))
    }

    private static func receiveResult(_ result: Int32) throws(FFmpegError) -> ReceiveResult {
        switch result {
        case FFmpegError.tryAgain.code: return .needsInput
        case FFmpegError.endOfFile.code: return .endOfStream
        default:
            try FFmpegError.check(result)
            return .output
        }
    }
}
