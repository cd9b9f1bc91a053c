import Glibc
import Synchronization

/// The last bytes read of each playlist file, their gzip and the headers of both answers, kept while
/// the file stays the same (same inode, size and modification time, the fields its ETag and
/// Last-Modified are made of): a playlist asked for thousands of times a second between two rewrites
/// is read, compressed and given its headers once.
final class PlaylistFileCache: Sendable {
    /// What identifies one version of a file.
    struct Version: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int
        var seconds: Int
        var nanoseconds: Int

        init(_ status: stat) {
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
            size = Int(status.st_size)
            seconds = Int(status.st_mtim.tv_sec)
            nanoseconds = Int(status.st_mtim.tv_nsec)
        }
    }

    /// A playlist's answer as sent: its bytes, gzipped or as stored (the client does not take gzip,
    /// or zlib failed), and the headers that go with them.
    struct Answer {
        var headers: [(name: String, value: String)]
        var bytes: [UInt8]
    }

    private struct Entry {
        var version: Version
        var plain: Answer
        /// nil until a client takes gzip; the plain answer when zlib failed.
        var gzipped: Answer?
    }

    /// Files kept at once; a stream has a few playlists, one per rendition.
    private static let entryLimit = 64
    private let entries = Mutex<[String: Entry]>([:])

    init() {}

    /// The answer for the playlist at `path` in the version `version` names, read, compressed and given
    /// its headers (`headers`, told whether the bytes are gzipped) only when the one kept is another;
    /// nil when it cannot be read.
    func answer(path: String, version: Version, gzip: Bool,
                headers: (_ gzipped: Bool) -> [(name: String, value: String)]) -> Answer? {
        let kept = entries.withLock { entries -> Answer? in
            guard let entry = entries[path], entry.version == version else { return nil }
            return gzip ? entry.gzipped : entry.plain
        }
        if let kept { return kept }
        guard let (bytes, read) = Self.read(path) else { return nil }
        let plain = Answer(headers: headers(false), bytes: bytes)
        let gzipped = gzip ? Gzip.compress(bytes).map { Answer(headers: headers(true), bytes: $0) } ?? plain : nil
        // Kept only when it is the version asked for: a file replaced meanwhile is sent, not kept.
        if read == version {
            entries.withLock { entries in
                if entries.count >= Self.entryLimit && entries[path] == nil { entries.removeAll() }
                let earlier = entries[path].flatMap { $0.version == version ? $0.gzipped : nil }
                entries[path] = Entry(version: version, plain: plain, gzipped: gzipped ?? earlier)
            }
        }
        return gzipped ?? plain
    }

    /// The file's bytes and the version they are of (nil when it changed size while read).
    private static func read(_ path: String) -> ([UInt8], Version?)? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + count, $0.count - count, off_t(count)) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            count += got
        }
        // A file that shrank while read is sent as far as it went, and not kept.
        guard count == bytes.count else { return (Array(bytes.prefix(count)), nil) }
        return (bytes, Version(status))
    }
}
