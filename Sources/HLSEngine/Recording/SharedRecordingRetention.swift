import Foundation
import HLSBase
import HLSKit
import HLSOutput

/// Retention over the split recordings of several streams on one disk (`hlscap run`'s `recordings:`):
/// while all their files together take more than `keepBytes`, or the disk has less free than
/// `minimumFreeBytes`, the oldest file of any stream goes first, oldest by when it started. Each stream's
/// own rules (`--keep`, `--keep-size`, `--min-free`) still apply to its own files first, as they do
/// without a shared retention.
///
/// Every stream's recorder joins once and then tells it of each file it finishes; a pass runs when a
/// recorder opens a file. Passes of different streams take one lock, so a file is deleted once, by the
/// pass that decides it, and said as its own stream's (`EngineMessage.recordingRemoved`). The free space
/// is the least any stream's store reports: the recordings are taken to share one disk.
public final class SharedRecordingRetention: Sendable {
    /// One stream's recordings, as it joined.
    public final class Member: Sendable {
        fileprivate let number: Int

        fileprivate init(number: Int) {
            self.number = number
        }
    }

    private let state: Locked<State>

    /// The shared rules; changed by a reload, they hold from the next pass.
    public var retention: RecordingRetention {
        get { state.withLock { $0.retention } }
        set { state.withLock { $0.retention = newValue } }
    }

    private struct Stream {
        var store: any StreamStore
        var retention: RecordingRetention
        var messages: @Sendable (EngineMessage) -> Void
        /// Its own files, for its own rules.
        var own = RecordingIndex()
    }

    /// A file of any stream, in the order they go.
    private struct Entry {
        var number: Int
        var stream: Int
        var file: RecordingIndex.File
        var start: Date
        var location: String
    }

    private struct State {
        var retention: RecordingRetention
        var streams: [Stream] = []
        /// Every stream's files, oldest start first, from `head`; the storage is compacted once half of
        /// it is behind. A file a stream's own rule deleted stays until it reaches the head, no longer kept.
        var entries: [Entry] = []
        var head = 0
        var totalBytes: Int64 = 0
        /// The files kept, by location: the number of the entry that holds each.
        var kept: [String: Int] = [:]
        var entryCount = 0

        func isKept(_ entry: Entry) -> Bool { kept[entry.location] == entry.number }

        /// A pass looks at the files it deletes and the head, never at the whole list.
        mutating func insert(stream: Int, file: RecordingIndex.File, start: Date, location: String) -> Bool {
            guard kept[location] == nil else { return false }
            let entry = Entry(number: entryCount, stream: stream, file: file, start: start, location: location)
            entryCount += 1
            kept[location] = entry.number
            totalBytes += file.byteCount
            // Files mostly come newest, so the place is found from the end.
            var index = entries.endIndex
            while index > head, (start, location) < (entries[index - 1].start, entries[index - 1].location) {
                index -= 1
            }
            entries.insert(entry, at: index)
            return true
        }

        mutating func forget(_ location: String, byteCount: Int64) {
            guard kept.removeValue(forKey: location) != nil else { return }
            totalBytes -= byteCount
        }

        /// The oldest file kept.
        mutating func oldest() -> Entry? {
            while head < entries.count, !isKept(entries[head]) { advance() }
            return head < entries.count ? entries[head] : nil
        }

        mutating func advance() {
            head += 1
            if head > entries.count / 2 {
                entries.removeFirst(head)
                head = 0
            }
        }
    }

    /// `retention`'s `keepSeconds` is not shared: age is each stream's own (`--keep`).
    public init(retention: RecordingRetention) {
        state = Locked(State(retention: retention))
    }

