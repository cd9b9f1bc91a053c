import Foundation
import Glibc
import HLSBase
import HLSKit
import HLSMedia
import HLSOutput
import Testing
@testable import HLSEngine

/// A wall clock that starts at a known instant and runs with the monotonic clock, so that program
/// date-times are known.
struct TestClock: Scheduler {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    let monotonicStart = MonotonicClock.nowMicroseconds()

    func monotonicMicroseconds() -> Int64 { MonotonicClock.nowMicroseconds() }

    func now() -> Date {
        Self.start.addingTimeInterval(Double(MonotonicClock.nowMicroseconds() - monotonicStart) / 1_000_000)
    }

    func schedule(afterMicroseconds microseconds: Int64, on queue: DispatchQueue,
                  _ action: @escaping @Sendable () -> Void) -> ScheduledTimer {
        SystemClock().schedule(afterMicroseconds: microseconds, on: queue, action)
    }
}

/// An observer made of closures.
struct Observing: LiveStreamObserver {
    var part: @Sendable (StreamWriter.RenditionPart) -> Void = { _ in }
    var segmentPublished: @Sendable (LiveSegmentReport) -> Void = { _ in }

    func part(_ part: StreamWriter.RenditionPart) { self.part(part) }
    func segmentPublished(_ report: LiveSegmentReport) { segmentPublished(report) }
}

/// The messages an engine gave, with when each came (seconds on the monotonic clock).
final class MessageLog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(seconds: Double, message: EngineMessage)] = []

    var sink: @Sendable (EngineMessage) -> Void {
        { [self] message in
            let seconds = Double(MonotonicClock.nowMicroseconds()) / 1_000_000
            lock.withLock { entries.append((seconds, message)) }
        }
    }

    var all: [(seconds: Double, message: EngineMessage)] { lock.withLock { entries } }
}

/// One in-process live run: the test source (or given sources) into a store in memory.
struct EngineRun {
    var configuration = LiveConfiguration()
    var test = TestSource.Configuration()
    let store: any StreamStore
    let messages = MessageLog()

    init(store: any StreamStore = MemoryStore(), seconds: Int64, realtime: Bool = false) {
        self.store = store
        configuration.size = OutputSize(width: 160, height: 96)
        configuration.framesPerSecond = 30
        configuration.segmentMilliseconds = 1000
        configuration.audioBitrate = 64_000
        configuration.preset = "ultrafast"
        configuration.durationMilliseconds = seconds * 1000
        test.width = 160
        test.height = 96
        test.framesPerSecond = 30
        test.realtime = realtime
        // Out of real time the source ends the stream; in real time the engine's timer does.
        if !realtime { test.durationMicroseconds = seconds * 1_000_000 }
    }

    func makeEngine(sources: [any CaptureSource]? = nil) throws -> LiveEngine {
        LiveEngine(configuration: configuration, sources: try sources ?? [TestSource(test)], store: store,
                   clock: TestClock(), messages: messages.sink)
    }

    func text(_ path: String) throws -> String {
        String(decoding: try store.read(path), as: UTF8.self)
    }

    func playlist(_ path: String = StreamLayout.playlistName) throws -> MediaPlaylist {
        try MediaPlaylist.parse(try text(path))
    }

    /// The validator's errors on the stream (warnings do not count).
    func validationErrors(_ entry: String = StreamLayout.playlistName) throws -> [Finding] {
        let report = try StreamValidator(loader: StoreLoader(store: store)).validate(StoreLoader.url(entry))
        return report.findings.filter { $0.severity == .error }
    }

    /// Every file a playlist names is in the store.
    func expectListedFilesStored(_ path: String = StreamLayout.playlistName, directory: String = "") throws {
        let prefix = directory.isEmpty ? "" : directory + "/"
        for segment in try playlist(path).segments {
            #expect(try store.exists(prefix + segment.uri), "\(prefix + segment.uri)")
            if let map = segment.mapURI { #expect(try store.exists(prefix + map), "\(prefix + map)") }
        }
    }
}
