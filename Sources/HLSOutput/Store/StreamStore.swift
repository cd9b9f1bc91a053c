import Foundation

/// When a write must be on stable storage.
public enum Durability: Sendable {
    /// Before `write` returns: the file and its directory entry are `fsync`ed.
    case immediate
    /// By the next `synchronize()`: for files that nothing refers to until then, such as the
    /// segments of a recording before its playlist.
    case deferred
}

/// Where a stream's files go: a directory on disk, memory in tests, an object store. Paths are relative
/// to the store (`seg/000001.m4s`, `720p/playlist.m3u8`); the writers, the publisher and the recorder
/// reach their files through nothing else.
///
/// A write replaces the whole file at once: a reader sees the previous complete file or the new one,
/// never a part. Writes to the same path must not run concurrently; writes to different paths may.
public protocol StreamStore: Sendable {
    /// Where the files are, for messages: a directory's path.
    var location: String { get }

    /// Stores `bytes` under `path`, replacing what was there.
    func write(_ bytes: [UInt8], to path: String, durability: Durability) throws(StoreError)

    /// Adds `bytes` at the end of the file at `path`, which must exist: a recording that grows
    /// fragment by fragment. After a crash the file holds every append made durable.
    func append(_ bytes: [UInt8], to path: String, durability: Durability) throws(StoreError)

    func read(_ path: String) throws(StoreError) -> [UInt8]

    /// Removes the file; a file that does not exist is already removed.
    func remove(_ path: String) throws(StoreError)

    /// The names in a directory (`""` is the top), sorted; a directory that does not exist holds none.
    func list(_ directory: String) throws(StoreError) -> [String]

    func exists(_ path: String) throws(StoreError) -> Bool

    /// Makes every deferred write durable.
    func synchronize() throws(StoreError)

    /// Deletes what writes interrupted by a crash left behind; returns their paths.
    func removeStaleTemporaryFiles() throws(StoreError) -> [String]

    /// Removes the directories a failed run leaves empty, including the store's own top when the
    /// store created it; the next write makes them again.
    func removeEmptyDirectories()
    /// Every file below `directory` (`""` is the top), at any depth, hidden and temporary files aside,
    /// sorted by path (relative to `directory`); a directory that does not exist holds none.
    func files(below directory: String) throws(StoreError) -> [StoredFile]
    /// Bytes still free where the store writes; nil when it cannot tell.
    func availableBytes() throws(StoreError) -> Int64?
    /// Removes `directory` when it holds nothing; returns whether it did (one that holds something, or
    /// none at all, is left).
    func removeDirectoryIfEmpty(_ directory: String) throws(StoreError) -> Bool
}

/// A file a store holds, found by `files(below:)`.
public struct StoredFile: Sendable, Equatable {
    public var path: String
    public var byteCount: Int64
    /// When it was last written.
    public var modified: Date

    public init(path: String, byteCount: Int64, modified: Date) {
        self.path = path
        self.byteCount = byteCount
        self.modified = modified
    }
}

extension StreamStore {
    public func write(_ bytes: [UInt8], to path: String) throws(StoreError) {
        try write(bytes, to: path, durability: .immediate)
    }

    /// The same files, seen from one of the store's directories (`720p`): what a rendition's own
    /// publisher reads and removes.
    public func below(_ directory: String) -> any StreamStore {
        directory.isEmpty ? self : SubdirectoryStore(base: self, directory: directory)
    }
}

/// A directory of another store, as a store of its own.
struct SubdirectoryStore: StreamStore {
    let base: any StreamStore
    let directory: String

    var location: String { base.location + "/" + directory }

    private func inside(_ path: String) -> String { path.isEmpty ? directory : directory + "/" + path }

    func write(_ bytes: [UInt8], to path: String, durability: Durability) throws(StoreError) {
        try base.write(bytes, to: inside(path), durability: durability)
    }

    func append(_ bytes: [UInt8], to path: String, durability: Durability) throws(StoreError) {
        try base.append(bytes, to: inside(path), durability: durability)
    }

    func read(_ path: String) throws(StoreError) -> [UInt8] { try base.read(inside(path)) }
    func remove(_ path: String) throws(StoreError) { try base.remove(inside(path)) }
    func list(_ directory: String) throws(StoreError) -> [String] { try base.list(inside(directory)) }
    func exists(_ path: String) throws(StoreError) -> Bool { try base.exists(inside(path)) }
    func synchronize() throws(StoreError) { try base.synchronize() }

    func removeStaleTemporaryFiles() throws(StoreError) -> [String] {
        try base.removeStaleTemporaryFiles().filter { $0.hasPrefix(directory + "/") }
    }

    func removeEmptyDirectories() { base.removeEmptyDirectories() }
    func files(below directory: String) throws(StoreError) -> [StoredFile] { try base.files(below: inside(directory)) }
    func availableBytes() throws(StoreError) -> Int64? { try base.availableBytes() }
    func removeDirectoryIfEmpty(_ directory: String) throws(StoreError) -> Bool {
        try base.removeDirectoryIfEmpty(inside(directory))
    }
}
