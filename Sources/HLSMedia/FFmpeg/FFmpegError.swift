import CFFmpeg
import Glibc

/// An error code returned by an FFmpeg call, with the library's own text for it.
public struct FFmpegError: Error, Equatable, CustomStringConvertible {
    public let code: Int32
    /// The error the library logged while failing, when it said more than the code does
    /// (for example "moov atom not found" behind "Invalid data found when processing input").
    public let loggedMessage: String?

    public init(code: Int32, loggedMessage: String? = nil) {
        self.code = code
        self.loggedMessage = loggedMessage
    }

    /// The `av_strerror` text for `code`.
    public var text: String {
        var buffer = [CChar](repeating: 0, count: Int(AV_ERROR_MAX_STRING_SIZE))
        av_strerror(code, &buffer, buffer.count)
        return String(nulTerminated: buffer)
    }

    public var description: String {
        guard let loggedMessage, loggedMessage != text else { return text }
        return "\(text) (\(loggedMessage))"
    }

    /// Two errors are the same failure when their codes are; the logged message is detail.
    public static func == (lhs: FFmpegError, rhs: FFmpegError) -> Bool { lhs.code == rhs.code }

    public static let endOfFile = FFmpegError(code: hlscap_averror_eof())
    public static let tryAgain = FFmpegError(code: hlscap_averror_eagain())
    public static let invalidData = FFmpegError(code: hlscap_averror_invaliddata())
    public static let outOfMemory = FFmpegError(code: hlscap_averror(ENOMEM))
    public static let streamNotFound = FFmpegError(code: hlscap_averror_stream_not_found())

    /// Returns a non-negative result unchanged and throws a negative one.
    @discardableResult
    static func check(_ result: Int32) throws(FFmpegError) -> Int32 {
        guard result >= 0 else { throw FFmpegError(code: result) }
        return result
    }
}

extension String {
    /// The text of a C character buffer up to its first NUL (or its end), as UTF-8.
    public init(nulTerminated buffer: [CChar]) {
        self.init(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
