import CFFmpeg
import Glibc

/// An owned demuxing `AVFormatContext` (`avformat_open_input` … `avformat_close_input`).
///
/// The first error the demuxer logs about this context is recorded (`recordedError`):
/// some demuxers report a truncated file only in their log and then return a plain end of
/// file, so a caller that must not mistake a damaged file for a complete one checks it.
public struct InputFormatContext: ~Copyable {
    let pointer: UnsafeMutablePointer<AVFormatContext>
    /// With a `CertificateTrust`: what opens the context's URLs, released when it closes.
    private let opener: Unmanaged<CertificateTrust.Opener>?

    public enum ReadResult: Equatable {
        case packet
        case endOfFile
        /// A non-blocking input has no packet ready yet.
        case tryAgain
    }

    /// Opens `url` with the demuxer named `formatName` (probed when `nil`) and demuxer or
    /// protocol `options`; an option that nothing accepts is an error, not silently ignored.
    /// `interrupt` lets another thread abort a blocking call; `nonBlocking` makes reads of
    /// devices return `.tryAgain` instead of waiting. With `trust`, the certificate of every https
    /// server it opens is verified.
    public init(url: String, formatName: String? = nil, options: [String: String] = [:],
                interrupt: AVIOInterruptCB? = nil, nonBlocking: Bool = false,
                trust: CertificateTrust? = nil) throws(FFmpegError) {
        FFmpegLog.installIfNeeded()
        var format: UnsafePointer<AVInputFormat>?
        if let formatName {
            guard let named = av_find_input_format(formatName) else {
                throw FFmpegError(code: hlscap_averror(EINVAL), loggedMessage: "unknown input format '\(formatName)'")
            }
            format = named
        }
        var dictionary: OpaquePointer?
        defer { av_dict_free(&dictionary) }
        for (key, value) in options {
            try FFmpegError.check(av_dict_set(&dictionary, key, value, 0))
        }

        guard let allocated = avformat_alloc_context() else { throw .outOfMemory }
        if let interrupt { allocated.pointee.interrupt_callback = interrupt }
        if nonBlocking { allocated.pointee.flags |= AVFMT_FLAG_NONBLOCK }
        let opener = trust.map { CertificateTrust.Opener($0).install(on: allocated) }
        // Record from the first call on, so that a failed open can say why.
        let address = UnsafeMutableRawPointer(allocated)
        FFmpegLog.startRecordingErrors(of: address)
        var context: UnsafeMutablePointer<AVFormatContext>? = allocated
        let result = avformat_open_input(&context, url, format, &dictionary)
        guard result >= 0, let opened = context else {
            // avformat_open_input has already freed the context.
            let logged = FFmpegLog.recordedError(of: address)
            FFmpegLog.stopRecordingErrors(of: address)
            opener?.release()
            throw FFmpegError(code: result, loggedMessage: logged)
        }
        if let unused = av_dict_get(dictionary, "", nil, AV_DICT_IGNORE_SUFFIX) {
            let key = String(cString: unused.pointee.key)
            FFmpegLog.stopRecordingErrors(of: address)
            avformat_close_input(&context)
            opener?.release()
            throw FFmpegError(code: hlscap_averror(EINVAL), loggedMessage: "option '\(key)' is not recognised")
        }
        self.pointer = opened
        self.opener = opener
    }

    deinit {
        FFmpegLog.stopRecordingErrors(of: UnsafeMutableRawPointer(pointer))
        var context: UnsafeMutablePointer<AVFormatContext>? = pointer
        avformat_close_input(&context)
        opener?.release()
    }

    /// Reads the first packets to fill in codec parameters the headers lack.
    public func findStreamInfo() throws(FFmpegError) {
        let result = avformat_find_stream_info(pointer, nil)
        guard result >= 0 else { throw FFmpegError(code: result, loggedMessage: recordedError) }
    }

    /// Reads the next packet into `packet`, replacing what it held.
    public func readFrame(into packet: inout Packet) throws(FFmpegError) -> ReadResult {
        packet.unref()
        let result = av_read_frame(pointer, packet.pointer)
        if result == FFmpegError.endOfFile.code { return .endOfFile }
        if result == FFmpegError.tryAgain.code { return .tryAgain }
        guard result >= 0 else { throw FFmpegError(code: result, loggedMessage: recordedError) }
        return .packet
    }

    /// The first error the demuxer logged about this input since it was opened.
    public var recordedError: String? { FFmpegLog.recordedError(of: UnsafeMutableRawPointer(pointer)) }

    /// The demuxer's short name, such as "mov,mp4,m4a,3gp,3g2,mj2" or "matroska,webm".
    public var formatName: String { String(cString: pointer.pointee.iformat.pointee.name) }

    public var streamCount: Int { Int(pointer.pointee.nb_streams) }

    /// The container's duration, when it states one.
    public var durationSeconds: Double? {
        let duration = pointer.pointee.duration
        guard duration != hlscap_nopts_value(), duration > 0 else { return nil }
        return Double(duration) / Double(AV_TIME_BASE)
    }

    func stream(at index: Int) -> UnsafeMutablePointer<AVStream> {
        precondition(index >= 0 && index < streamCount, "stream index \(index) out of range")
        return pointer.pointee.streams[index]!
    }

    /// The index of the stream of `type` FFmpeg would pick, preferring one in the same
    /// program as `relatedStream`; `nil` when the input has none.
    func bestStream(of type: AVMediaType, relatedTo relatedStream: Int? = nil) -> Int? {
        let index = av_find_best_stream(pointer, type, -1, Int32(relatedStream ?? -1), nil, 0)
        return index >= 0 ? Int(index) : nil
    }

    /// Tells the demuxer to skip every stream not in `kept`, so they cost no reading or memory.
    public func discardStreams(except kept: [Int]) {
        for index in 0..<streamCount where !kept.contains(index) {
            stream(at: index).pointee.discard = AVDISCARD_ALL
        }
    }
}
