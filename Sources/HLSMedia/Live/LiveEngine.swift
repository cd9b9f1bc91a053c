import Dispatch
import Foundation
import HLSKit
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
/// Unchecked sendable: the writing-queue state (`encoder`) is touched only on `writingQueue`, the
/// output state (`writer`, `publisher`) only on `outputQueue` once `run` has set it up, and the rest
/// is immutable or under `state`.
public final class LiveEngine: @unchecked Sendable {
    /// How long `endAtOnce` waits for the output queue to add EXT-X-ENDLIST.
    public static let endAtOnceGraceMilliseconds = 500

    public let configuration: LiveConfiguration
    public let statistics = LiveStatistics()

    private let writingQueue = DispatchQueue(label: "hlscap.live.writing")
    private let outputQueue = DispatchQueue(label: "hlscap.live.output")
    private let stopped = DispatchSemaphore(value: 0)
    /// Capture threads wait here until every source has started and the init sections are stored;
    /// then frames are taken, or dropped when the start failed, so a device that cannot be opened
    /// leaves no stream behind.
    private let startup = DispatchGroup()
    private let state = Locked(State())
    private var backpressure: DispatchSemaphore?
    private var sources: [CaptureSource] = []

    private struct State {
        var admission = VideoAdmission()
        var stopping = false
        var accepting = false
        var failure: LiveError?
        /// The stream's output failed: segments are no longer written (a recording goes on).
        var streamStopped = false
        /// Lost devices (`--reconnect`) by source index: what failed, since when, and what stands in.
        var outages: [Int: Outage] = [:]
    }

    private struct Outage {
        var error: CaptureError
        var sinceMicroseconds: Int64
        var standIn: StandInSource

        var secondsSoFar: Double { Double(MonotonicClock.nowMicroseconds() - sinceMicroseconds) / 1_000_000 }
    }

    // Writing-queue state.
    private var encoder: LiveEncoder?
    // Output-queue state.
    private var writer: StreamWriter?
    private var publisher: LayoutPublisher?
    /// Files that left the window, deleted after their retention time, at the latest at a clean stop.
    private var retired = RetiredFiles()

    public init(configuration: LiveConfiguration) {
        self.configuration = configuration
        startup.enter()
    }

    /// What the stream became.
    public struct Outcome: Sendable {
        /// One line: segments, duration, rate, frames, drops.
        public var summary: String
        /// What reached the origin, when publishing.
        public var publishReport: PublishReport?
        /// One line on the recording beside the stream, when there is one.
        public var recording: String?
        /// How the stream ended badly, after it had started.
        public var failure: LiveError?
    }

