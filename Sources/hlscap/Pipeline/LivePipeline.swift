import Dispatch
import Foundation
import HLSKit
import HLSMedia

/// capture threads → writing queue (scaler, encoders, segmenter) → output queue (files, playlist, deletions).
///
/// Each source reads on its own thread and stamps frames on the monotonic clock. One serial writing
/// queue owns the encoders and the segmenter, so no state is shared between threads; finished
/// segments go to a second serial queue so that a slow disk never blocks capture. Video frames that
/// arrive while the writing queue is full are dropped and counted; audio is never dropped.
final class LivePipeline {
    enum VideoInput: Equatable {
        case firstCamera, device(String), test, none

        init(_ text: String) {
            switch text {
            case "test": self = .test
            case "none": self = .none
            default: self = .device(text)
            }
        }
    }

    enum AudioInput: Equatable {
        case device(String), test, none

        init(_ text: String) {
            switch text {
            case "test": self = .test
            case "none": self = .none
            default: self = .device(text)
            }
        }
    }

    struct Settings {
        var video = VideoInput.firstCamera
        var audio = AudioInput.device("default")
        var size = OutputSize(width: 1280, height: 720)
        var framesPerSecond = 30
        var realtime = true
        var videoBitrate: Int?
        var audioBitrate = 128_000
        var preset = "veryfast"
        var segmentMilliseconds: Int64 = 2000
        var windowSize = 6
        var durationMilliseconds: Int64?
        var outputDirectory: String?
        var publish: PublishOptions?
        /// The local files are only a spool for the upload: report the origin's URL.
        var spooled = false
        var resume = false
        var overwrite = false
        var quiet = false
        var verbose = false
    }

    /// Video frames waiting for the writing queue before new ones are dropped: a quarter second at 30 fps.
    static let videoQueueLimit = 8

    let settings: Settings
    private let writingQueue = DispatchQueue(label: "hlscap.live.writing")
    private let outputQueue = DispatchQueue(label: "hlscap.live.output")
    private let stopped = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var queuedVideoFrames = 0
    private var backpressure: DispatchSemaphore?
    private var stopping = false
    /// Capture threads wait here until every source has started and the init section is stored;
    /// then frames are taken, or dropped when the start failed, so a device that cannot be opened
    /// leaves no stream behind.
    private let startup = DispatchGroup()
    private var accepting = false
    private var failure: CommandError?
    private var sources: [CaptureSource] = []

    // Writing-queue state.
    private var encoding: LiveEncoding!
    // Output-queue state.
    private var writer: LiveStreamWriter!
    /// Files that left the window, deleted after their retention time, at the latest at a clean stop.
    private var retired = RetiredFiles()
    private var publisher: StreamPublisher?
    private let statistics = LiveStatistics()

    init(settings: Settings) {
        self.settings = settings
        startup.enter()
    }

    private var outputDirectory: String { settings.outputDirectory ?? "." }

