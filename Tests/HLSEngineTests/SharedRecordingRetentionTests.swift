import Foundation
import HLSBase
import HLSEngine
import HLSKit
import HLSOutput
import Testing

/// Retention over several streams' split recordings on one disk (`run`'s `recordings:`): each camera
/// here does what a recorder does, writing a file into its own folder of one store on a virtual clock,
/// telling the shared retention when it is finished and running a pass when the next file opens.
@Suite struct SharedRecordingRetentionTests {
    /// A camera's recorder: its folder of the disk, its messages.
    final class Camera: @unchecked Sendable {
        let name: String
        let store: any StreamStore
        let member: SharedRecordingRetention.Member
        let shared: SharedRecordingRetention
        let messages = Locked<[EngineMessage]>([])

        init(_ name: String, disk: MemoryStore, shared: SharedRecordingRetention,
             own: RecordingRetention = RecordingRetention()) throws {
            self.name = name
            self.shared = shared
            store = disk.below(name)
            let messages = self.messages
            member = try shared.join(store: store, retention: own) { message in messages.withLock { $0.append(message) } }
        }

        /// A file of `bytes` started at `start` and finished `seconds` later, then the next one's pass.
        func record(_ path: String, bytes: Int, start: Date, seconds: Double = 600) throws {
            try store.write([UInt8](repeating: 0, count: bytes), to: path)
            let end = start.addingTimeInterval(seconds)
            shared.finished(.init(path: path, end: end, byteCount: Int64(bytes)), startedAt: start, by: member)
            try shared.apply(now: end, for: member)
        }

        var removed: [(String, RecordingRetention.Reason)] {
            messages.withLock { $0 }.compactMap { message in
                if case .recordingRemoved(let path, let reason, _) = message { (path, reason) } else { nil }
            }
        }
    }

    static let start = VirtualClock.defaultWallStart

    static func at(_ minutes: Int) -> Date { start.addingTimeInterval(Double(minutes * 60)) }

    /// Three cameras of different rates, their files starting a few minutes apart: over the shared
    /// size, the oldest file of any camera goes, each said as its own camera's.
    @Test func theOldestFileOfAnyCameraGoesFirst() throws {
        let disk = MemoryStore(location: "disk", clock: VirtualClock())
        let shared = SharedRecordingRetention(retention: RecordingRetention(keepBytes: 10_000))
        let a = try Camera("a", disk: disk, shared: shared)
        let b = try Camera("b", disk: disk, shared: shared)
        let c = try Camera("c", disk: disk, shared: shared)
        // Files of 1,000, 2,000 and 3,000 bytes; b's start 2 minutes after a's, c's 4 minutes before.
        for period in 0..<4 {
            try a.record("a\(period).mp4", bytes: 1000, start: Self.at(10 * period + 10))
            try b.record("b\(period).mp4", bytes: 2000, start: Self.at(10 * period + 12))
            try c.record("c\(period).mp4", bytes: 3000, start: Self.at(10 * period + 6))
        }
        // 24,000 bytes were written; whenever more than 10,000 were kept, the oldest went: c0, a0 and b0,
        // c1, a1 and b1, c2: 9,000 kept.
        let kept = shared.kept
        #expect(kept == ["disk/a/a2.mp4", "disk/b/b2.mp4", "disk/c/c3.mp4", "disk/a/a3.mp4", "disk/b/b3.mp4"], "\(kept)")
        #expect(Set(disk.files.keys) == ["a/a2.mp4", "a/a3.mp4", "b/b2.mp4", "b/b3.mp4", "c/c3.mp4"])
        #expect(a.removed.map(\.0) == ["disk/a/a0.mp4", "disk/a/a1.mp4"])
        #expect(b.removed.map(\.0) == ["disk/b/b0.mp4", "disk/b/b1.mp4"])
        #expect(c.removed.map(\.0) == ["disk/c/c0.mp4", "disk/c/c1.mp4", "disk/c/c2.mp4"])
        #expect((a.removed + b.removed + c.removed).allSatisfy { $0.1 == .size })
    }

