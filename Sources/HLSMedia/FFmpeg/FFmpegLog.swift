import CFFmpeg
import Glibc
import HLSBase
import HLSKit

/// FFmpeg's own console logging, silent by default.
///
/// hlscap reports every failure itself, so FFmpeg printing the same error again (with its
/// `[mov,mp4 @ 0x…]` prefix) would only add noise. Raise `level` to see the library's
/// messages while debugging. Errors a demuxer logs about its own format context are also
/// recorded, because some demuxers report a truncated file only that way and then return
/// an ordinary end of file (see `InputFormatContext.recordedError`).
public enum FFmpegLog {
    public enum Level: Int32, Sendable, CaseIterable {
        case quiet, panic, fatal, error, warning, info, verbose, debug

        var rawLevel: Int32 {
            switch self {
            case .quiet: AV_LOG_QUIET
            case .panic: AV_LOG_PANIC
            case .fatal: AV_LOG_FATAL
            case .error: AV_LOG_ERROR
            case .warning: AV_LOG_WARNING
            case .info: AV_LOG_INFO
            case .verbose: AV_LOG_VERBOSE
            case .debug: AV_LOG_DEBUG
            }
        }
    }

    /// The most verbose level FFmpeg prints to standard error.
    public static var level: Level {
        get {
            installIfNeeded()
            let raw = av_log_get_level()
            return Level.allCases.last { $0.rawLevel <= raw } ?? .quiet
        }
        set {
            installIfNeeded()
            av_log_set_level(newValue.rawLevel)
        }
    }

    /// Routes FFmpeg's messages through hlscap and silences them; runs once per process.
    /// Every wrapper that makes FFmpeg calls which may log calls this first.
    static func installIfNeeded() { _ = installation }

    private static let installation: Void = {
        av_log_set_level(AV_LOG_QUIET)
        av_log_set_callback(routeMessage)
    }()

    // MARK: Recording errors per format context

    /// Starts keeping the first error that FFmpeg logs about `context`.
    static func startRecordingErrors(of context: UnsafeMutableRawPointer) {
        recordings.withLock { $0[address(context)] = Recording() }
    }

    /// Stops recording for `context` and forgets what was recorded.
    static func stopRecordingErrors(of context: UnsafeMutableRawPointer) {
        recordings.withLock { _ = $0.removeValue(forKey: address(context)) }
    }

    /// The first error logged about `context` since recording started, if any.
    static func recordedError(of context: UnsafeMutableRawPointer) -> String? {
        recordings.withLock { $0[address(context)]?.firstError }
    }

    private struct Recording {
        var firstError: String?
    }

    /// While `body` runs, errors that TLS logs on this thread count as `context`'s too: a refused
    /// certificate is only logged (about the TLS protocol's own context), its code a plain I/O error.
    static func attributingErrors<Result>(to context: UnsafeMutableRawPointer, _ body: () -> Result) -> Result {
        let previous = pthread_getspecific(attributionKey)
        pthread_setspecific(attributionKey, context)
        defer { pthread_setspecific(attributionKey, previous) }
        return body()
    }

    /// The format context whose open is under way on this thread, if any.
    fileprivate static let attributionKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key left")
        return key
    }()

    fileprivate static var attributedContext: UnsafeMutableRawPointer? { pthread_getspecific(attributionKey) }

    /// The name FFmpeg gives a logging context in its `[name @ 0x…]` prefix (a protocol's context: the
    /// protocol's name); every context FFmpeg logs about starts with its `AVClass`.
    fileprivate static func itemName(of context: UnsafeMutableRawPointer) -> String? {
        guard let logClass = context.load(as: UnsafePointer<AVClass>?.self),
              let name = logClass.pointee.item_name?(context) else { return nil }
        return String(cString: name)
    }

    /// Keyed by the address of the context the messages are about: an integer, so the table is Sendable.
    private static let recordings = Locked<[UInt: Recording]>([:])

    private static func address(_ context: UnsafeMutableRawPointer) -> UInt {
        UInt(bitPattern: context)
    }

    /// Long enough for any single FFmpeg log line.
    private static let messageCapacity = 1024

    fileprivate static func recordError(
        about context: UnsafeMutableRawPointer, _ format: UnsafePointer<CChar>, _ arguments: CVaListPointer
    ) {
        let key = address(context)
        guard recordings.withLock({ $0[key] != nil && $0[key]?.firstError == nil }) else { return }
        var buffer = [CChar](repeating: 0, count: messageCapacity)
        hlscap_format_log_message(&buffer, buffer.count, format, arguments)
        let message = String(nulTerminated: buffer).trimmingTrailingNewlines()
        recordings.withLock { recordings in
            if recordings[key] != nil, recordings[key]?.firstError == nil { recordings[key]?.firstError = message }
        }
    }
}

private func routeMessage(
    _ context: UnsafeMutableRawPointer?, _ level: Int32, _ format: UnsafePointer<CChar>?,
    _ arguments: CVaListPointer?
) {
    // av_vlog always passes its va_list; the optional only reflects the imported type.
    guard let arguments else { return }
    if level <= AV_LOG_ERROR, let format {
        if let context { FFmpegLog.recordError(about: context, format, arguments) }
        if let attributed = FFmpegLog.attributedContext, let context, FFmpegLog.itemName(of: context) == "tls" {
            FFmpegLog.recordError(about: attributed, format, arguments)
        }
    }
    av_log_default_callback(context, level, format, arguments)
}

extension String {
    fileprivate func trimmingTrailingNewlines() -> String {
        var trimmed = Substring(self)
        while trimmed.last?.isNewline == true { trimmed.removeLast() }
        return String(trimmed)
    }
}
