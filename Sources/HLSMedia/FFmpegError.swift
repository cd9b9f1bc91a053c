import CFFmpeg

/// An error code returned by an FFmpeg call, with the library's own text for it.
public struct FFmpegError: Error, Equatable, CustomStringConvertible {
    public let code: Int32

    public init(code: Int32) { self.code = code }

    public var description: String {
        var buffer = [CChar](repeating: 0, count: 256)
        av_strerror(code, &buffer, buffer.count)
        return String(cString: buffer)
    }

    public static let endOfFile = FFmpegError(code: hlscap_averror_eof())
    public static let tryAgain = FFmpegError(code: hlscap_averror_eagain())
    public static let invalidData = FFmpegError(code: hlscap_averror_invaliddata())
}