    /// Each removal comes when the file that passed the limit comes: oldest start first, whichever
    /// camera finished it.
    @Test func removalsComeInOrderOfStart() throws {
        let disk = MemoryStore(location: "disk", clock: VirtualClock())
        let shared = SharedRecordingRetention(retention: RecordingRetention(keepBytes: 2500))
        let a = try Camera("a", disk: disk, shared: shared)
        let b = try Camera("b", disk: disk, shared: shared)
        try a.record("1.mp4", bytes: 1000, start: Self.at(0))
        try b.record("1.mp4", bytes: 1000, start: Self.at(1))
        try b.record("2.mp4", bytes: 1000, start: Self.at(11))
        #expect(a.removed.map(\.0) == ["disk/a/1.mp4"] && b.removed.isEmpty)
        try a.record("2.mp4", bytes: 1000, start: Self.at(10))
        // a's second file started before b's second: b's first goes now, then a's second before b's second.
        #expect(b.removed.map(\.0) == ["disk/b/1.mp4"])
        try a.record("3.mp4", bytes: 1000, start: Self.at(20))
        #expect(a.removed.map(\.0) == ["disk/a/1.mp4", "disk/a/2.mp4"])
        #expect(shared.kept == ["disk/b/2.mp4", "disk/a/3.mp4"])
    }

    /// A camera's own narrower limit still applies to its own files, before the shared one, while the
    /// others keep theirs.
    @Test func aCamerasOwnLimitStillNarrowsIt() throws {
        let disk = MemoryStore(location: "disk", clock: VirtualClock())
        let shared = SharedRecordingRetention(retention: RecordingRetention(keepBytes: 100_000))
        let a = try Camera("a", disk: disk, shared: shared, own: RecordingRetention(keepBytes: 2000))
        let b = try Camera("b", disk: disk, shared: shared, own: RecordingRetention(keepSeconds: 1800))
        let c = try Camera("c", disk: disk, shared: shared)
        for period in 0..<6 {
            try a.record("\(period).mp4", bytes: 1000, start: Self.at(10 * period))
            try b.record("\(period).mp4", bytes: 1000, start: Self.at(10 * period))
            try c.record("\(period).mp4", bytes: 1000, start: Self.at(10 * period))
        }
        #expect(a.removed.map(\.0) == (0..<4).map { "disk/a/\($0).mp4" })
        #expect(a.removed.allSatisfy { $0.1 == .size })
        // Kept 30 minutes after its end: at the last file's end (60 minutes) those that ended before 30.
        #expect(b.removed.map(\.0) == (0..<2).map { "disk/b/\($0).mp4" })
        #expect(b.removed.allSatisfy { $0.1 == .age })
        #expect(c.removed.isEmpty)
        #expect(shared.kept.filter { $0.hasPrefix("disk/a/") } == ["disk/a/4.mp4", "disk/a/5.mp4"])
        #expect(shared.kept.count == 2 + 4 + 6)
    }

    /// A name that comes back (`%H.mp4` the next day) after the camera's own rule deleted it is the newest
    /// file, not the old one.
    @Test func aNameThatComesBackIsTheNewestFile() throws {
        let disk = MemoryStore(location: "disk", clock: VirtualClock())
        let shared = SharedRecordingRetention(retention: RecordingRetention(keepBytes: 3000))
        let a = try Camera("a", disk: disk, shared: shared, own: RecordingRetention(keepBytes: 1500))
        let b = try Camera("b", disk: disk, shared: shared)
        try a.record("00.mp4", bytes: 1000, start: Self.at(0))
        try b.record("00.mp4", bytes: 1000, start: Self.at(5))
        try a.record("12.mp4", bytes: 1000, start: Self.at(720))
        try a.record("00.mp4", bytes: 500, start: Self.at(1440))
        // a's own limit took its first 00.mp4; the 2,500 bytes left are within the shared limit.
        #expect(a.removed.map(\.0) == ["disk/a/00.mp4"] && b.removed.isEmpty)
        #expect(shared.kept == ["disk/b/00.mp4", "disk/a/12.mp4", "disk/a/00.mp4"])
        try b.record("12.mp4", bytes: 1000, start: Self.at(1445))
        #expect(b.removed.map(\.0) == ["disk/b/00.mp4"])
        #expect(shared.kept == ["disk/a/12.mp4", "disk/a/00.mp4", "disk/b/12.mp4"])
    }

