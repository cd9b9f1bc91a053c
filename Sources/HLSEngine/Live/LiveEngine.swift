import Dispatch
import Foundation
import HLSBase
import HLSKit
import HLSMedia
import HLSOutput

/// capture threads → writing queue (scalers, encoders, segmenter) → output queue (files, playlists,
/// deletions, uploads).
///
/// Each source reads on its own thread and stamps frames on the monotonic clock. One serial writing
/// queue owns the encoders and the segmenter, so no state is shared between threads; finished
/// segments go to a second serial queue so that a slow disk never blocks capture. Video frames that
/// arrive while the writing queue is full are dropped and counted — before any rendition sees them,
/// so every rendition drops the same frames and the rungs stay aligned; audio is never dropped.
///
/// What it captures (its sources), where the stream goes (its store), its clock and where its messages
/// go are given to it: tests run it in process on the test source and a store in memory.
///
/// What happens to a finished segment is `LiveOutput`'s business.
///
/// Unchecked sendable: the writing-queue state (`encoder`) is touched only on `writingQueue`, and the
/// rest is immutable or under a lock.
public final class LiveEngine: @unchecked Sendable {
    /// How long `endAtOnce` waits for the output queue to add EXT-X-ENDLIST.
    public static let endAtOnceGraceMilliseconds = 500

    public let configuration: LiveConfiguration
    public let statistics: LiveStatistics
    public let store: any StreamStore
    private let sources: [any CaptureSource]
    private let clock: any Scheduler
    private let messages: @Sendable (EngineMessage) -> Void

    private let writingQueue = DispatchQueue(label: "hlscap.live.writing")
    private let stopped = DispatchSemaphore(value: 0)
    /// Capture threads wait here until every source has started and the init sections are stored;
    /// then frames are taken, or dropped when the start failed, so a device that cannot be opened
    /// leaves no stream behind.
    private let startup = DispatchGroup()
    private let state = Locked(State())
    private var backpressure: DispatchSemaphore?
    /// Copied samples go into segments as they are (no ladder decodes them): the little work each takes
    /// is done on the capture thread when nothing waits before it. Set before capture starts.
    private var copiedSamplesAreOnlyCopied = false
    /// In a live run, room for `configuration.copiedSamplesWaitingAtMost` copied samples on the writing queue.
    private let copiedRoom: DispatchSemaphore

    private struct State {
        var admission = VideoAdmission()
        var stopping = false
        var accepting = false
        var failure: LiveError?
        /// Lost devices by source index: what failed, since when, and what stands in.
        var outages: [Int: Outage] = [:]
        /// The capture time of each source's latest picture, by source index: where a stand-in follows on.
        var lastPictureMicroseconds: [Int: Int64] = [:]
        /// Copied samples on the writing queue in a live run, and the most there were.
        var copiedWaiting = 0
        var copiedWaitingAtMost = 0
        var copiedSourceHeldBack = false
    }

    private struct Outage {
        var error: CaptureError
        var sinceMicroseconds: Int64
        /// One for each track the source delivers.
        var standIns: [StandInSource]

        func secondsSoFar(_ clock: any Scheduler) -> Double {
            Double(clock.monotonicMicroseconds() - sinceMicroseconds) / 1_000_000
        }
    }

    // Writing-queue state.
    private var encoder: LiveEncoder?
    /// With a duration, the stream ends at the first frame past it; a source that stops sending before then
    /// is stopped this long after the duration (from the first frame), by `durationTimer`.
    static let durationGraceMicroseconds: Int64 = 1_000_000
    private var durationTimer: ScheduledTimer?
    /// Set by `run` before any frame is taken.
    private let output = Locked<LiveOutput?>(nil)

