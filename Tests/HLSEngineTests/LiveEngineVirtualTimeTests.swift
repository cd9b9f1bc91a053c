import Foundation
import HLSBase
import HLSKit
import HLSMedia
import HLSOutput
import Testing
@testable import HLSEngine

/// The live engine on a virtual clock: an hour of stream in the seconds its samples take to segment
/// and store.
@Suite(.serialized) struct LiveEngineVirtualTimeTests {
    /// A live stream of `seconds` at 10 fps in 2 s segments, 160x96, recorded as copied into files split
    /// every `periodSeconds` in UTC, named by `pattern`, kept by `retention`.
    private static func splitRecordingConfiguration(seconds: Int64, recordings: MemoryStore, pattern: String,
                                                    periodSeconds: Int, retention: RecordingRetention) throws
        -> LiveConfiguration {
        var configuration = LiveConfiguration()
        configuration.size = OutputSize(width: 160, height: 96)
        configuration.framesPerSecond = 10
        configuration.segmentMilliseconds = 2000
        configuration.durationMilliseconds = seconds * 1000
        var recording = LiveConfiguration.Recording(store: recordings, path: pattern)
        recording.encodes = false
        recording.split = .init(pattern: try RecordingPattern(pattern), period: try RecordingPeriod(seconds: periodSeconds),
                                timeZone: TimeZone(identifier: "UTC")!)
        recording.split?.retention = retention
        configuration.record = recording
        return configuration
    }

    /// What the store and the playlist held as each segment was listed.
    private final class Listings: LiveStreamObserver, @unchecked Sendable {
        struct Listing {
            var microseconds: Int64
            var mediaSequence: Int
            var uris: [String]
            var storedSegments: Set<String>
        }

        let clock: VirtualClock
        let store: MemoryStore
        private let entries = Locked<[Listing]>([])

        init(clock: VirtualClock, store: MemoryStore) {
            self.clock = clock
            self.store = store
        }

        var all: [Listing] { entries.withLock { $0 } }

        func playlists(_ playlists: [MediaPlaylist]) {
            guard let playlist = playlists.first, !playlist.endList else { return }
            let stored = Set(store.files.keys.filter { $0.hasPrefix(StreamLayout.segmentDirectory + "/") })
            let listing = Listing(microseconds: clock.monotonicMicroseconds(), mediaSequence: playlist.mediaSequence,
                                  uris: playlist.segments.map(\.uri), storedSegments: stored)
            entries.withLock { $0.append(listing) }
        }
    }

