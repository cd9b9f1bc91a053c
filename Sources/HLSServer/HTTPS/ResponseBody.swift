import Glibc

/// The bytes of a response body, read in pieces as the connection can take them: from memory, or by
/// `pread` from a file opened when the response is made (a file that cannot be opened is a 404, as
/// with `HTTPServer`). Owns the descriptor.
final class ResponseBody {
    private enum Source {
        case bytes([UInt8])
        case file(Int32)
    }

    private let source: Source
    private let startOffset: Int
    let length: Int
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
        }
    }

    deinit {
        if case .file(let descriptor) = source { close(descriptor) }
    }

    var isFinished: Bool { sentCount == length }

    /// Copies the next bytes into `buffer`; how many (0 once all are sent), or nil when the file ended
    /// early or cannot be read.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let wanted = min(buffer.count, length - sentCount)
        guard wanted > 0, let base = buffer.baseAddress else { return 0 }
        switch source {
        case .bytes(let bytes):
            bytes.withUnsafeBytes { all in
                base.copyMemory(from: all.baseAddress! + sentCount, byteCount: wanted)
            }
            sentCount += wanted
            return wanted
        case .file(let descriptor):
            var count: Int
            repeat {
                count = pread(descriptor, base, wanted, off_t(startOffset + sentCount))
            } while count < 0 && errno == EINTR
            guard count > 0 else { return nil }
            sentCount += count
            return count
        }
    }
}

extension HTTPResponse {
    /// Whether the status may carry a body at all (RFC 9110 6.4.1).
    var statusAllowsBody: Bool { !(100..<200).contains(status) && status != 204 && status != 304 }
}