    /// `sources` are started by `run`, each on its own thread; `messages` receives the warnings and
    /// notices of the way, on any thread.
    public init(configuration: LiveConfiguration, sources: [any CaptureSource], store: any StreamStore,
                clock: any Scheduler = SystemClock(),
                messages: @escaping @Sendable (EngineMessage) -> Void = { _ in }) {
        self.configuration = configuration
        self.sources = sources
        self.store = store
        self.clock = clock
        self.messages = messages
        statistics = LiveStatistics(clock: clock)
        copiedRoom = DispatchSemaphore(value: max(1, configuration.copiedSamplesWaitingAtMost))
    }

    /// What the stream became.
    public struct Outcome: Sendable {
        /// One line: segments, duration, rate, frames, drops.
        public var summary: String
        /// What reached the origin, when publishing.
        public var publishReport: PublishReport?
        /// One line on the recording beside the stream, when there is one.
        public var recording: String?
        /// Every file of the recording finished whole (its store's location and path), in order: one
        /// unless it was split by time; none when it failed.
        public var recordedFiles: [String] = []
        /// How the stream ended badly, after it had started.
        public var failure: LiveError?
        /// A second interrupt ended it at once (`endAtOnce`): the playlists have ENDLIST, what waited
        /// is left as it is.
        public var endedAtOnce: Bool
    }

    /// Every source's kinds together.
    private var delivers: CaptureKinds { sources.reduce(CaptureKinds()) { $0.union($1.delivers) } }

    /// Captures until `requestStop`, the duration, the end of a source, or `endAtOnce`; throws when the
    /// stream cannot start.
    public func run() throws(LiveError) -> Outcome {
        precondition(!sources.isEmpty, "a live stream captures something")
        try prepareStore()
        var configuration = self.configuration
        // A recording split by time names its files by their start: nothing to find or avoid beforehand,
        // but its folder must take files now, not at the first frame.
        if let record = configuration.record, record.split != nil {
            let probe = ".hlscap-write-check"
            do {
                try record.store.write([], to: probe, durability: .deferred)
                try record.store.remove(probe)
            } catch {
                throw .store(error)
            }
        }
        if let record = configuration.record, record.split == nil {
            let exists: Bool
            do {
                exists = try record.store.exists(record.path)
                if configuration.resume { configuration.record?.path = try record.pathAvoidingExisting() }
            } catch {
                throw .store(error)
            }
            if exists, !configuration.resume, !configuration.overwrite { throw .recordingExists(path: record.location) }
        }
        let encoder: LiveEncoder
        do {
            encoder = try LiveEncoder(configuration: configuration, delivers: delivers,
                                      copied: sources.flatMap(\.copiedTracks), statistics: statistics,
                                      clock: clock, messages: messages)
        } catch let error as StoreError {
            throw .store(error)
        } catch {
            throw .encoding("the encoders cannot start: \(error)")
        }
        let layout = encoder.layout
        if encoder.copiesVideo { statistics.noteVideoCopied() }
        statistics.nameRenditions(layout.renditions.indices.filter { !layout.isAudioRendition($0, in: encoder.tracks) }
            .map { layout.renditions[$0].name })
        var writer = try makeWriter(encoder: encoder)
        writer.encryption = configuration.encryption
        encoder.firstSequenceNumber = writer.nextSequenceNumber
        self.encoder = encoder
        let isLive = sources.allSatisfy(\.isLive)
        if !isLive { backpressure = DispatchSemaphore(value: VideoAdmission.queueLimit) }
        copiedSamplesAreOnlyCopied = !encoder.decodesCopiedVideo
        encoder.recorder?.waitsForEncoder = !isLive
        // Entered only now, when capture threads are about to exist: a run refused before this point leaves no
        // group entered (which libdispatch can never free).
        startup.enter()
        try startSources()
        do {
            try writer.beginSection(tracks: encoder.tracks)
        } catch {
            abandonStart(sources[...])
            throw .store(error)
        }
        let directories = encoder.layout.renditions.map(\.directory)
        for observer in configuration.observers {
            observer.started(directories: directories, playlists: writer.mediaPlaylists,
                             partTargetSeconds: encoder.partTargetSeconds ?? 0)
        }
        var publisher: LayoutPublisher?
        if let make = configuration.makePublisher {
            do {
                let keyStore = configuration.publishKeys ? configuration.encryption?.keyStore : nil
                publisher = try LayoutPublisher(layout: encoder.layout, store: store, keyStore: keyStore) { store, directory in
                    make(store, directory)
                }
                if let publisher, keyStore != nil { configuration.encryption?.onNewKey = { publisher.addKey($0) } }
            } catch {
                abandonStart(sources[...])
                throw .store(error)
            }
        }
        for path in writer.initPaths { publisher?.addFile(path) }
        statistics.publisher = publisher
        let counters = statistics.snapshot()
        for observer in configuration.observers { observer.counted(counters) }
        let output = LiveOutput(
            writer: writer, publisher: publisher, store: store, clock: clock, observers: configuration.observers,
            statistics: statistics, messages: messages,
            onStreamStopped: { [self] error in
                guard self.encoder?.recorder != nil else { return stop(failure: .store(error)) }
                // The recording goes on: only the stream ends, reported at the stop.
                record(.store(error))
                messages(.streamStopped(error))
            },
            onFinishFailed: { [self] error in record(.store(error)) })
        // What an earlier run left waiting for its retention time goes when that time comes.
        let now = clock.now()
        for pending in writer.pendingRemovals {
            output.retire(pending.path, afterSeconds: pending.removableAt.timeIntervalSince(now))
        }
        self.output.withLock { $0 = output }

        // A stop asked for while the stream started (a signal, a device lost) is carried out now that it runs.
        let stopAsked = state.withLock { state in
            state.accepting = true
            return state.stopping
        }
        startup.leave()
        if stopAsked { shutDown() }
        stopped.wait()
        let failure = state.withLock { $0.failure }
        return Outcome(summary: statistics.summary(), publishReport: finalReport.withLock { $0 },
                       recording: recording.withLock { $0 }, recordedFiles: recordedFiles.withLock { $0 },
                       failure: failure, endedAtOnce: output.endedAtOnce)
    }