    func run() throws {
        let store = try prepareStore()
        sources = try makeSources()
        encoding = try LiveEncoding(settings: settings, hasVideo: settings.video != .none,
                                    hasAudio: settings.audio != .none, statistics: statistics)
        writer = try makeWriter(store: store, tracks: encoding.tracks)
        encoding.firstSequenceNumber = writer.nextSequenceNumber
        if !settings.realtime { backpressure = DispatchSemaphore(value: Self.videoQueueLimit) }
        try startSources()
        do {
            try writer.writeInitSection()
        } catch {
            abandonStart(sources[...])
            throw FilePackager.commandError(error)
        }
        publisher = settings.publish?.makeLivePublisher(store: store)
        publisher?.addFile(writer.initName)
        statistics.publisher = publisher

        let signals = SignalHandling { [weak self] second in
            if second { self?.exitAtOnce() } else { self?.requestStop(nil) }
        }
        defer { signals.cancel() }
        if let milliseconds = settings.durationMilliseconds, settings.realtime {
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(milliseconds))) { [weak self] in
                self?.requestStop(nil)
            }
        }
        let status = settings.quiet ? nil : StatusLine(statistics: statistics)
        status?.start()

        lock.withLock { accepting = true }
        startup.leave()
        stopped.wait()
        status?.stop()
        let location = settings.publish.map { $0.origin.appendingPathComponent(StreamWriter.playlistName).absoluteString }
        print("\(settings.spooled ? location! : outputDirectory + "/" + StreamWriter.playlistName): "
              + statistics.summary())
        if let failure { throw failure }
    }

    /// Starts every source; when one cannot start, stops the others and fails before anything is written.
    private func startSources() throws {
        for (index, source) in sources.enumerated() {
            do {
                try source.start { [weak self] event in self?.handle(event) }
            } catch let error as CaptureError {
                abandonStart(sources[..<index])
                throw CommandError(error.description, exitCode: .noInput)
            }
        }
    }

    /// Lets the waiting capture threads go on to drop their frames, and stops their sources.
    private func abandonStart(_ started: ArraySlice<CaptureSource>) {
        startup.leave()
        for source in started { source.stop() }
    }

    // MARK: Capture threads

    private func handle(_ event: CaptureEvent) {
        startup.wait()
        guard lock.withLock({ accepting }) else { return }
        switch event {
        case .video(let frame):
            if let backpressure {
                backpressure.wait()
            } else if !admitVideoFrame() {
                statistics.countDroppedFrame()
                return
            }
            writingQueue.async { [self] in
                encode(video: frame)
                releaseVideoFrame()
            }
        case .audio(let frame):
            writingQueue.async { [self] in encode(audio: frame) }
        case .failed(let error):
            requestStop(CommandError("\(error); the stream was ended", exitCode: .ioError))
        case .ended:
            requestStop(nil)
        }
    }

    private func admitVideoFrame() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard queuedVideoFrames < Self.videoQueueLimit else { return false }
        queuedVideoFrames += 1
        return true
    }

    private func releaseVideoFrame() {
        if let backpressure {
            backpressure.signal()
            return
        }
        lock.lock()
        queuedVideoFrames -= 1
        lock.unlock()
    }

    // MARK: Writing queue

    private func encode(video frame: Frame) {
        do {
            publish(try encoding.encode(video: frame))
        } catch {
            requestStop(CommandError("video encoding failed: \(error)", exitCode: .software))
        }
    }

    private func encode(audio frame: Frame) {
        do {
            publish(try encoding.encode(audio: frame))
        } catch {
            requestStop(CommandError("audio encoding failed: \(error)", exitCode: .software))
        }
    }

    // MARK: Output queue

    private func publish(_ segments: [Segment]) {
        guard !segments.isEmpty else { return }
        let timing = encoding.timing
        outputQueue.async { [self] in
            for segment in segments {
                do {
                    let written = try writer.write(segment, programDateTime: timing.programDateTime(of: segment))
                    let lastSampleTicks = Int64(segment.tracks.first?.samples.last?.durationTicks ?? 0)
                    let latency = timing.publishLatencyMicroseconds(of: segment, lastSampleTicks: lastSampleTicks)
                    statistics.countSegment(segment, bytes: written.byteCount, latencyMicroseconds: latency,
                                            path: written.path)
                    if settings.verbose { log(segment, written, latencyMicroseconds: latency) }
                    for removal in written.removals { scheduleRemoval(removal) }
                    if let publisher {
                        for dropped in publisher.addSegment(written.path, durationSeconds: segment.durationSeconds) {
                            printError("warning: the upload backlog is full; \(dropped) will not reach the origin")
                        }
                        publisher.updatePlaylist(writer.live.playlist)
                    }
                } catch {
                    requestStop(FilePackager.commandError(error))
                    return
                }
            }
        }
    }

    private func log(_ segment: Segment, _ written: LiveStreamWriter.Written, latencyMicroseconds: Int64?) {
        let latency = latencyMicroseconds.map { String(format: ", listed %.0f ms after its last frame", Double($0) / 1000) }
        FileHandle.standardError.write(Data(String(
            format: "hlscap: published %@ (%.3f s, %d bytes%@)\n", written.path, segment.durationSeconds,
            written.byteCount, latency ?? "").utf8))
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
                try writer.store.remove(path)
            } catch {
                printError("warning: \(error)")
            }
        }
    }

    private static func uptimeSeconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    // MARK: Stopping

    /// Stops capture, drains the writing queue (the last, possibly short segment), then ends the playlist.
    func requestStop(_ error: CommandError?) {
        lock.lock()
        if let error, failure == nil { failure = error }
        let first = !stopping
        stopping = true
        lock.unlock()
        guard first else { return }
        DispatchQueue.global().async { [self] in
            for source in sources { source.stop() }
            backpressure?.signal()
            writingQueue.async { [self] in
                let last = (try? encoding.finish()) ?? []
                publish(last)
                outputQueue.async { [self] in
                    do {
                        try writer.finish()
                    } catch {
                        record(FilePackager.commandError(error))
                    }
                    // A viewer holding an earlier playlist may still fetch what left the window: wait out
                    // the retention time (RFC 8216bis 6.2.2), then delete it.
                    if let last = retired.lastRemovableAt {
                        Thread.sleep(forTimeInterval: max(0, last - Self.uptimeSeconds()))
                        removeRetiredFiles(now: last)
                    }
                    guard let publisher, let options = settings.publish else {
                        stopped.signal()
                        return
                    }
                    publisher.updatePlaylist(writer.live.playlist)
                    // Waiting for the origin off the output queue lets a second interrupt end at once.
                    DispatchQueue.global().async { [self] in
                        let report = publisher.finish()
                        print(report.summaryLine(origin: options.origin))
                        if !report.isComplete { record(report.incompleteError(origin: options.origin)) }
                        stopped.signal()
                    }
                }
            }
        }
    }

    private func record(_ error: CommandError) {
        lock.lock()
        if failure == nil { failure = error }
        lock.unlock()
    }

    /// A second interrupt: end the playlist as it stands and leave, without waiting for uploads or
    /// a busy disk for long. Every file on disk is whole either way (temp file and rename).
    private func exitAtOnce() {
        let ended = DispatchSemaphore(value: 0)
        outputQueue.async { [self] in
            try? writer.finish()
            ended.signal()
        }
        _ = ended.wait(timeout: .now() + .milliseconds(Self.secondInterruptGraceMilliseconds))
        exit(ExitCode.interrupted.rawValue)
    }

    /// How long a second interrupt waits for the output queue to add EXT-X-ENDLIST.
    static let secondInterruptGraceMilliseconds = 500

    // MARK: Set-up

    private func prepareStore() throws -> DirectoryStore {
        let store: DirectoryStore
        do {
            store = try DirectoryStore(root: outputDirectory)
            try store.removeStaleTemporaryFiles()
        } catch {
            throw FilePackager.commandError(error)
        }
        if StreamWriter.holdsStream(store) && !settings.resume {
            guard settings.overwrite else {
                throw CommandError("\(outputDirectory) already holds a stream; add --resume to continue it, "
                    + "--overwrite to replace it, or choose another --out", exitCode: .cannotCreate)
            }
            do {
                try StreamWriter.removeStream(in: store)
            } catch {
                throw FilePackager.commandError(error)
            }
        }
        return store
    }

    private func makeWriter(store: DirectoryStore, tracks: [TrackDescription]) throws -> LiveStreamWriter {
        let target = Int((settings.segmentMilliseconds + 999) / 1000)
        guard settings.resume && StreamWriter.holdsStream(store) else {
            return LiveStreamWriter(store: store, tracks: tracks, targetDurationSeconds: target,
                                    windowSize: settings.windowSize)
        }
        do {
            return try LiveStreamWriter(resuming: store, tracks: tracks, targetDurationSeconds: target,
                                        windowSize: settings.windowSize)
        } catch {
            throw CommandError("\(error)", exitCode: .cannotCreate)
        }
    }

    private func makeSources() throws -> [CaptureSource] {
        var sources: [CaptureSource] = []
        if settings.video == .test || settings.audio == .test {
            var configuration = TestSource.Configuration()
            configuration.width = settings.size.width
            configuration.height = settings.size.height
            configuration.framesPerSecond = settings.framesPerSecond
            configuration.video = settings.video == .test
            configuration.audio = settings.audio == .test
            configuration.realtime = settings.realtime
            if !settings.realtime, let milliseconds = settings.durationMilliseconds {
                configuration.durationMicroseconds = milliseconds * 1000
            }
            sources.append(try TestSource(configuration))
        }
        switch settings.video {
        case .firstCamera, .device:
            var configuration = CameraSource.Configuration()
            if case .device(let path) = settings.video { configuration.device = path }
            configuration.width = settings.size.width
            configuration.height = settings.size.height
            configuration.frameRate = Rational(Int32(settings.framesPerSecond), 1)
            sources.append(CameraSource(configuration))
        case .test, .none:
            break
        }
        if case .device(let name) = settings.audio {
            var configuration = MicrophoneSource.Configuration()
            configuration.device = name
            sources.append(MicrophoneSource(configuration))
        }
        return sources
    }
}