    /// Captures until `requestStop`, the duration, or the end of a source; throws when the stream
    /// cannot start.
    public func run() throws(LiveError) -> Outcome {
        let store = try prepareStore()
        sources = try makeSources()
        var configuration = self.configuration
        if let record = configuration.record {
            if configuration.resume {
                configuration.record?.path = record.pathAvoidingExisting()
            } else if !configuration.overwrite, FileManager.default.fileExists(atPath: record.path) {
                throw .recordingExists(path: record.path)
            }
        }
        let encoder: LiveEncoder
        do {
            encoder = try LiveEncoder(configuration: configuration, hasVideo: configuration.video != .none,
                                      hasAudio: configuration.audio != .none, statistics: statistics)
        } catch let error as StoreError {
            throw .store(error)
        } catch {
            throw .encoding("the encoders cannot start: \(error)")
        }
        statistics.nameRenditions(encoder.layout.renditions.filter { !$0.directory.hasPrefix("audio") }.map(\.name))
        var writer = try makeWriter(store: store, encoder: encoder)
        encoder.firstSequenceNumber = writer.nextSequenceNumber
        self.encoder = encoder
        if !configuration.realtime { backpressure = DispatchSemaphore(value: VideoAdmission.queueLimit) }
        try startSources()
        do {
            try writer.beginSection(tracks: encoder.tracks)
        } catch {
            abandonStart(sources[...])
            throw .store(error)
        }
        self.writer = writer
        configuration.onStart?(encoder.layout.renditions.map(\.directory), writer.mediaPlaylists,
                               encoder.partTargetSeconds ?? 0)
        var publisher: LayoutPublisher?
        if let make = configuration.makePublisher {
            do {
                publisher = try LayoutPublisher(layout: encoder.layout, store: store) { store, directory in
                    make(store, directory)
                }
            } catch {
                abandonStart(sources[...])
                throw .store(error)
            }
        }
        for path in writer.initPaths { publisher?.addFile(path) }
        statistics.publisher = publisher
        self.publisher = publisher

        if let milliseconds = configuration.durationMilliseconds, configuration.realtime {
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(milliseconds))) { [self] in
                requestStop()
            }
        }
        state.withLock { $0.accepting = true }
        startup.leave()
        stopped.wait()
        return Outcome(summary: statistics.summary(), publishReport: finalReport.withLock { $0 },
                       recording: recording.withLock { $0 }, failure: state.withLock { $0.failure })
    }

    private let finalReport = Locked<PublishReport?>(nil)
    private let recording = Locked<String?>(nil)

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
                throw .device(CaptureError(device: "\(source)", message: "\(error)"))
            }
        }
    }

    /// Lets the waiting capture threads go on to drop their frames, and stops their sources.
    private func abandonStart(_ started: ArraySlice<CaptureSource>) {
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

    /// A device was lost (`--reconnect`): a stand-in keeps its track flowing until it is back.
    private func standIn(for index: Int, lost: CaptureError) {
        let content: StandInSource.Content
        switch sources[index] {
        case let microphone as MicrophoneSource:
            content = .audio(sampleRate: microphone.sampleRate, channelCount: microphone.channelCount)
        case let camera as CameraSource:
            // About the size the camera delivered (made even), so the scalers see little change.
            content = .video(width: (camera.choice?.width ?? configuration.size.width) & ~1,
                             height: (camera.choice?.height ?? configuration.size.height) & ~1,
                             framesPerSecond: configuration.framesPerSecond)
        default:
            return stop(failure: .deviceFailed(lost))
        }
        let standIn: StandInSource
        do {
            standIn = try StandInSource(content)
        } catch {
            return stop(failure: .deviceFailed(lost))
        }
        let started = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.outages[index] = Outage(error: lost, sinceMicroseconds: MonotonicClock.nowMicroseconds(), standIn: standIn)
            return true
        }
        guard started else { return }
        FileHandle.standardError.write(Data("hlscap: warning: \(lost); waiting for it to come back (--reconnect)\n".utf8))
        standIn.start { [weak self] event in self?.handle(event, from: nil) }
    }

    /// A lost device is back: its stand-in stops before its first frame, and a new segment starts there
    /// after EXT-X-DISCONTINUITY.
    private func endStandIn(for index: Int) {
        guard let outage = state.withLock({ $0.outages.removeValue(forKey: index) }) else { return }
        outage.standIn.stop()
        let seconds = outage.secondsSoFar
        statistics.countOutage(device: outage.error.device, seconds: seconds)
        FileHandle.standardError.write(Data(String(
            format: "hlscap: %@ is back after %.1f s; the stream goes on after a discontinuity\n",
            outage.error.device, seconds).utf8))
        writingQueue.async { [self] in
            encoder?.startsSegmentAtNextFrame = true
            encoder?.nextSegmentFollowsDiscontinuity = true
        }
    }

    private func admitVideoFrame(_ frame: Frame) -> Bool {
        let captured = frame.pts ?? MonotonicClock.nowMicroseconds()
        return state.withLock { $0.admission.take(captureMicroseconds: captured) }
    }

    private func releaseVideoFrame() {
        if let backpressure {
            backpressure.signal()
            return
        }
        state.withLock { $0.admission.release() }
    }

    // MARK: Writing queue

    private func encode(video frame: Frame) {
        guard let encoder else { return }
        do {
            let segments = try encoder.encode(video: frame)
            publish(segments, parts: encoder.takeParts())
        } catch {
            stop(failure: .encoding("video encoding failed: \(error)"))
        }
    }

    private func encode(audio frame: Frame) {
        guard let encoder else { return }
        do {
            let segments = try encoder.encode(audio: frame)
            publish(segments, parts: encoder.takeParts())
        } catch {
            stop(failure: .encoding("audio encoding failed: \(error)"))
        }
    }

    // MARK: Output queue

    private func publish(_ segments: [Segment], parts: [Segment] = []) {
        guard !segments.isEmpty || !parts.isEmpty, let timing = encoder?.timing,
              !state.withLock({ $0.streamStopped }) else { return }
        outputQueue.async { [self] in
            // After a failed write, a later segment would leave a gap in the playlist that looks valid.
            guard var writer, !state.withLock({ $0.streamStopped }) else { return }
            defer { self.writer = writer }
            if let onPart = configuration.onPart {
                for part in parts {
                    for piece in writer.render(part: part) { onPart(piece) }
                }
            }
            for segment in segments {
                do throws(StoreError) {
                    let written = try writer.write(segment, programDateTime: timing.programDateTime(of: segment))
                    let lastSampleTicks = Int64(segment.tracks.first?.samples.last?.durationTicks ?? 0)
                    let latency = timing.publishLatencyMicroseconds(of: segment, lastSampleTicks: lastSampleTicks)
                    statistics.countSegment(segment, bytes: written.byteCount, renditionBytes: written.renditionByteCounts,
                                            latencyMicroseconds: latency, path: written.path)
                    configuration.onSegment?(LiveSegmentReport(path: written.path, durationSeconds: segment.durationSeconds,
                                                               byteCount: written.byteCount, latencyMicroseconds: latency,
                                                               droppedFramesSoFar: statistics.droppedFrameCount))
                    for removal in written.removals { scheduleRemoval(removal) }
                    if let publisher {
                        for path in written.paths where path.hasSuffix(".m4s") {
                            for dropped in publisher.addSegment(path, durationSeconds: segment.durationSeconds) {
                                FileHandle.standardError.write(Data(
                                    "hlscap: warning: the upload backlog is full; \(dropped) will not reach the origin\n".utf8))
                            }
                        }
                        publisher.updatePlaylists(writer.playlists)
                        if written.wroteMaster { publisher.addFile(StreamLayout.masterPlaylistName) }
                    }
                    configuration.onPlaylists?(writer.mediaPlaylists)
                } catch {
                    state.withLock { $0.streamStopped = true }
                    guard encoder?.recorder != nil else {
                        stop(failure: .store(error))
                        return
                    }
                    // The recording goes on: only the stream ends, reported at the stop.
                    record(.store(error))
                    FileHandle.standardError.write(Data(
                        "hlscap: warning: \(error); the stream stopped, the recording goes on\n".utf8))
                    return
                }
            }
        }
    }

    private func scheduleRemoval(_ removal: LivePlaylist.Removal) {
        // The publisher deletes the local copy itself, once the origin no longer needs it.
        if let publisher { return publisher.removeFile(removal.uri, afterSeconds: removal.retentionSeconds) }
        retired.add(removal.uri, removableAt: Self.uptimeSeconds() + removal.retentionSeconds)
        let milliseconds = Int((removal.retentionSeconds * 1000).rounded(.up))
        outputQueue.asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { [self] in
            removeRetiredFiles(now: Self.uptimeSeconds())
        }
    }

    private func removeRetiredFiles(now: Double) {
        for path in retired.takeRemovable(now: now) {
            do {
                try writer?.store.remove(path)
            } catch {
                FileHandle.standardError.write(Data("hlscap: warning: \(error)\n".utf8))
            }
        }
    }

    private static func uptimeSeconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

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
        let first = state.withLock { state in
            if let failure, state.failure == nil { state.failure = failure }
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        let outages = state.withLock { state in Array(state.outages.values) }
        for outage in outages {
            statistics.noteAwayAtStop(device: outage.error.device, seconds: outage.secondsSoFar)
        }
        let standIns = outages.map(\.standIn)
        DispatchQueue.global().async { [self] in
            for source in sources { source.stop() }
            for standIn in standIns { standIn.stop() }
            backpressure?.signal()
            writingQueue.async { [self] in
                do {
                    let segments = try encoder?.finish() ?? []
                    publish(segments, parts: encoder?.takeParts() ?? [])
                } catch {
                    record(.encoding("the last frames could not be encoded: \(error)"))
                }
                if let outcome = encoder?.recorder?.finish() {
                    let megabytes = Double(outcome.byteCount) / 1_000_000
                    recording.withLock {
                        $0 = String(format: "recorded %@: %d frames, %d dropped, %.1f MB", outcome.path,
                                    outcome.frames, outcome.dropped, megabytes)
                    }
                    if let failure = outcome.failure { record(.recording("the recording \(outcome.path) failed: \(failure)")) }
                }
                outputQueue.async { [self] in finishOutput() }
            }
        }
    }

    private func finishOutput() {
        do {
            _ = try writer?.finish()
        } catch {
            record(.store(error))
        }
        if let writer { configuration.onPlaylists?(writer.mediaPlaylists) }
        // A viewer holding an earlier playlist may still fetch what left the window: wait out the
        // retention time (RFC 8216bis 6.2.2), then delete it. A stream whose writing failed ends at
        // once instead, and leaves those files to the run that resumes it.
        if let last = retired.lastRemovableAt, !state.withLock({ $0.streamStopped }) {
            Thread.sleep(forTimeInterval: max(0, last - Self.uptimeSeconds()))
            removeRetiredFiles(now: last)
        }
        guard let publisher, let writer else {
            stopped.signal()
            return
        }
        publisher.updatePlaylists(writer.playlists)
        // The I-frame playlists go up once, complete.
        for (path, _) in writer.playlists where path.hasSuffix(StreamLayout.iFramePlaylistName) {
            publisher.addFile(path)
        }
        // Waiting for the origin off the output queue lets a second interrupt end at once.
        DispatchQueue.global().async { [self] in
            let report = publisher.finish()
            finalReport.withLock { $0 = report }
            if !report.isComplete { record(.publishIncomplete(report)) }
            stopped.signal()
        }
    }

    private func record(_ error: LiveError) {
        state.withLock { state in
            if state.failure == nil { state.failure = error }
        }
    }

    /// A second interrupt: end the playlists as they stand, without waiting for uploads or a busy disk
    /// for long. Every file on disk is whole either way (temp file and rename).
    public func endAtOnce() {
        let ended = DispatchSemaphore(value: 0)
        outputQueue.async { [self] in
            try? writer?.finish()
            ended.signal()
        }
        _ = ended.wait(timeout: .now() + .milliseconds(Self.endAtOnceGraceMilliseconds))
    }

    // MARK: Set-up

    private func prepareStore() throws(LiveError) -> any StreamStore {
        let store: any StreamStore
        let holdsStream: Bool
        do {
            store = try DirectoryStore(root: configuration.outputDirectory)
            _ = try store.removeStaleTemporaryFiles()
            holdsStream = try StreamWriter.holdsStream(store)
        } catch {
            throw .store(error)
        }
        if holdsStream && !configuration.resume {
            guard configuration.overwrite else { throw .holdsStream(directory: configuration.outputDirectory) }
            do {
                try StreamWriter.removeStream(in: store)
            } catch {
                throw .store(error)
            }
        }
        return store
    }

    private func makeWriter(store: any StreamStore, encoder: LiveEncoder) throws(LiveError) -> StreamWriter {
        let policy = StreamWriter.PlaylistPolicy.live(
            targetDurationSeconds: Int((configuration.segmentMilliseconds + 999) / 1000),
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
        do {
            return try StreamWriter(resuming: store, layout: encoder.layout, tracks: encoder.tracks, policy: policy,
                                    declared: encoder.declared)
        } catch {
            throw .cannotResume("\(error)")
        }
    }

    private func makeSources() throws(LiveError) -> [CaptureSource] {
        var sources: [CaptureSource] = []
        if configuration.video == .test || configuration.audio.isTest {
            var test = TestSource.Configuration()
            test.width = configuration.size.width
            test.height = configuration.size.height
            test.framesPerSecond = configuration.framesPerSecond
            test.video = configuration.video == .test
            test.audio = configuration.audio.isTest
            if case .test(let partsPerMillion) = configuration.audio { test.audioClockPartsPerMillion = partsPerMillion }
            test.realtime = configuration.realtime
            if !configuration.realtime, let milliseconds = configuration.durationMilliseconds {
                test.durationMicroseconds = milliseconds * 1000
            }
            do {
                sources.append(try TestSource(test))
            } catch {
                throw .device(CaptureError(device: "test", message: "\(error)"))
            }
        }
        switch configuration.video {
        case .firstCamera, .device:
            var camera = CameraSource.Configuration()
            if case .device(let path) = configuration.video { camera.device = path }
            camera.width = configuration.size.width
            camera.height = configuration.size.height
            camera.frameRate = Rational(Int32(configuration.framesPerSecond), 1)
            camera.reconnect = configuration.reconnect
            sources.append(CameraSource(camera))
        case .test, .none:
            break
        }
        if case .device(let name) = configuration.audio {
            var microphone = MicrophoneSource.Configuration()
            microphone.device = name
            microphone.reconnect = configuration.reconnect
            sources.append(MicrophoneSource(microphone))
        }
        return sources
    }
}