    private let finalReport = Locked<PublishReport?>(nil)
    private let recording = Locked<String?>(nil)
    private let recordedFiles = Locked<[String]>([])

    /// Starts every source; when one cannot start, stops the others and fails before anything is written.
    private func startSources() throws(LiveError) {
        for (index, source) in sources.enumerated() {
            do {
                try source.start { [weak self] event in self?.handle(event, from: index) }
            } catch let error as CaptureError {
                abandonStart(sources[..<index])
                throw .device(error)
            } catch {
                abandonStart(sources[..<index])
                throw .device(CaptureError(device: source.name, message: "\(error)"))
            }
        }
    }

    /// Lets the waiting capture threads go on to drop their frames, and stops their sources.
    private func abandonStart(_ started: ArraySlice<any CaptureSource>) {
        startup.leave()
        for source in started { source.stop() }
    }

    // MARK: Capture threads

    /// An event of source `index` (nil: a stand-in).
    private func handle(_ event: CaptureEvent, from index: Int?) {
        startup.wait()
        guard state.withLock({ $0.accepting }) else { return }
        switch event {
        case .video(let frame):
            if let index, let captured = frame.pts {
                state.withLock { $0.lastPictureMicroseconds[index] = captured }
            }
            if let backpressure {
                backpressure.wait()
            } else if !admitVideoFrame(frame) {
                statistics.countDroppedFrame()
                return
            }
            let handoff = FrameHandoff(frame)
            writingQueue.async { [self] in
                encode(video: handoff.frame)
                releaseVideoFrame()
            }
        case .audio(let frame):
            let handoff = FrameHandoff(frame)
            writingQueue.async { [self] in encode(audio: handoff.frame) }
        case .copied(let sample):
            // A copied picture is never dropped (the pictures after it need it): when the writing queue is
            // behind, the source waits (a live one only once many samples wait).
            var waitingBefore = 0
            if let backpressure { backpressure.wait() } else { waitingBefore = waitForCopiedRoom(from: index) }
            let write: @Sendable () -> Void = { [self] in
                encode("copied") { try $0.encode(copied: sample) }
                if let backpressure { backpressure.signal() } else { releaseCopiedRoom() }
            }
            // A live sample only copied, with no other waiting before it, is written on this thread (`sync`
            // runs it here, in the queue's order): waking a thread of the queue for each sample cost more
            // than writing it, 14 % of the CPU of 16 copied cameras.
            if backpressure == nil, copiedSamplesAreOnlyCopied, waitingBefore == 0 {
                writingQueue.sync(execute: write)
            } else {
                writingQueue.async(execute: write)
            }
        case .audioClock(let partsPerMillion, let resyncs):
            statistics.measureAudioClock(partsPerMillion: partsPerMillion, resyncs: resyncs)
        case .failed(let error):
            stop(failure: .deviceFailed(error))
        case .ended:
            requestStop()
        case .lost(let error):
            if let index { standIn(for: index, lost: error) }
        case .restored:
            if let index { endStandIn(for: index) }
        }
    }

