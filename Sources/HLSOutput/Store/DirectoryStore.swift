import Glibc
import HLSBase
import HLSKit

/// Files under one directory, published atomically: a reader sees either the previous complete
/// file or the new complete file, never a partial one, even across a crash or power loss.
///
/// Each write goes to a hidden temporary file in the same directory (`.<name>.tmp.<pid>`), is
/// `fsync`ed, renamed over the public name, and the directory is `fsync`ed so the rename lasts.
/// Writes to the same path must not run concurrently; writes to different paths may.
public struct DirectoryStore: StreamStore {
    private static let directoryMode: mode_t = 0o755
    /// Readable by a web server running as another user.
    private static let fileMode: mode_t = 0o644
    private static let temporarySuffix = ".tmp"
    private static let writeProbeName = "write-probe"

    public let root: String
    public var location: String { root }
    /// Files and directories only the owner may read (0600, 0700): for keys.
    public let isPrivate: Bool
    /// The topmost directory on the way to `root` (`root` itself, or a parent) that did not exist
    /// when the store was made; nil when `root` existed.
    private let firstMissingDirectory: String?
    /// The root directory, once it exists.
    private let rootDirectory = RootDirectory()

    /// Checks that `root` can be made and files created in it. A missing `root` and its missing
    /// parents are created by the first write, so a run that fails before it has something to
    /// store leaves no empty directory behind.
    public init(root: String, isPrivate: Bool = false) throws(StoreError) {
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        self.isPrivate = isPrivate
        firstMissingDirectory = try Self.firstMissingDirectory(on: self.root)
        try Self.checkWritable(Self.nearestExistingDirectory(of: self.root), for: self.root)
        if firstMissingDirectory == nil { try prepareRoot() }
    }

    /// Removes what a failed run leaves once its files are gone: empty sub-directories, and the
    /// root and parents this store created, as long as they are empty. A root removed here is made
    /// again by the next write.
    public func removeEmptyDirectories() {
        let names: [String]
        do {
            names = try Self.entries(of: root)
        } catch {
            return  // no root, nothing to remove
        }
        // Each rmdir fails harmlessly on a directory that holds something (ENOTEMPTY) or is gone.
        for name in names where Self.isDirectory("\(root)/\(name)") {
            _ = rmdir("\(root)/\(name)")
        }
        guard let firstMissingDirectory else { return }
        var directory = root
        while rmdir(directory) == 0, directory != firstMissingDirectory,
              let slash = directory.lastIndex(of: "/"), slash > directory.startIndex {
            directory = String(directory[..<slash])
        }
        if !Self.isDirectory(root) { rootDirectory.release() }
    }

    /// Stores `bytes` under `relativePath` (such as `seg/000001.m4s`), creating its directories.
    public func write(_ bytes: [UInt8], to relativePath: String, durability: Durability) throws(StoreError) {
        let path = try absolutePath(relativePath, for: .write)
        let slash = relativePath.lastIndex(of: "/")
        let directory = slash.map { "\(root)/\(relativePath[..<$0])" } ?? root
        let name = slash.map { relativePath[relativePath.index(after: $0)...] } ?? relativePath[...]
        try prepareRoot()
        try Self.makeDirectories(slash.map { String(relativePath[..<$0]) } ?? "", below: root,
                                 mode: isPrivate ? 0o700 : Self.directoryMode)
        let temporaryPath = "\(directory)/\(Self.temporaryName(for: name))"
        do {
            let file = try FileDescriptor.open(temporaryPath, flags: O_WRONLY | O_CREAT | O_TRUNC,
                                               mode: isPrivate ? 0o600 : Self.fileMode)
            try file.writeAll(bytes)
            switch durability {
            case .immediate: try file.sync()
            case .deferred: file.startWriteback()
            }
            try file.close()
            try SystemCall.retryingInterrupts { rename(temporaryPath, path) }
        } catch {
            _ = unlink(temporaryPath)
            throw StoreError(.write, path, error)
        }
        guard durability == .immediate else { return }
        do {
            try Self.syncDirectory(directory)
        } catch {
            throw StoreError(.write, path, error)
        }
    }

    /// Adds `bytes` at the end of an existing file, `fsync`ed before returning when `immediate`.
    public func append(_ bytes: [UInt8], to relativePath: String, durability: Durability) throws(StoreError) {
        let path = try absolutePath(relativePath, for: .write)
        do {
            let file = try FileDescriptor.open(path, flags: O_WRONLY | O_APPEND)
            try file.writeAll(bytes)
            switch durability {
            case .immediate: try file.sync()
            case .deferred: file.startWriteback()
            }
            try file.close()
        } catch {
            throw StoreError(.write, path, error)
        }
    }

    /// Makes every deferred write durable with one `syncfs` of the filesystem holding the store,
    /// one journal commit instead of one per file.
    public func synchronize() throws(StoreError) {
        do {
            let directory = try FileDescriptor.open(root, flags: O_RDONLY | O_DIRECTORY, mode: 0)
            try directory.syncFilesystem()
            try directory.close()
        } catch {
            throw StoreError(.write, root, error)
        }
    }

