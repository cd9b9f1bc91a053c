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
    var chunk: @Sendable (StreamWriter.RenditionChunk) -> Void = { _ in }
    var part: @Sendable (StreamWriter.RenditionPart) -> Void = { _ in }
    var segmentPublished: @Sendable (LiveSegmentReport) -> Void = { _ in }
    var counted: @Sendable (LiveStatistics.Snapshot) -> Void = { _ in }

    func chunk(_ chunk: StreamWriter.RenditionChunk) { self.chunk(chunk) }
    func part(_ part: StreamWriter.RenditionPart) { self.part(part) }
    func segmentPublished(_ report: LiveSegmentReport) { segmentPublished(report) }
    func counted(_ statistics: LiveStatistics.Snapshot) { counted(statistics) }
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

/// A camera's copied H.264 in virtual time: one group of pictures, encoded once, handed on again and
/// again with its timestamps running on, so that an hour of live stream costs what segmenting and
/// storing it costs, not what encoding it would.
///
/// Before each sample it moves `clock` to the sample's capture time, so the engine's timers (retention,
/// the duration) fire as they would in real time. At each keyframe it waits until the engine has listed
/// the segment that keyframe ends (`observer`, the engine's last), so the clock never runs ahead of
/// the stream, and nothing is dropped. When its `seconds` are delivered it hands on the next sample, the
/// first past the engine's duration, as a camera would, and waits to be stopped: that sample ends the stream.
final class LoopedSource: CaptureSource, @unchecked Sendable {
    let clock: VirtualClock
    let framesPerSecond: Int
    let seconds: Int
    /// Whether the sample after the last second is handed on; without it the camera falls silent.
    let handsOnSamplePastEnd: Bool
    /// One group of pictures, the first a keyframe, decode times from 0 at 90 kHz.
    let pictures: [EncodedSample]
    let track: TrackDescription
    /// Tell the engine about it: it counts the segments listed.
    let observer = ListedSegments()
    private let stopped = DispatchSemaphore(value: 0)
    private let state = Locked((stopping: false, delivered: 0))

    /// Encodes `keyframeIntervalFrames` of the test pattern once.
    init(clock: VirtualClock, width: Int = 160, height: Int = 96, framesPerSecond: Int,
         keyframeIntervalFrames: Int, seconds: Int, handsOnSamplePastEnd: Bool = true) throws {
        self.clock = clock
        self.framesPerSecond = framesPerSecond
        self.seconds = seconds
        self.handsOnSamplePastEnd = handsOnSamplePastEnd
        var test = TestSource.Configuration()
        test.width = width
        test.height = height
        test.framesPerSecond = framesPerSecond
        test.audio = false
        test.realtime = false
        test.durationMicroseconds = Int64(keyframeIntervalFrames) * 1_000_000 / Int64(framesPerSecond)
        var settings = VideoEncoderSettings(width: width, height: height,
                                            frameRate: Rational(Int32(framesPerSecond), 1), bitrate: 100_000,
                                            preset: "ultrafast", zeroLatency: true,
                                            keyframeIntervalFrames: keyframeIntervalFrames, threadCount: 1)
        settings.codec = .h264
        let encoder = try VideoEncoder(settings: settings, trackIndex: 0)
        let source = try TestSource(test)
        let encoded = Locked<[EncodedSample]>([])
        let ended = DispatchSemaphore(value: 0)
        try source.start { event in
            switch event {
            case .video(let frame):
                let samples = (try? encoder.encode(frame, forceKeyframe: false)) ?? []
                encoded.withLock { $0 += samples }
            case .ended:
                let samples = (try? encoder.flush()) ?? []
                encoded.withLock { $0 += samples }
                ended.signal()
            default:
                break
            }
        }
        ended.wait()
        source.stop()
        let made = encoded.withLock { $0 }
        precondition(made.count == keyframeIntervalFrames && made.first?.isSync == true
                     && made.dropFirst().allSatisfy { !$0.isSync && $0.compositionOffset == 0 },
                     "one closed group of pictures: \(made.count) samples")
        let first = made[0].decodeTime
        pictures = made.map { sample in
            var sample = sample
            sample.decodeTime -= first
            return sample
        }
        track = TrackDescription(trackID: 1, timescale: VideoEncoder.timescale, format: encoder.trackFormat)
    }

