import Glibc

/// The bytes of a response body, read in pieces as the connection can take them: from memory, by
/// `pread` from a file opened when the response is made (a file that cannot be opened is a 404, as
/// with `HTTPServer`), or from a body still growing. Owns the descriptor, and the wake-up a growing
/// body calls.
final class ResponseBody {
    private enum Source {
        case bytes([UInt8])
        case file(Int32)
        case growing(GrowingBody, watch: Int?)
    }

    /// What the next read gave.
    enum Piece: Equatable {
        /// This many bytes were copied.
        case bytes(Int)
        /// A growing body has no new byte yet; its wake-up comes when it has.
        case waiting
        /// Every byte is sent.
        case end
        /// The file ended early or cannot be read, or the growing body was abandoned: the response
        /// cannot be finished.
        case failed
    }

    private var source: Source
    private let startOffset: Int
    /// nil for a growing body.
    let length: Int?
    private(set) var sentCount = 0

    /// nil when the file cannot be opened.
    init?(_ body: HTTPResponse.Body) {
        switch body {
        case .bytes(let bytes):
            source = .bytes(bytes)
            startOffset = 0
            length = bytes.count
        case .file(let path, let offset, let length):
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            source = .file(descriptor)
            startOffset = offset
            self.length = max(0, length)
        case .growing(let growing):
            source = .growing(growing, watch: nil)
            startOffset = 0
            length = nil
        }
    }

    deinit {
        switch source {
        case .file(let descriptor): close(descriptor)
        case .growing(let growing, let watch?): growing.unwatch(watch)
        default: break
        }
    }

    var isGrowing: Bool {
        if case .growing = source { return true }
        return false
    }

    /// Has a growing body call `wake` (on the producing thread) whenever it grows or ends; call once,
    /// before the first read. Nothing for other bodies.
    func watch(_ wake: @escaping @Sendable () -> Void) {
        guard case .growing(let growing, nil) = source else { return }
        source = .growing(growing, watch: growing.watch(wake))
    }

    var isFinished: Bool {
        switch source {
        case .growing(let growing, _): growing.isWhole(at: sentCount)
        default: sentCount == length
        }
    }

    /// The bytes still to send of a body whose bytes are all there (a file, bytes); nil for a growing body.
    var unsentCount: Int? {
        if case .growing = source { return nil }
        return (length ?? 0) - sentCount
    }

    /// Whether bytes already made wait to be sent (a growing body waiting on its producer has none).
    var hasBytesToSend: Bool {
        switch source {
        case .growing(let growing, _): growing.count > sentCount
        default: sentCount < length ?? 0
        }
    }

    /// Copies the next bytes into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Piece {
        let wanted = min(buffer.count, (length ?? 0) - sentCount)
        switch source {
        case .growing(let growing, _):
            switch growing.read(from: sentCount, into: buffer) {
            case .bytes(let count):
                sentCount += count
                return .bytes(count)
            case .waiting: return .waiting
            case .finished: return .end
            case .abandoned: return .failed
            }
        case .bytes(let bytes):
            guard wanted > 0, let base = buffer.baseAddress else { return .end }
            bytes.withUnsafeBytes { all in
                base.copyMemory(from: all.baseAddress! + sentCount, byteCount: wanted)
            }
            sentCount += wanted
            return .bytes(wanted)
        case .file(let descriptor):
            guard wanted > 0, let base = buffer.baseAddress else { return .end }
            var count: Int
            repeat {
                count = pread(descriptor, base, wanted, off_t(startOffset + sentCount))
            } while count < 0 && errno == EINTR
            guard count > 0 else { return .failed }
            sentCount += count
            return .bytes(count)
        }
    }
}

extension HTTPResponse {
    /// Whether the status may carry a body at all (RFC 9110 6.4.1).
    var statusAllowsBody: Bool { !(100..<200).contains(status) && status != 204 && status != 304 }
}