    /// Removes the file; a file that does not exist is already removed.
    public func remove(_ relativePath: String) throws(StoreError) {
        let path = try absolutePath(relativePath, for: .remove)
        do {
            try SystemCall.retryingInterrupts { unlink(path) }
        } catch where error.rawValue == ENOENT {
            return
        } catch {
            throw StoreError(.remove, path, error)
        }
    }

    public func exists(_ relativePath: String) throws(StoreError) -> Bool {
        let path = try absolutePath(relativePath, for: .read)
        var status = stat()
        guard lstat(path, &status) != 0 else { return true }
        let error = Errno.current
        guard error.rawValue == ENOENT || error.rawValue == ENOTDIR else { throw StoreError(.read, path, error) }
        return false
    }

    public func read(_ relativePath: String) throws(StoreError) -> [UInt8] {
        let path = try absolutePath(relativePath, for: .read)
        do {
            let file = try FileDescriptor.open(path, flags: O_RDONLY)
            let bytes = try file.readAll()
            try file.close()
            return bytes
        } catch {
            throw StoreError(.read, path, error)
        }
    }

    /// The names in a directory (`""` is the root), sorted, without temporary files.
    public func list(_ relativeDirectory: String) throws(StoreError) -> [String] {
        let path = relativeDirectory.isEmpty ? root : try absolutePath(relativeDirectory, for: .list)
        do {
            return try Self.entries(of: path).filter { !Self.isTemporaryName($0) }.sorted()
        } catch where error.rawValue == ENOENT && (!relativeDirectory.isEmpty || firstMissingDirectory != nil) {
            // A directory nothing was written to yet, or the root, made by the first write.
            return []
        } catch {
            throw StoreError(.list, path, error)
        }
    }

    /// Deletes the temporary files that writes interrupted by a crash left behind, in the root and
    /// its sub-directories, and returns their paths relative to the root. Call it before writing:
    /// it also deletes the temporary file of a write in progress.
    @discardableResult
    public func removeStaleTemporaryFiles() throws(StoreError) -> [String] {
        try removeTemporaryFiles(inRelativeDirectory: "")
    }

    private func removeTemporaryFiles(inRelativeDirectory relativeDirectory: String) throws(StoreError) -> [String] {
        let directory = relativeDirectory.isEmpty ? root : "\(root)/\(relativeDirectory)"
        let names: [String]
        do {
            names = try Self.entries(of: directory).sorted()
        } catch where error.rawValue == ENOENT && relativeDirectory.isEmpty && firstMissingDirectory != nil {
            // The root is made by the first write: nothing to clean yet.
            return []
        } catch {
            throw StoreError(.list, directory, error)
        }
        var removed: [String] = []
        for name in names {
            let relativePath = relativeDirectory.isEmpty ? name : "\(relativeDirectory)/\(name)"
            if Self.isDirectory("\(directory)/\(name)") {
                removed += try removeTemporaryFiles(inRelativeDirectory: relativePath)
            } else if Self.isTemporaryName(name) {
                try remove(relativePath)
                removed.append(relativePath)
            }
        }
        return removed
    }

    /// Creating and deleting a file is the only reliable test: `access` grants root everything,
    /// and some file systems (procfs, sysfs) refuse new files whatever the permission bits say.
    /// `directory` is the root or, while the root is missing, the existing parent it will go in.
    private static func checkWritable(_ directory: String, for root: String) throws(StoreError) {
        // A parent may be shared with other stores probing at the same moment: each probe has its own name.
        let probePath = "\(directory)/\(temporaryName(for: "\(writeProbeName)-\(UInt32.random(in: 0...UInt32.max))"))"
        do {
            let probe = try FileDescriptor.open(probePath, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: fileMode)
            try probe.close()
            try SystemCall.retryingInterrupts { unlink(probePath) }
        } catch {
            throw StoreError(directory == root ? .writeInDirectory : .createDirectory, root, error)
        }
    }