    /// One hour of 10 fps H.264 copied from a camera with a keyframe every 2 s, a window of 5 segments,
    /// a recording split every 10 minutes that keeps 25 minutes, stopped by its first sample past the hour.
    @Test func anHourWithAWindowASplitRecordingAndRetentionRunsInVirtualTime() throws {
        let began = Date()
        let clock = VirtualClock()
        let source = try LoopedSource(clock: clock, framesPerSecond: 10, keyframeIntervalFrames: 20, seconds: 3600)
        let store = MemoryStore()
        let recordings = MemoryStore(location: "virtual-recordings")
        let listings = Listings(clock: clock, store: store)
        let messages = MessageLog()

        var configuration = try Self.splitRecordingConfiguration(
            seconds: 3600, recordings: recordings, pattern: "%Y-%m-%d/%H-%M-%S.mp4", periodSeconds: 600,
            retention: RecordingRetention(keepSeconds: 25 * 60))
        configuration.windowSize = 5
        configuration.observers = [listings, source.observer]

        let engine = LiveEngine(configuration: configuration, sources: [source], store: store, clock: clock,
                                messages: messages.sink)
        let outcome = try engine.runInVirtualTime(clock, messages: messages)
        let realSeconds = Date().timeIntervalSince(began)
        print("an hour of live stream in virtual time took \(String(format: "%.1f", realSeconds)) s")

        #expect(outcome.failure == nil, "\(String(describing: outcome.failure))")
        #expect(!outcome.endedAtOnce)
        #expect(source.delivered == 36_000, "the first sample past the hour stopped it")
        let start = clock.startMicroseconds

        // The window: 5 segments of 2 s; the media sequence is the first one's number.
        let playlist = try MediaPlaylist.parse(String(decoding: try store.read(StreamLayout.playlistName), as: UTF8.self))
        #expect(playlist.endList)
        #expect(playlist.segments.map(\.uri) == (1796...1800).map(StreamLayout.segmentPath))
        #expect(playlist.mediaSequence == 1796)
        #expect(playlist.segments.allSatisfy { $0.durationSeconds == 2 }, "\(playlist.segments)")
        #expect(playlist.segments.first?.programDateTime == VirtualClock.defaultWallStart.addingTimeInterval(3590))

        // As each segment m was listed (at 2·m s), the playlist held the last 5, and the store also the
        // segments whose retention time had not passed: a segment k leaves the window when k + 5 is
        // listed and stays for its own 2 s plus the 12 s of the playlist that held it, so it is deleted
        // at 2·(k + 12) s, just before segment k + 12 is listed.
        let all = listings.all
        #expect(all.count == 1800)
        for (index, listing) in all.enumerated() {
            let listed = index + 1
            #expect(listing.microseconds == start + Int64(listed) * 2_000_000, "segment \(listed)")
            #expect(listing.uris == (max(1, listed - 4)...listed).map(StreamLayout.segmentPath), "segment \(listed)")
            #expect(listing.mediaSequence == max(1, listed - 4), "segment \(listed)")
            var expected = Set((max(1, listed - 11)...listed).map(StreamLayout.segmentPath))
            // The last segment is listed by the stop, which the sample at 3600 s makes: the same
            // instant segment 1788's deletion is due, so either may come first (the stop deletes it anyway).
            if listed == 1800, listing.storedSegments.contains(StreamLayout.segmentPath(1788)) {
                expected.insert(StreamLayout.segmentPath(1788))
            }
            #expect(listing.storedSegments == expected,
                    "segment \(listed): deleted too early \(expected.subtracting(listing.storedSegments).sorted()), too late \(listing.storedSegments.subtracting(expected).sorted())")
        }
        // The stop waited out the retention time of what had left the window, then deleted it.
        let waits = messages.all.compactMap { entry -> Double? in
            if case .waitingForRetention(_, let seconds) = entry.message { seconds } else { nil }
        }
        #expect(waits.count == 1 && waits.first.map { $0 > 0 && $0 <= 14 } == true, "\(waits)")
        let stored = store.files.keys.filter { $0.hasPrefix(StreamLayout.segmentDirectory + "/") }
        #expect(Set(stored) == Set((1796...1800).map(StreamLayout.segmentPath)), "\(stored.sorted())")

