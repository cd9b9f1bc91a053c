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

    public static func == (lhs: RetiredFiles, rhs: RetiredFiles) -> Bool {
        lhs.waiting.elementsEqual(rhs.waiting) { $0.path == $1.path && $0.removableAt == $1.removableAt }
    }
}
