import Foundation

/// The recording files that are kept, oldest first, with their total size: what retention works on.
///
/// Files join at the end as they are finished and leave from the front, so a pass looks at the files it
/// deletes and one more, never at the whole folder: a folder of 100,000 files costs no more per pass
/// than one of ten.
public struct RecordingIndex: Sendable, Equatable {
    public struct File: Sendable, Equatable {
        /// The file's path in the recording's store.
        public var path: String
        /// When its last frame was captured (for a file found at start, when it was last written).
        public var end: Date
        public var byteCount: Int64

        public init(path: String, end: Date, byteCount: Int64) {
            self.path = path
            self.end = end
            self.byteCount = byteCount
        }
    }

    private var files: [File] = []
    /// Files before this index have left; the storage is compacted once half of it has.
    private var start = 0
    public private(set) var totalBytes: Int64 = 0

    public init(_ files: [File] = []) {
        for file in files.sorted(by: { ($0.end, $0.path) < ($1.end, $1.path) }) { add(file) }
    }

    public var count: Int { files.count - start }
    public var oldest: File? { start < files.count ? files[start] : nil }
    public var all: ArraySlice<File> { files[start...] }

    /// A file that was finished: the newest.
    public mutating func add(_ file: File) {
        files.append(file)
        totalBytes += file.byteCount
    }

    /// A file that left otherwise (another rule deleted it): nil when it is not kept.
    public mutating func remove(path: String) -> File? {
        guard let index = files[start...].firstIndex(where: { $0.path == path }) else { return nil }
        if index == start { return removeOldest() }
        let file = files.remove(at: index)
        totalBytes -= file.byteCount
        return file
    }

    mutating func removeOldest() -> File {
        let file = files[start]
        start += 1
        totalBytes -= file.byteCount
        if start > files.count / 2 {
            files.removeFirst(start)
            start = 0
        }
        return file
    }
}

/// How long and how much of a recording is kept (`--keep 7d`, `--keep-size 50G`, `--min-free 2G`):
/// the oldest files go first, while any rule asks; the file being written is never in the index, so
/// never deleted.
public struct RecordingRetention: Sendable, Equatable {
    /// Files whose last frame is older than this go.
    public var keepSeconds: Int?
    /// While the files kept take more than this, the oldest go.
    public var keepBytes: Int64?
    /// While the disk has less free than this, the oldest go.
    public var minimumFreeBytes: Int64?

    public init(keepSeconds: Int? = nil, keepBytes: Int64? = nil, minimumFreeBytes: Int64? = nil) {
        self.keepSeconds = keepSeconds
        self.keepBytes = keepBytes
        self.minimumFreeBytes = minimumFreeBytes
    }

    public var isEmpty: Bool { keepSeconds == nil && keepBytes == nil && minimumFreeBytes == nil }

    /// Why a file was deleted.
    public enum Reason: String, Sendable, Equatable {
        case age = "older than --keep"
        case size = "over --keep-size"
        case freeSpace = "under --min-free"
    }

    public struct Deletion: Sendable, Equatable {
        public var file: RecordingIndex.File
        public var reason: Reason

        public init(file: RecordingIndex.File, reason: Reason) {
            self.file = file
            self.reason = reason
        }
    }

    /// Takes from `index` the files to delete at `now`, oldest first, with the disk's free bytes as they
    /// stand (nil when unknown); each deletion counts as freeing its bytes.
    public func deletions(from index: inout RecordingIndex, now: Date, freeBytes: Int64?) -> [Deletion] {
        var deletions: [Deletion] = []
        var free = freeBytes
        while let oldest = index.oldest {
            let reason: Reason
            if let keepSeconds, now.timeIntervalSince(oldest.end) > Double(keepSeconds) {
                reason = .age
            } else if let keepBytes, index.totalBytes > keepBytes {
                reason = .size
            } else if let minimumFreeBytes, let available = free, available < minimumFreeBytes {
                reason = .freeSpace
            } else {
                break
            }
            let file = index.removeOldest()
            free = free.map { $0 + file.byteCount }
            deletions.append(Deletion(file: file, reason: reason))
        }
        return deletions
    }
}