    /// A stream's recordings in `store` join, with the stream's own rules: the `.mp4` files already
    /// there (of earlier runs, oldest by when they were last written) count from now on. Deletions of
    /// its files are said through `messages`. A folder that joined before (a stream restarted by a
    /// reload) takes over what it had: its files known, and those written since found.
    public func join(store: any StreamStore, retention own: RecordingRetention,
                     messages: @escaping @Sendable (EngineMessage) -> Void) throws(StoreError) -> Member {
        let found = try store.files(below: "").filter { $0.path.hasSuffix(".mp4") }
        return state.withLock { state in
            let stream = Stream(store: store, retention: own, messages: messages)
            let number: Int
            if let earlier = state.streams.firstIndex(where: { $0.store.location == store.location }) {
                number = earlier
                let known = state.streams[earlier].own
                state.streams[earlier] = stream
                state.streams[earlier].own = known
            } else {
                number = state.streams.count
                state.streams.append(stream)
            }
            var files: [RecordingIndex.File] = []
            for stored in found {
                let file = RecordingIndex.File(path: stored.path, end: stored.modified, byteCount: stored.byteCount)
                if state.insert(stream: number, file: file, start: stored.modified,
                                location: store.location + "/" + stored.path) {
                    files.append(file)
                }
            }
            if !files.isEmpty { state.streams[number].own = RecordingIndex(files + state.streams[number].own.all) }
            return Member(number: number)
        }
    }

    /// `member` finished `file`, which it started at `start` on the wall clock.
    public func finished(_ file: RecordingIndex.File, startedAt start: Date, by member: Member) {
        state.withLock { state in
            let location = state.streams[member.number].store.location + "/" + file.path
            if state.insert(stream: member.number, file: file, start: start, location: location) {
                state.streams[member.number].own.add(file)
            }
        }
    }

    /// The files the rules no longer keep, at `now`: first `member`'s own rules on its own files, then
    /// the shared ones on every stream's, oldest first. A file of `member` that cannot be deleted ends the
    /// pass with its error; one of another stream is said as that stream's and the pass goes on.
    public func apply(now: Date, for member: Member) throws(StoreError) {
        try state.withLock { (state: inout State) throws(StoreError) in
            let stream = state.streams[member.number]
            if !stream.retention.isEmpty {
                let free = stream.retention.minimumFreeBytes == nil ? nil : try stream.store.availableBytes()
                for deletion in stream.retention.deletions(from: &state.streams[member.number].own, now: now,
                                                           freeBytes: free) {
                    state.forget(stream.store.location + "/" + deletion.file.path, byteCount: deletion.file.byteCount)
                    try Self.remove(deletion, of: stream)
                }
            }
            let retention = state.retention
            var free: Int64?
            if retention.minimumFreeBytes != nil {
                for other in state.streams {
                    if let available = try other.store.availableBytes() { free = min(free ?? available, available) }
                }
            }
            while let oldest = state.oldest() {
                let reason: RecordingRetention.Reason
                if let keepBytes = retention.keepBytes, state.totalBytes > keepBytes {
                    reason = .size
                } else if let minimumFreeBytes = retention.minimumFreeBytes, let available = free,
                          available < minimumFreeBytes {
                    reason = .freeSpace
                } else {
                    break
                }
                state.forget(oldest.location, byteCount: oldest.file.byteCount)
                state.advance()
                free = free.map { $0 + oldest.file.byteCount }
                _ = state.streams[oldest.stream].own.remove(path: oldest.file.path)
                let owner = state.streams[oldest.stream]
                do throws(StoreError) {
                    try Self.remove(.init(file: oldest.file, reason: reason), of: owner)
                } catch {
                    guard oldest.stream != member.number else { throw error }
                    owner.messages(.removalFailed(error))
                }
            }
        }
    }

    /// Every stream's files kept, oldest start first, by location.
    public var kept: [String] {
        state.withLock { state in state.entries[state.head...].filter(state.isKept).map(\.location) }
    }

    /// Deletes the file and the folders it leaves empty (a folder that cannot be removed is said, and the
    /// recording goes on), and says so.
    private static func remove(_ deletion: RecordingRetention.Deletion, of stream: Stream) throws(StoreError) {
        try stream.store.remove(deletion.file.path)
        var folder = (deletion.file.path as NSString).deletingLastPathComponent
        do throws(StoreError) {
            while !folder.isEmpty, try stream.store.removeDirectoryIfEmpty(folder) {
                folder = (folder as NSString).deletingLastPathComponent
            }
        } catch {
            stream.messages(.removalFailed(error))
        }
        stream.messages(.recordingRemoved(path: stream.store.location + "/" + deletion.file.path,
                                          reason: deletion.reason, byteCount: deletion.file.byteCount))
    }
}
