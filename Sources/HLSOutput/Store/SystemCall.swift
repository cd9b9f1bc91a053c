import Glibc
import HLSKit

/// The errno of a failed system call.
struct Errno: Error, Equatable {
    var rawValue: Int32

    /// The errno the calling thread's last failed call left.
    static var current: Errno { Errno(rawValue: errno) }
}

enum SystemCall {
    private static let failure = -1

    /// Runs a call that returns -1 and sets errno on failure, again whenever a signal interrupted it.
    @discardableResult
    static func retryingInterrupts<Result: BinaryInteger>(_ call: () -> Result) throws(Errno) -> Result {
        while true {
            let result = call()
            guard result == failure else { return result }
            let error = Errno.current
            guard error.rawValue == EINTR else { throw error }
        }
    }
}

/// An open file descriptor with one owner; it is closed exactly once.
struct FileDescriptor: ~Copyable {
    private static let readChunkBytes = 64 * 1024

    private let rawValue: Int32

    private init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    static func open(_ path: String, flags: Int32, mode: mode_t = 0) throws(Errno) -> FileDescriptor {
        let rawValue = try SystemCall.retryingInterrupts { Glibc.open(path, flags | O_CLOEXEC, mode) }
        return FileDescriptor(rawValue: rawValue)
    }

    /// Writes every byte; `write` may store fewer bytes than asked, so it continues where it stopped.
    func writeAll(_ bytes: [UInt8]) throws(Errno) {
        // The closure returns a `Result` because `withUnsafeBytes` does not forward typed throws.
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(Errno) in
                var offset = 0
                while offset < buffer.count {
                    let remaining = UnsafeRawBufferPointer(rebasing: buffer[offset...])
                    offset += try SystemCall.retryingInterrupts {
                        Glibc.write(rawValue, remaining.baseAddress, remaining.count)
                    }
                }
            }
        }.get()
    }

    func readAll() throws(Errno) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: Self.readChunkBytes)
        while true {
            let count = try chunk.withUnsafeMutableBytes { buffer in
                Result { () throws(Errno) in
                    try SystemCall.retryingInterrupts { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
                }
            }.get()
            if count == 0 {
                return bytes
            }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    /// `fstat`: what the descriptor refers to.
    func status() throws(Errno) -> stat {
        var status = stat()
        try SystemCall.retryingInterrupts { fstat(rawValue, &status) }
        return status
    }

    func sync() throws(Errno) {
        try SystemCall.retryingInterrupts { fsync(rawValue) }
    }

    /// Asks the kernel to start writing the file's pages out now, without waiting for it: a later
    /// `syncfs` then finds little left to do.
    func startWriteback() {
        _ = posix_fadvise(rawValue, 0, 0, POSIX_FADV_DONTNEED)
    }

    /// Flushes the whole filesystem this descriptor is on (`syncfs`).
    func syncFilesystem() throws(Errno) {
        try SystemCall.retryingInterrupts { Self.syncfs(rawValue) }
    }

    /// glibc's `syncfs`, which Swift's Glibc module leaves out (it is declared only for _GNU_SOURCE);
    /// without it, `sync` flushes every filesystem.
    private static let syncfs: @convention(c) (Int32) -> Int32 = {
        guard let symbol = dlsym(nil, "syncfs") else { return { _ in Glibc.sync(); return 0 } }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Int32).self)
    }()

    /// Not retried on EINTR: Linux releases the descriptor even then, and a retry could close
    /// a descriptor another thread has just opened.
    consuming func close() throws(Errno) {
        let rawValue = self.rawValue
        discard self
        if Glibc.close(rawValue) == -1, errno != EINTR {
            throw Errno.current
        }
    }

    deinit {
        _ = Glibc.close(rawValue)
    }
}