        // The recording: a file for each 10 minutes, named by its start and starting there.
        let names = (0..<6).map { String(format: "2027-01-15/08-%02d-00.mp4", $0 * 10) }
        #expect(outcome.recordedFiles == names.map { recordings.location + "/" + $0 })
        let started = messages.all.compactMap { entry -> String? in
            if case .recordingFileStarted(let path) = entry.message { path } else { nil }
        }
        #expect(started == names.map { recordings.location + "/" + $0 })
        // Kept 25 minutes: at 08:40 the file that ended at 08:10 went, at 08:50 the one that ended at 08:20,
        // oldest first.
        let removed = messages.all.compactMap { entry -> (String, RecordingRetention.Reason)? in
            if case .recordingRemoved(let path, let reason, _) = entry.message { (path, reason) } else { nil }
        }
        #expect(removed.map(\.0) == names.prefix(2).map { recordings.location + "/" + $0 })
        #expect(removed.allSatisfy { $0.1 == .age })
        #expect(Set(recordings.files.keys) == Set(names.suffix(4)), "\(recordings.files.keys.sorted())")
        for (index, name) in names.enumerated().dropFirst(2) {
            let summary = try Self.summary(try recordings.read(name))
            let boundary = VirtualClock.defaultWallStart.addingTimeInterval(Double(index * 600))
            #expect(summary.start.map { abs($0.timeIntervalSince(boundary)) < 0.001 } == true,
                    "\(name) starts at \(String(describing: summary.start))")
            #expect(abs(summary.durationSeconds - 600) < 0.001, "\(name): \(summary.durationSeconds) s")
        }
    }

    /// A recording kept by the free space of its store (`--min-free`), half an hour split every 5
    /// minutes: once the finished files leave less free than asked, the oldest go, first to last.
    @Test func aRecordingKeptByFreeSpaceLosesItsOldestFiles() throws {
        let clock = VirtualClock()
        let source = try LoopedSource(clock: clock, framesPerSecond: 10, keyframeIntervalFrames: 20, seconds: 1800)
        let recordings = MemoryStore(location: "virtual-recordings", clock: clock)
        // About two and a half files' worth of pictures may be kept.
        let fileBytes = Int64(source.pictures.reduce(0) { $0 + $1.data.count }) * 150
        recordings.capacityBytes = 100 * fileBytes
        let messages = MessageLog()
        var configuration = try Self.splitRecordingConfiguration(
            seconds: 1800, recordings: recordings, pattern: "%H-%M-%S.mp4", periodSeconds: 300,
            retention: RecordingRetention(minimumFreeBytes: 100 * fileBytes - fileBytes * 5 / 2))
        configuration.observers = [source.observer]

        let engine = LiveEngine(configuration: configuration, sources: [source], store: MemoryStore(), clock: clock,
                                messages: messages.sink)
        let outcome = try engine.runInVirtualTime(clock, messages: messages)
        #expect(outcome.failure == nil, "\(String(describing: outcome.failure))")
        let names = (0..<6).map { String(format: "08-%02d-00.mp4", $0 * 5) }
        #expect(outcome.recordedFiles == names.map { recordings.location + "/" + $0 })
        let removed = messages.all.compactMap { entry -> (String, RecordingRetention.Reason)? in
            if case .recordingRemoved(let path, let reason, _) = entry.message { (path, reason) } else { nil }
        }
        #expect(!removed.isEmpty && removed.allSatisfy { $0.1 == .freeSpace }, "\(removed)")
        #expect(removed.map(\.0) == names.prefix(removed.count).map { recordings.location + "/" + $0 }, "oldest first")
        #expect(Set(recordings.files.keys) == Set(names.dropFirst(removed.count)), "\(recordings.files.keys.sorted())")
    }

    /// A recording that shares its disk with another camera's (`run`'s `recordings: keep-size`): the other
    /// camera's files of an earlier run are older, so they go first, said as that camera's; then the
    /// stream's own oldest.
    @Test func aRecordingSharingItsDiskLosesTheOldestFileOfAnyCamera() throws {
        let clock = VirtualClock()
        let source = try LoopedSource(clock: clock, framesPerSecond: 10, keyframeIntervalFrames: 20, seconds: 1800)
        // The disk's own clock an hour behind: the other camera's files were written before this run.
        let disk = MemoryStore(location: "disk", clock: VirtualClock(wallStart: VirtualClock.defaultWallStart - 3600))
        let fileBytes = Int64(source.pictures.reduce(0) { $0 + $1.data.count }) * 150
        try disk.write([UInt8](repeating: 0, count: Int(fileBytes)), to: "yard/07-00-00.mp4")
        try disk.write([UInt8](repeating: 0, count: Int(fileBytes)), to: "yard/07-05-00.mp4")
        let shared = SharedRecordingRetention(retention: RecordingRetention(keepBytes: fileBytes * 5 / 2))
        let yardMessages = MessageLog()
        _ = try shared.join(store: disk.below("yard"), retention: RecordingRetention(), messages: yardMessages.sink)
        let messages = MessageLog()
        var configuration = try Self.splitRecordingConfiguration(
            seconds: 1800, recordings: disk, pattern: "%H-%M-%S.mp4", periodSeconds: 300, retention: RecordingRetention())
        configuration.record?.store = disk.below("door")
        configuration.record?.split?.sharedRetention = shared
        configuration.observers = [source.observer]

        let engine = LiveEngine(configuration: configuration, sources: [source], store: MemoryStore(), clock: clock,
                                messages: messages.sink)
        let outcome = try engine.runInVirtualTime(clock, messages: messages)
        #expect(outcome.failure == nil, "\(String(describing: outcome.failure))")
        func removed(_ log: MessageLog) -> [(String, RecordingRetention.Reason)] {
            log.all.compactMap { entry in
                if case .recordingRemoved(let path, let reason, _) = entry.message { (path, reason) } else { nil }
            }
        }
        #expect(removed(yardMessages).map(\.0) == ["disk/yard/07-00-00.mp4", "disk/yard/07-05-00.mp4"])
        let names = (0..<6).map { String(format: "08-%02d-00.mp4", $0 * 5) }
        let door = removed(messages)
        #expect(!door.isEmpty && door.map(\.0) == names.prefix(door.count).map { "disk/door/" + $0 }, "\(door)")
        #expect((door + removed(yardMessages)).allSatisfy { $0.1 == .size })
        #expect(Set(disk.files.keys) == Set(names.dropFirst(door.count).map { "door/" + $0 }), "\(disk.files.keys.sorted())")
        // What is kept is within the limit, but for the file written last, which no pass has seen.
        let keptBytes = names.dropFirst(door.count).dropLast().reduce(0) { $0 + ((try? disk.read("door/" + $1))?.count ?? 0) }
        #expect(Int64(keptBytes) <= fileBytes * 5 / 2)
    }

    /// A camera that falls silent before the duration: the engine stops it a grace second after the
    /// duration, counted from its first sample, and the stream ends with what it sent.
    @Test func aSourceSilentBeforeTheDurationIsStoppedAGraceSecondAfterIt() throws {
        let clock = VirtualClock()
        let source = try LoopedSource(clock: clock, framesPerSecond: 10, keyframeIntervalFrames: 20, seconds: 6,
                                      handsOnSamplePastEnd: false)
        var configuration = LiveConfiguration()
        configuration.size = OutputSize(width: 160, height: 96)
        configuration.framesPerSecond = 10
        configuration.segmentMilliseconds = 2000
        configuration.durationMilliseconds = 10_000
        configuration.observers = [source.observer]
        let store = MemoryStore()
        let engine = LiveEngine(configuration: configuration, sources: [source], store: store, clock: clock)
        let result = Locked<Result<LiveEngine.Outcome, LiveError>?>(nil)
        Thread {
            let outcome = Result { () throws(LiveError) in try engine.run() }
            result.withLock { $0 = outcome }
        }.start()

        let deadline = Date(timeIntervalSinceNow: 60)
        while source.delivered < 60, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(source.delivered == 60)
        let grace = LiveEngine.durationGraceMicroseconds
        clock.advance(toMicroseconds: clock.startMicroseconds + 10_000_000 + grace - 1)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(result.withLock { $0 } == nil, "stopped before the duration and its grace")
        clock.advance(toMicroseconds: clock.startMicroseconds + 10_000_000 + grace)
        while result.withLock({ $0 }) == nil, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let outcome = try #require(result.withLock { $0 }).get()
        #expect(outcome.failure == nil, "\(String(describing: outcome.failure))")
        let playlist = try MediaPlaylist.parse(String(decoding: try store.read(StreamLayout.playlistName), as: UTF8.self))
        #expect(playlist.endList)
        #expect(playlist.segments.map(\.durationSeconds) == [2, 2, 2], "\(playlist.segments)")
    }

    /// A recording file read box by box, as the recordings index reads it.
    static func summary(_ bytes: [UInt8]) throws -> RecordingFileSummary {
        var builder = RecordingFileSummary.Builder()
        var offset = 0
        while offset + 8 <= bytes.count {
            let size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            guard size >= 8, offset + size <= bytes.count else { break }
            try builder.take(type: type, offset: offset, size: size, bytes: Array(bytes[offset..<offset + size]))
            offset += size
        }
        return builder.result
    }
}