    /// The first directory of `path` that does not exist yet, or nil when `path` is a directory.
    /// Something that is not a directory on the way is an error, as `mkdir` would report it (EEXIST).
    private static func firstMissingDirectory(on path: String) throws(StoreError) -> String? {
        var current = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            current += (current.isEmpty || current == "/" ? "" : "/") + component
            if isDirectory(current) { continue }
            var status = stat()
            guard lstat(current, &status) != 0 else {
                throw StoreError(operation: .createDirectory, path: current, errno: EEXIST)
            }
            return current
        }
        return nil
    }

    /// `path` itself when it exists, else its nearest existing parent ("." for a relative path).
    static func nearestExistingDirectory(of path: String) -> String {
        var directory = path
        while !isDirectory(directory) {
            guard let slash = directory.lastIndex(of: "/") else { return "." }
            directory = slash == directory.startIndex ? "/" : String(directory[..<slash])
        }
        return directory
    }

    /// Keeps every path inside the root: no absolute paths, no `..`, no empty names.
    private func absolutePath(_ relativePath: String, for operation: StoreError.Operation) throws(StoreError) -> String {
        let components = relativePath.split(separator: "/", omittingEmptySubsequences: false)
        guard !relativePath.isEmpty, !components.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            throw StoreError(operation: operation, path: "\(root)/\(relativePath)", errno: EINVAL)
        }
        return "\(root)/\(relativePath)"
    }

    private static func temporaryName(for name: some StringProtocol) -> String {
        ".\(name)\(temporarySuffix).\(getpid())"
    }

    /// `.<name>.tmp.<pid>`, as `temporaryName(for:)` makes them, whichever process did.
    static func isTemporaryName(_ name: String) -> Bool {
        guard name.hasPrefix("."), let lastDot = name.lastIndex(of: "."), lastDot > name.startIndex else {
            return false
        }
        let processID = name[name.index(after: lastDot)...]
        let nameAndSuffix = name[name.index(after: name.startIndex)..<lastDot]
        return !processID.isEmpty && processID.allSatisfy { ("0"..."9").contains($0) }
            && nameAndSuffix.hasSuffix(temporarySuffix) && nameAndSuffix.count > temporarySuffix.count
    }

    /// The root, made with its missing parents by the first write. After that the store holds on to
    /// that directory: one removed or replaced under it is an error rather than made again, so that
    /// files never go on into a new, empty directory as if the earlier ones were still there.
    private func prepareRoot() throws(StoreError) {
        var expected = rootDirectory.identity
        if expected == nil {
            if !Self.isDirectory(root) { try Self.makeDirectories(root, mode: isPrivate ? 0o700 : Self.directoryMode) }
            expected = rootDirectory.hold(root)
        }
        var status = stat()
        guard let expected, lstat(root, &status) == 0,
              RootDirectory.Identity(status) == expected else {
            throw StoreError(operation: .writeInDirectory, path: root, errno: ENOENT)
        }
    }

    /// `mkdir -p` of `path` inside `base`, an existing directory ("" for `path` as it is), syncing the
    /// parent of each directory it creates so the new entry is durable.
    private static func makeDirectories(_ path: String, below base: String = "", mode: mode_t = directoryMode)
        throws(StoreError) {
        var current = base.isEmpty && path.hasPrefix("/") ? "/" : base
        for component in path.split(separator: "/") {
            let parent = current.isEmpty ? "." : current
            current += (current.isEmpty || current.hasSuffix("/") ? "" : "/") + component
            if isDirectory(current) {
                continue
            }
            do {
                try SystemCall.retryingInterrupts { mkdir(current, mode) }
                try syncDirectory(parent)
            } catch where error.rawValue == EEXIST && isDirectory(current) {
                // Another writer created it between the check and mkdir.
                continue
            } catch {
                throw StoreError(.createDirectory, current, error)
            }
        }
    }

    private static func syncDirectory(_ path: String) throws(Errno) {
        let directory = try FileDescriptor.open(path, flags: O_RDONLY | O_DIRECTORY)
        try directory.sync()
        try directory.close()
    }

    /// Without following symbolic links, so cleaning never leaves the root.
    private static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    static func entries(of directory: String) throws(Errno) -> [String] {
        guard let stream = opendir(directory) else {
            throw Errno.current
        }
        defer { closedir(stream) }
        var names: [String] = []
        while true {
            // readdir returns nil both at the end and on failure; only a failure sets errno.
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 {
                    throw Errno.current
                }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." {
                names.append(name)
            }
        }
    }
}

/// Which directory a store's root is, shared by every copy of the store. It stays open, so that no
/// directory made after the root is removed can have its inode number.
private final class RootDirectory: Sendable {
    struct Identity: Equatable {
        var device: dev_t
        var inode: ino_t

        init(_ status: stat) {
            device = status.st_dev
            inode = status.st_ino
        }
    }

    private struct Held: ~Copyable {
        var identity: Identity
        var descriptor: FileDescriptor
    }

    private let held = Locked<Held?>(nil)

    var identity: Identity? { held.withLock { $0?.identity } }

    /// Lets go of a root the store removed itself.
    func release() {
        held.withLock { $0 = nil }
    }

    /// Opens the directory at `path` as the root, unless a root is already held; the root's identity,
    /// nil when `path` cannot be opened.
    func hold(_ path: String) -> Identity? {
        held.withLock { held in
            if let identity = held?.identity { return identity }
            do throws(Errno) {
                let descriptor = try FileDescriptor.open(path, flags: O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
                let identity = Identity(try descriptor.status())
                held = Held(identity: identity, descriptor: descriptor)
                return identity
            } catch {
                return nil
            }
        }
    }
}
