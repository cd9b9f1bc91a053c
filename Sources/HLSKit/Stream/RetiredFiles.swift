import Foundation

/// Files that left a live playlist and wait out their retention time before they are deleted
/// (RFC 8216bis 6.2.2: a viewer holding an earlier playlist may still ask for them). Times are
/// seconds on one monotonic clock, passed in by the caller.
public struct RetiredFiles: Sendable, Equatable {
    private var waiting: [(path: String, removableAt: Double)] = []

    public init() {}

    public mutating func add(_ path: String, removableAt: Double) {
        waiting.append((path, removableAt))
    }

    /// The files whose time has come, oldest first; they are no longer tracked.
    public mutating func takeRemovable(now: Double) -> [String] {
        let due = waiting.filter { $0.removableAt <= now }.map(\.path)
        waiting.removeAll { $0.removableAt <= now }
        return due
    }

    /// When the last waiting file may go; nil when none waits.
    public var lastRemovableAt: Double? { waiting.map(\.removableAt).max() }

    public var count: Int { waiting.count }

    /// The waiting files as a later run reads them (`StreamLayout.retiredListName`): one line per file, the
    /// wall-clock time it may go (seconds since 1970, from `now`, the wall-clock time at `monotonicNow`),
    /// a tab, its path.
    public func manifest(monotonicNow: Double, now: Date) -> String {
        waiting.map { file in
            let removableAt = now.timeIntervalSince1970 + (file.removableAt - monotonicNow)
            return String(format: "%.3f\t%@\n", removableAt, file.path)
        }.joined()
    }

    /// The files a manifest lists, with the time each may go; lines that cannot be read are skipped.
    public static func parseManifest(_ text: String) -> [(path: String, removableAt: Date)] {
        text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", maxSplits: 1)
            guard fields.count == 2, let seconds = Double(fields[0]), !fields[1].isEmpty else { return nil }
            return (String(fields[1]), Date(timeIntervalSince1970: seconds))
        }
    }

    public static func == (lhs: RetiredFiles, rhs: RetiredFiles) -> Bool {
        lhs.waiting.elementsEqual(rhs.waiting) { $0.path == $1.path && $0.removableAt == $1.removableAt }
    }
}
