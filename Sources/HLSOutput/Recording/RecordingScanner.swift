import Foundation
import HLSKit

/// Finds and reads recording files for `hlscap recordings` and the server (`RecordingFileSummary.read`
/// says how a file is read).
public enum RecordingScanner {
    public struct Scanned: Sendable {
        /// The file's path below the folder scanned.
        public var path: String
        public var summary: RecordingFileSummary
        /// Why the rest of the file could not be read (a crash cut it short, or it is not a recording).
        public var problem: String?

        public init(path: String, summary: RecordingFileSummary, problem: String? = nil) {
            self.path = path
            self.summary = summary
            self.problem = problem
        }
    }

    /// A recording file found below a folder.
    public struct Found: Sendable {
        /// Its path below the folder.
        public var path: String
        public var byteCount: Int
        public var modified: Date
    }

    /// Every regular `.mp4` file below `folder` (hidden and temporary ones aside), in order of path; nil
    /// when the folder cannot be read.
    public static func files(below folder: String) -> [Found]? {
        let manager = FileManager.default
        guard let enumerator = manager.enumerator(atPath: folder) else { return nil }
        var found: [Found] = []
        for case let path as String in enumerator {
            let name = (path as NSString).lastPathComponent
            guard name.hasSuffix(".mp4"), !name.hasPrefix("."),
                  let attributes = try? manager.attributesOfItem(atPath: folder + "/" + path),
                  attributes[.type] as? FileAttributeType == .typeRegular,
                  let size = (attributes[.size] as? NSNumber)?.intValue,
                  let modified = attributes[.modificationDate] as? Date else { continue }
            found.append(Found(path: path, byteCount: size, modified: modified))
        }
        return found.sorted { $0.path < $1.path }
    }

    /// Every recording file below `folder`, read.
    public static func scan(folder: String) throws(StoreError) -> [Scanned] {
        guard let found = files(below: folder) else { throw StoreError(operation: .read, path: folder, errno: ENOENT) }
        return found.map { file in
            let (summary, problem) = read(folder + "/" + file.path)
            return Scanned(path: file.path, summary: summary, problem: problem)
        }
    }

    /// One file's summary, up to where it can be read.
    public static func read(_ path: String) -> (RecordingFileSummary, String?) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return (RecordingFileSummary(), "cannot be opened") }
        defer { try? handle.close() }
        let fileSize = (try? handle.seekToEnd()).map(Int.init) ?? 0
        return RecordingFileSummary.read(byteCount: fileSize) { offset, count in
            try handle.seek(toOffset: UInt64(offset))
            return [UInt8](try handle.read(upToCount: count) ?? Data())
        }
    }
}