    /// A camera restarted (a reload that changed it) joins again with the same folder: it takes over its
    /// files, under its new rules, and they are not counted twice.
    @Test func aCameraThatJoinsAgainTakesOverItsFiles() throws {
        let disk = MemoryStore(location: "disk", clock: VirtualClock())
        let shared = SharedRecordingRetention(retention: RecordingRetention(keepBytes: 10_000))
        let first = try Camera("a", disk: disk, shared: shared)
        try first.record("0.mp4", bytes: 1000, start: Self.at(0))
        try first.record("1.mp4", bytes: 1000, start: Self.at(10))
        let again = try Camera("a", disk: disk, shared: shared, own: RecordingRetention(keepBytes: 1500))
        #expect(shared.kept == ["disk/a/0.mp4", "disk/a/1.mp4"])
        try again.record("2.mp4", bytes: 1000, start: Self.at(20))
        #expect(again.removed.map(\.0) == ["disk/a/0.mp4", "disk/a/1.mp4"] && first.removed.isEmpty)
        #expect(shared.kept == ["disk/a/2.mp4"])
    }

    /// Free space on a disk that fills: below the shared `min-free`, the oldest of any camera goes, as
    /// many as bring it back, and the files of an earlier run count from the start.
    @Test func underTheSharedMinimumFreeTheOldestOfAnyCameraGoes() throws {
        let clock = VirtualClock()
        let disk = MemoryStore(location: "disk", clock: clock)
        disk.capacityBytes = 20_000
        // An earlier run left a file of camera b, written before anything of this run.
        try disk.write([UInt8](repeating: 0, count: 4000), to: "b/old.mp4")
        clock.advance(bySeconds: 3600)
        let shared = SharedRecordingRetention(retention: RecordingRetention(minimumFreeBytes: 8000))
        let a = try Camera("a", disk: disk, shared: shared)
        let b = try Camera("b", disk: disk, shared: shared)
        let wallNow = clock.now()
        func at(_ minutes: Int) -> Date { wallNow.addingTimeInterval(Double(minutes * 60)) }
        try a.record("0.mp4", bytes: 3000, start: at(0))
        try b.record("0.mp4", bytes: 2000, start: at(1))
        #expect(a.removed.isEmpty && b.removed.isEmpty)
        // 9,000 used, 11,000 free: the next 4,000 leave 7,000, under 8,000: b's old file goes first.
        try a.record("1.mp4", bytes: 4000, start: at(10))
        #expect(b.removed.map(\.0) == ["disk/b/old.mp4"] && a.removed.isEmpty)
        // 13,000 used: 7,000 free again; a's first file (3,000) is now the oldest.
        try b.record("1.mp4", bytes: 4000, start: at(11))
        #expect(a.removed.map(\.0) == ["disk/a/0.mp4"])
        #expect(b.removed.map(\.0) == ["disk/b/old.mp4"])
        #expect((a.removed + b.removed).allSatisfy { $0.1 == .freeSpace })
        #expect(try disk.availableBytes() == 10_000)
        #expect(shared.kept == ["disk/b/0.mp4", "disk/a/1.mp4", "disk/b/1.mp4"])
    }
}