    var name: String { "looped" }
    var delivers: CaptureKinds { .video }
    var copiedTracks: [TrackDescription] { [track] }
    /// Samples handed on.
    var delivered: Int { state.withLock { $0.delivered } }

    private var handler: ((CaptureEvent) -> Void)?

    func start(handler: @escaping (CaptureEvent) -> Void) throws {
        self.handler = handler
        Thread.detachNewThread { [self] in deliver() }
    }

    func stop() {
        let first = state.withLock { state in
            defer { state.stopping = true }
            return !state.stopping
        }
        if first { stopped.signal() }
    }

    private func deliver() {
        guard let handler else { return }
        let ticksPerFrame = Int64(VideoEncoder.timescale.ticksPerSecond) / Int64(framesPerSecond)
        let startMicroseconds = clock.monotonicMicroseconds()
        let count = seconds * framesPerSecond
        for index in 0...count {
            guard !state.withLock({ $0.stopping }), index < count || handsOnSamplePastEnd else { break }
            let microseconds = startMicroseconds + Int64(index) * 1_000_000 / Int64(framesPerSecond)
            clock.advance(toMicroseconds: microseconds)
            var sample = pictures[index % pictures.count]
            sample.decodeTime = microseconds * Int64(VideoEncoder.timescale.ticksPerSecond) / 1_000_000
            sample.durationHint = ticksPerFrame
            let listedBefore = observer.count
            handler(.copied(sample))
            guard index < count else { break }
            state.withLock { $0.delivered += 1 }
            // A keyframe ends the segment before it: wait for the engine to list it.
            if sample.isSync, index > 0 { observer.wait(forMoreThan: listedBefore) }
        }
        stopped.wait()
    }
}

/// Counts the segments an engine listed, and lets a thread wait for the next. It counts the playlists
/// it is told of, the last thing the engine does for a segment: with it last among the observers, the
/// engine is done with the segment when the waiting thread goes on.
final class ListedSegments: LiveStreamObserver, @unchecked Sendable {
    private let condition = NSCondition()
    private var listed = 0

    var count: Int { condition.withLock { listed } }

    func playlists(_ playlists: [MediaPlaylist]) {
        condition.withLock {
            listed += 1
            condition.broadcast()
        }
    }

    /// Waits (10 s at most, in real time) until more than `count` segments were listed.
    func wait(forMoreThan count: Int) {
        let deadline = Date(timeIntervalSinceNow: 10)
        condition.withLock {
            while listed <= count, condition.wait(until: deadline) {}
        }
    }
}

extension LiveEngine {
    /// Runs the engine on `clock` until it returns, moving the clock on past each wait for retention
    /// times that a clean stop announces: nothing else moves virtual time once the sources are stopped.
    func runInVirtualTime(_ clock: VirtualClock, messages: MessageLog) throws -> Outcome {
        let result = Locked<Result<Outcome, LiveError>?>(nil)
        let thread = Thread { [self] in
            let outcome = Result { () throws(LiveError) in try run() }
            result.withLock { $0 = outcome }
        }
        thread.start()
        var waitsPassed = 0
        while true {
            if let done = result.withLock({ $0 }) { return try done.get() }
            let waits = messages.all.compactMap { entry -> Double? in
                if case .waitingForRetention(_, let seconds) = entry.message { seconds } else { nil }
            }
            for seconds in waits.dropFirst(waitsPassed) { clock.advance(bySeconds: seconds) }
            waitsPassed = waits.count
            Thread.sleep(forTimeInterval: 0.005)
        }
    }
}
