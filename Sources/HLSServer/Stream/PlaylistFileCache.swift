import Glibc
import Synchronization

/// The last bytes read of each playlist file, and their gzip, kept while the file stays the same
/// (same inode, size and modification time, the fields its ETag is made of): a playlist asked for
/// thousands of times a second between two rewrites is read and compressed once.
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

    /// A playlist's bytes as sent: gzipped, or as stored when the client does not take gzip or
    /// zlib failed.
    struct Body {
        var bytes: [UInt8]
        var gzipped: Bool
    }

    private struct Entry {
        var version: Version
        var plain: [UInt8]
        /// nil until a client takes gzip; empty when zlib failed.
        var gzipped: [UInt8]?
    }

    /// Files kept at once; a stream has a few playlists, one per rendition.
    private static let entryLimit = 64
    private let entries = Mutex<[String: Entry]>([:])

    init() {}

    /// The playlist at `path` in the version `version` names, read (and compressed) only when the
    /// one kept is another; nil when it cannot be read.
    func body(path: String, version: Version, gzip: Bool) -> Body? {
        let kept = entries.withLock { entries -> Body? in
            guard let entry = entries[path], entry.version == version else { return nil }
            guard gzip else { return Body(bytes: entry.plain, gzipped: false) }
            guard let gzipped = entry.gzipped else { return nil }
            return gzipped.isEmpty ? Body(bytes: entry.plain, gzipped: false) : Body(bytes: gzipped, gzipped: true)
        }
        if let kept { return kept }
        guard let (plain, read) = Self.read(path) else { return nil }
        let gzipped = gzip ? Gzip.compress(plain) ?? [] : nil
        // Kept only when it is the version asked for: a file replaced meanwhile is sent, not kept.
        if read == version {
            entries.withLock { entries in
                if entries.count >= Self.entryLimit && entries[path] == nil { entries.removeAll() }
                let earlier = entries[path].flatMap { $0.version == version ? $0.gzipped : nil }
                entries[path] = Entry(version: version, plain: plain, gzipped: gzipped ?? earlier)
            }
        }
        guard let gzipped, !gzipped.isEmpty else { return Body(bytes: plain, gzipped: false) }
        return Body(bytes: gzipped, gzipped: true)
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