    /// A device was lost and is waited for: stand-ins keep its tracks flowing until it is back.
    private func standIn(for index: Int, lost: CaptureError) {
        let contents = sources[index].standIns
        guard !contents.isEmpty else { return stop(failure: .deviceFailed(lost)) }
        // The stand-ins take up a frame after the device's last picture, which may be a stall timeout
        // back; the sound's with the picture's, so that the two stay together.
        let lastPicture = state.withLock { $0.lastPictureMicroseconds[index] }
        let framesPerSecond = contents.lazy.compactMap { content -> Int? in
            if case .video(_, _, let framesPerSecond) = content { return framesPerSecond } else { return nil }
        }.first
        let resumeAt = lastPicture.flatMap { last in framesPerSecond.map { last + 1_000_000 / Int64($0) } }
        let standIns: [StandInSource]
        do {
            standIns = try contents.map { content throws(CaptureError) in
                try StandInSource(content, firstFrameAtMicroseconds: resumeAt)
            }
        } catch {
            return stop(failure: .deviceFailed(lost))
        }
        let started = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.outages[index] = Outage(error: lost, sinceMicroseconds: clock.monotonicMicroseconds(),
                                          standIns: standIns)
            return true
        }
        guard started else { return }
        messages(.deviceLost(lost))
        for standIn in standIns { standIn.start { [weak self] event in self?.handle(event, from: nil) } }
    }

    /// A lost device is back: its stand-in stops before its first frame, and a new segment starts there
    /// after EXT-X-DISCONTINUITY.
    private func endStandIn(for index: Int) {
        guard let outage = state.withLock({ $0.outages.removeValue(forKey: index) }) else { return }
        for standIn in outage.standIns { standIn.stop() }
        let seconds = outage.secondsSoFar(clock)
        statistics.countOutage(device: outage.error.device, seconds: seconds)
        messages(.deviceBack(device: outage.error.device, seconds: seconds))
        writingQueue.async { [self] in
            encoder?.startsSegmentAtNextFrame = true
            encoder?.nextSegmentFollowsDiscontinuity = true
        }
    }

    private func admitVideoFrame(_ frame: Frame) -> Bool {
        let captured = frame.pts ?? clock.monotonicMicroseconds()
        return state.withLock { $0.admission.take(captureMicroseconds: captured) }
    }

    /// Takes room for one copied sample of a live source on the writing queue, waiting for it when
    /// `configuration.copiedSamplesWaitingAtMost` wait already (said once a run); how many were waiting
    /// before it.
    private func waitForCopiedRoom(from index: Int?) -> Int {
        if copiedRoom.wait(timeout: .now()) == .timedOut {
            let first = state.withLock { state in
                defer { state.copiedSourceHeldBack = true }
                return !state.copiedSourceHeldBack
            }
            if first {
                let source = index.map { sources[$0].name } ?? "a stand-in"
                messages(.copiedSourceHeldBack(source: source, waiting: configuration.copiedSamplesWaitingAtMost))
            }
            copiedRoom.wait()
        }
        return state.withLock { state in
            defer { state.copiedWaiting += 1 }
            state.copiedWaitingAtMost = max(state.copiedWaitingAtMost, state.copiedWaiting + 1)
            return state.copiedWaiting
        }
    }

    private func releaseCopiedRoom() {
        state.withLock { $0.copiedWaiting -= 1 }
        copiedRoom.signal()
    }

    /// The most copied samples of a live run that waited for the writing queue at once.
    var copiedSamplesWaitingAtMost: Int { state.withLock { $0.copiedWaitingAtMost } }

    private func releaseVideoFrame() {
        if let backpressure {
            backpressure.signal()
            return
        }
        state.withLock { $0.admission.release() }
    }

    // MARK: Writing queue

    private func encode(video frame: Frame) {
        encode("video") { try $0.encode(video: frame) }
    }

    private func encode(audio frame: Frame) {
        encode("audio") { try $0.encode(audio: frame) }
    }

    /// Runs one frame through the encoder and hands on what it finished; a failure ends the stream.
    private func encode(_ kind: String, _ body: (LiveEncoder) throws -> [Segment]) {
        guard let encoder else { return }
        do {
            let segments = try body(encoder)
            publish(segments, parts: encoder.takeParts())
        } catch {
            stop(failure: .encoding("\(kind) encoding failed: \(error)"))
        }
        // A source read as fast as it goes (no backpressure in live runs) ends by itself.
        if backpressure == nil { endAtDuration(encoder) }
    }

    /// Stops the stream when its lead track went past the duration; from its first frame on, a timer
    /// stops it should the sources fall silent before that.
    private func endAtDuration(_ encoder: LiveEncoder) {
        guard let milliseconds = configuration.durationMilliseconds else { return }
        if encoder.reachedDuration { return requestStop() }
        guard durationTimer == nil, let origin = encoder.timing.originMicroseconds else { return }
        let deadline = origin + milliseconds * 1000 + Self.durationGraceMicroseconds
        durationTimer = clock.schedule(afterMicroseconds: deadline - clock.monotonicMicroseconds(),
                                       on: .global()) { [self] in requestStop() }
    }

    // MARK: Output

    private func publish(_ segments: [Segment], parts: [Segmenter.PartPiece] = []) {
        guard let timing = encoder?.timing, let output = output.withLock({ $0 }) else { return }
        output.publish(segments, parts: parts, timing: timing)
    }

    // MARK: Stopping

    /// Starts a new segment at the next video frame, with an IDR in every rendition: an operator marking a
    /// scene change. Callable from any thread.
    public func startSegmentAtNextFrame() {
        writingQueue.async { [self] in encoder?.startsSegmentAtNextFrame = true }
    }

    /// Stops capture, drains the writing queue (the last, possibly short segment), then ends the playlists.
    public func requestStop() {
        stop(failure: nil)
    }

    private func stop(failure: LiveError?) {
        let (first, running) = state.withLock { state in
            // Once the stream is ending, a device that fails or ends is one its stop has not reached yet
            // (a camera's server may close the stream meanwhile): the stop is not its failure.
            if case .deviceFailed = failure, state.stopping { return (false, state.accepting) }
            if let failure, state.failure == nil { state.failure = failure }
            defer { state.stopping = true }
            return (!state.stopping, state.accepting)
        }
        // Before the stream runs there is nothing to end yet: `run` ends it as soon as it does.
        guard first, running else { return }
        shutDown()
    }

    /// Stops capture, writes what is left and ends the output; `stopped` is signalled when it is done.
    private func shutDown() {
        let outages = state.withLock { state in Array(state.outages.values) }
        for outage in outages {
            statistics.noteAwayAtStop(device: outage.error.device, seconds: outage.secondsSoFar(clock))
        }
        let standIns = outages.flatMap(\.standIns)
        // A thread of its own: stopping a source waits for its reading thread to end, which may wait for
        // the writing queue; many streams ending at once on Dispatch's pool, as wide as the cores, could
        // take every thread of it and leave the writing queues none to drain with.
        let stopping = Thread { [self] in
            for source in sources { source.stop() }
            for standIn in standIns { standIn.stop() }
            backpressure?.signal()
            writingQueue.async { [self] in
                durationTimer?.cancel()
                do {
                    let segments = try encoder?.finish() ?? []
                    publish(segments, parts: encoder?.takeParts() ?? [])
                } catch {
                    record(.encoding("the last frames could not be encoded: \(error)"))
                }
                if let outcome = encoder?.recorder?.finish() {
                    let megabytes = Double(outcome.byteCount) / 1_000_000
                    let what = outcome.files.count > 1 ? "\(outcome.files.count) files, the last \(outcome.path)" : outcome.path
                    recording.withLock {
                        $0 = String(format: "recorded %@: %d frames, %d dropped, %.1f MB", what,
                                    outcome.frames, outcome.dropped, megabytes)
                    }
                    if let failure = outcome.failure {
                        record(.recording("the recording \(outcome.path) failed: \(failure)"))
                    } else {
                        recordedFiles.withLock { $0 = outcome.files }
                    }
                }
                output.withLock { $0 }?.finish { [self] report in
                    if let report {
                        finalReport.withLock { $0 = report }
                        if !report.isComplete { record(.publishIncomplete(report)) }
                    }
                    stopped.signal()
                }
            }
        }
        stopping.name = "hlscap stop"
        stopping.start()
    }

    private func record(_ error: LiveError) {
        state.withLock { state in
            if state.failure == nil { state.failure = error }
        }
    }

    /// A second interrupt: end the playlists as they stand, without waiting for uploads, retention times
    /// or a busy disk for long, and let `run` return. Every file on disk is whole either way (temporary
    /// file and rename). Files still waiting for their retention time are left, listed for the next run
    /// in the store to delete when their time comes.
    public func endAtOnce() {
        output.withLock { $0 }?.endAtOnce(graceMilliseconds: Self.endAtOnceGraceMilliseconds)
        stopped.signal()
    }

    // MARK: Set-up

    private func prepareStore() throws(LiveError) {
        let holdsStream: Bool
        do {
            _ = try store.removeStaleTemporaryFiles()
            holdsStream = try StreamWriter.holdsStream(store)
        } catch {
            throw .store(error)
        }
        guard holdsStream && !configuration.resume else { return }
        guard configuration.overwrite else { throw .holdsStream(location: store.location) }
        do {
            try StreamWriter.removeStream(in: store)
        } catch {
            throw .store(error)
        }
    }

    private func makeWriter(encoder: LiveEncoder) throws(LiveError) -> StreamWriter {
        let policy = StreamWriter.PlaylistPolicy.live(
            targetDurationSeconds: configuration.targetDurationSeconds ?? Int((configuration.segmentMilliseconds + 999) / 1000),
            windowSize: configuration.windowSize)
        let holdsStream: Bool
        do {
            holdsStream = try StreamWriter.holdsStream(store)
        } catch {
            throw .store(error)
        }
        guard configuration.resume && holdsStream else {
            return StreamWriter(store: store, layout: encoder.layout, policy: policy, declared: encoder.declared)
        }
        let writer: StreamWriter
        do {
            writer = try StreamWriter(resuming: store, layout: encoder.layout, tracks: encoder.tracks, policy: policy,
                                      declared: encoder.declared, now: clock.now())
        } catch let error as StoreError {
            throw .store(error)
        } catch {
            throw .cannotResume("\(error)")
        }
        return writer
    }
}
