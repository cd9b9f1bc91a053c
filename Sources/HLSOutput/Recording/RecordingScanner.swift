import Foundation
import HLSKit

/// Reads recording files for `hlscap recordings`: the top-level boxes one header at a time, the small
/// ones (`moov`, `prft`, `moof`) whole, the media data skipped, so an hour-long file costs a few hundred
/// small reads and not its gigabytes.
public enum RecordingScanner {
    /// Boxes read whole; anything larger than this of those kinds is damage.
    static let largestReadBox = 64 << 20

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
        var builder = RecordingFileSummary.Builder()
        guard let handle = FileHandle(forReadingAtPath: path) else { return (builder.result, "cannot be opened") }
        defer { try? handle.close() }
        let fileSize = (try? handle.seekToEnd()).map(Int.init) ?? 0
        var offset = 0
        while offset + 8 <= fileSize {
            do {
                try handle.seek(toOffset: UInt64(offset))
                var header = [UInt8](try handle.read(upToCount: 16) ?? Data())
                guard header.count >= 8 else { break }
                var size = Int(header[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
                let type = String(decoding: header[4..<8], as: UTF8.self)
                if size == 1, header.count == 16 {
                    size = Int(header[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
                }
                guard size >= 8, offset + size <= fileSize else {
                    return (builder.result, "its box at byte \(offset) runs past the end (a write cut short)")
                }
                var bytes: [UInt8]?
                if ["moov", "prft", "moof"].contains(type) {
                    guard size <= largestReadBox else { return (builder.result, "its \(type) box is \(size) bytes") }
                    try handle.seek(toOffset: UInt64(offset))
                    bytes = [UInt8](try handle.read(upToCount: size) ?? Data())
                    header = []
                }
                try builder.take(type: type, offset: offset, size: size, bytes: bytes)
                offset += size
            } catch {
                return (builder.result, "its box at byte \(offset) cannot be read: \(error)")
            }
        }
        return (builder.result, nil)
    }
}
