import Foundation
import Glibc

extension DirectoryStore {
    /// Walks the directory without following symbolic links, so a listing never leaves the root.
    public func files(below relativeDirectory: String) throws(StoreError) -> [StoredFile] {
        let top = relativeDirectory.isEmpty ? root : root + "/" + relativeDirectory
        var found: [StoredFile] = []
        var pending = [""]
        while let directory = pending.popLast() {
            let path = directory.isEmpty ? top : top + "/" + directory
            let names: [String]
            do {
                names = try Self.entries(of: path)
            } catch where error.rawValue == ENOENT && directory.isEmpty {
                return []
            } catch {
                throw StoreError(.list, path, error)
            }
            for name in names where !name.hasPrefix(".") {
                let relative = directory.isEmpty ? name : directory + "/" + name
                var status = stat()
                guard lstat(top + "/" + relative, &status) == 0 else { continue }  // removed meanwhile
                switch status.st_mode & S_IFMT {
                case S_IFDIR:
                    pending.append(relative)
                case S_IFREG:
                    let modified = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
                    found.append(StoredFile(path: relative, byteCount: Int64(status.st_size),
                                            modified: Date(timeIntervalSince1970: modified)))
                default:
                    continue
                }
            }
        }
        return found.sorted { $0.path < $1.path }
    }

    /// What the file system holding the root has free for this user (statvfs's available blocks).
    public func availableBytes() throws(StoreError) -> Int64? {
        let path = Self.nearestExistingDirectory(of: root)
        var status = statvfs()
        do {
            try SystemCall.retryingInterrupts { statvfs(path, &status) }
        } catch {
            throw StoreError(.list, path, error)
        }
        return Int64(status.f_bavail) * Int64(status.f_frsize)
    }

    public func removeDirectoryIfEmpty(_ relativeDirectory: String) throws(StoreError) -> Bool {
        guard !relativeDirectory.isEmpty else { return false }
        let path = root + "/" + relativeDirectory
        do {
            try SystemCall.retryingInterrupts { rmdir(path) }
            return true
        } catch where [ENOTEMPTY, EEXIST, ENOENT].contains(error.rawValue) {
            return false
        } catch {
            throw StoreError(.remove, path, error)
        }
    }
}
