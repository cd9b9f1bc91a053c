import Dispatch
import Foundation
import HLSBase
import HLSKit
import HLSMedia
import HLSOutput

/// The full-quality recording beside the stream (`--record`): a second encoding of the same capture,
/// with its own size, codec and rate, and the stream's AAC audio, written as one fragmented MP4 file
/// (`RecordingWriter`). It runs on its own queue with its own bounded backlog, so a slow encoder or a
/// failing disk stops only the recording, never the stream.
///
/// With a copied source (a camera's own H.264 or HEVC), the recording is the source itself: its
/// samples as they came, beside the stream's sound, no second encoding.
///
/// Split by time (`--record-every`), a new file starts at the first frame captured at or after each
/// boundary of the period on the wall clock: the encoder makes that frame an IDR, the segmenter starts
/// a fragment there, and the file before is finished. Each file is complete on its own, its times
/// starting near zero like the first one's.
///
/// Unchecked sendable: the encoder, segmenter and writer are touched only on `queue`; the counters
/// and the failure only under `lock`.
final class LiveRecorder: @unchecked Sendable {
    struct Settings: Sendable {
        var store: any StreamStore
        var path: String
        var size: OutputSize
        var codec: VideoCodec
        var bitrate: Int
        var framesPerSecond: Int
        var preset: String
        var segmentMilliseconds: Int64
        var makeVideoEncoder: VideoEncoderFactory
        /// Split by time: `path` is then unused, each file's name comes from the pattern; its retention
        /// says which finished files are deleted as new ones come.
        var split: LiveConfiguration.Recording.Split?

        /// The file as the user named it.
        var location: String { store.location + "/" + path }
    }

    /// A file starts near zero rather than at the stream's 10 s: one second still keeps the AAC
    /// priming's decode times from going negative.
    static let startOffsetSeconds: Int64 = 1

    /// Frames waiting for the recording's encoder before new ones are dropped: a second at 30 fps.
    static let frameQueueLimit = 30

    let settings: Settings
    /// Set before capture starts: with a source that is not live (the test source out of real time, a
    /// file read as fast as it goes) the capture waits for the recording's encoder instead of losing
    /// frames to it.
    var waitsForEncoder = false
    private let room = DispatchSemaphore(value: LiveRecorder.frameQueueLimit)
    private let queue = DispatchQueue(label: "hlscap.live.record")
    private let lock = NSLock()
    /// The recording's own encoding; nil when it records a copied source as it is.
    private let video: VideoRenditions?
    private let tracks: [TrackDescription]
    private let audioTrack: Int?
    private var segmenter: Segmenter
    private var writer: RecordingWriter?
    private var queuedFrames = 0
    private var recordedFrames = 0
    private var droppedFrames = 0
    private var failure: String?
    private let messages: @Sendable (EngineMessage) -> Void
    /// The wall clock, for a file finished or retention applied before any frame was taken.
    private let clock: any Scheduler
    /// Split by time, on `queue`: the next boundary, the files asked for at cuts not yet reached, and how
    /// many files were started (the cuts the segmenter placed for them, plus the first).
    private var nextBoundary: Date?
    private var pendingFiles: [(path: String, start: Date)] = []
    private var startedFiles = 0
    /// The open file's path in the store, and when its first frame was captured.
    private var currentPath: String?
    private var currentStart: Date?
    /// How far the open file's times are moved back, in lead-track ticks: 0 for the first file.
    private var fileStartLeadTicks: Int64 = 0
    private let trackTimescales: [UInt32: Timescale]
    /// The files finished whole, by location.
    private var finishedFiles: [String] = []
    /// On `queue`: the wall-clock time of the last frame taken, and the split recording's files kept.
    private var lastCaptured: Date?
    /// On `queue`: the wall-clock time of capture tick zero, for each fragment's `prft`.
    private var wallClockAtZero: Date?
    private var kept = RecordingIndex()
    /// With retention shared across streams, this recording's place in it: its files are kept there
    /// instead of in `kept`.
    private var sharedMember: SharedRecordingRetention.Member?

    /// `copying`: the copied source's video track, recorded as it is instead of encoded.
    init(settings: Settings, copying copiedVideo: TrackDescription? = nil, audio: TrackDescription?,
         clock: any Scheduler, messages: @escaping @Sendable (EngineMessage) -> Void) throws {
        self.settings = settings
        self.clock = clock
        self.messages = messages
        var tracks: [TrackDescription]
        if var copiedVideo {
            video = nil
            copiedVideo.trackID = 1
            tracks = [copiedVideo]
        } else {
            let video = try VideoRenditions(
                renditions: [VideoRenditionSettings(size: settings.size, bitrate: settings.bitrate, name: "record",
                                                    codec: settings.codec)],
                frameRate: Rational(Int32(settings.framesPerSecond), 1), preset: settings.preset, zeroLatency: false,
                segmentMilliseconds: settings.segmentMilliseconds, threadCount: 0, firstTrackIndex: 0,
                makeEncoder: settings.makeVideoEncoder)
            self.video = video
            tracks = video.tracks
        }
        if var audio {
            audio.trackID = 2
            tracks.append(audio)
        }
        self.tracks = tracks
        trackTimescales = Dictionary(uniqueKeysWithValues: tracks.map { ($0.trackID, $0.timescale) })
        audioTrack = audio == nil ? nil : 1
        segmenter = Segmenter(configuration: .init(
            tracks: tracks.map { Segmenter.Track(timescale: $0.timescale, isVideo: $0.isVideo) },
            segmentMilliseconds: settings.segmentMilliseconds, startOffsetSeconds: Self.startOffsetSeconds))
        if settings.split == nil {
            writer = try RecordingWriter(store: settings.store, path: settings.path, tracks: tracks)
            currentPath = settings.path
        } else if let split = settings.split, let shared = split.sharedRetention {
            sharedMember = try shared.join(store: settings.store, retention: split.retention, messages: messages)
        } else if settings.split?.retention.isEmpty == false {
            // The files of earlier runs, with when each was last written: one scan at start; afterwards the
            // index grows as files are finished.
            kept = RecordingIndex(try settings.store.files(below: "").filter { $0.path.hasSuffix(".mp4") }.map {
                RecordingIndex.File(path: $0.path, end: $0.modified, byteCount: $0.byteCount)
            })
        }
    }

    /// A captured frame at `ticks` (90 kHz), captured at `date` on the wall clock; the recorder keeps its
    /// own reference.
    func take(video frame: Frame, atTicks ticks: Int64, capturedAt date: Date) {
        if waitsForEncoder { room.wait() }
        let admitted = lock.withLock {
            guard failure == nil else { return false }
            guard waitsForEncoder || queuedFrames < Self.frameQueueLimit else {
                droppedFrames += 1
                return false
            }
            queuedFrames += 1
            return true
        }
        guard admitted else {
            if waitsForEncoder { room.signal() }
            return
        }
        let reference: Frame
        do {
            reference = try frame.newReference()
        } catch {
            lock.withLock { queuedFrames -= 1 }
            if waitsForEncoder { room.signal() }
            return queue.async { [self] in record(error) }
        }
        reference.pts = ticks
        reference.timeBase = Rational(1, Int32(VideoEncoder.timescale.ticksPerSecond))
        let handoff = FrameHandoff(reference)
        queue.async { [self] in
            lock.withLock { queuedFrames -= 1 }
            if wallClockAtZero == nil { wallClockAtZero = date.addingTimeInterval(-VideoEncoder.timescale.seconds(ticks)) }
            if let split = settings.split { startFileIfDue(split, ticks: ticks, date: date) }
            run { try video?.encode(handoff.frame, atTicks: ticks) ?? [] }
            lock.withLock { recordedFrames += 1 }
            if waitsForEncoder { room.signal() }
        }
    }

    /// A copied source's video sample, its times on the stream's capture ticks (as `take(video:)`'s),
    /// captured at `date`: recorded as it came.
    func take(copied sample: EncodedSample, capturedAt date: Date) {
        var moved = sample
        moved.track = 0
        queue.async { [self, moved] in
            guard lock.withLock({ failure == nil }) else { return }
            let ticks = moved.presentationTime
            if wallClockAtZero == nil {
                wallClockAtZero = date.addingTimeInterval(-tracks[0].timescale.seconds(moved.decodeTime))
            }
            if let split = settings.split { startFileIfDue(split, ticks: ticks, date: date) }
            run { [moved] }
            lock.withLock { recordedFrames += 1 }
        }
    }

    /// The stream's audio, encoded or copied, carried into the recording as it is.
    func take(audio samples: [EncodedSample]) {
        guard let audioTrack, !samples.isEmpty else { return }
        let moved = samples.map { sample in
            var sample = sample
            sample.track = audioTrack
            return sample
        }
        queue.async { [self] in run { moved } }
    }

    /// On `queue`: the first frame opens the first file; the first frame at or after a boundary asks for
    /// an IDR and a fragment there, where the next file will start.
    private func startFileIfDue(_ split: LiveConfiguration.Recording.Split, ticks: Int64, date: Date) {
        guard lock.withLock({ failure == nil }) else { return }
        lastCaptured = date
        if let boundary = nextBoundary, date < boundary { return }
        nextBoundary = split.period.boundary(after: date, timeZone: split.timeZone)
        let path = split.pattern.expand(date, timeZone: split.timeZone)
        guard writer != nil || startedFiles > 0 else {
            do {
                try open(path, startedAt: date)
                try applyRetention(now: date)
            } catch {
                record(error)
            }
            return
        }
        pendingFiles.append((path, date))
        video?.addCut(atTicks: ticks)
        segmenter.addCut(atSourceTicks: ticks)
    }

    private func open(_ path: String, startedAt start: Date) throws {
        writer = try RecordingWriter(store: settings.store, path: path, tracks: tracks)
        currentPath = path
        currentStart = start
        startedFiles += 1
        messages(.recordingFileStarted(path: settings.store.location + "/" + path))
    }

    /// On `queue`: appends a finished fragment, first starting the next file when the fragment begins at
    /// a cut placed for it; its times are moved back so that it starts where the first file did.
    private func write(_ segment: Segment) throws {
        if !pendingFiles.isEmpty, segmenter.placedCuts.count >= startedFiles,
           segment.startTicks >= segmenter.placedCuts[startedFiles - 1].placedTicks {
            try finishFile()
            let next = pendingFiles.removeFirst()
            try open(next.path, startedAt: next.start)
            try applyRetention(now: lastCaptured ?? clock.now())
            fileStartLeadTicks = segment.startTicks - Self.startOffsetSeconds * segment.timescale.perSecond
        }
        // The segment's first frame on the wall clock: its output time back to capture ticks.
        let capturedAt = wallClockAtZero.map {
            $0.addingTimeInterval(segment.timescale.seconds(segment.startTicks - (segmenter.leadDelta ?? 0)))
        }
        let written = fileStartLeadTicks == 0 ? segment
            : segment.movedEarlier(byLeadTicks: fileStartLeadTicks, timescales: trackTimescales)
        try writer?.append(written, capturedAt: capturedAt)
    }

    /// On `queue`: writes the open file's index and closes it.
    private func finishFile() throws {
        guard let finishing = writer.take() else { return }
        let location = finishing.store.location + "/" + finishing.path
        let path = finishing.path
        let bytes = finishing.byteCount
        try finishing.finish()
        finishedFiles.append(location)
        if settings.split != nil {
            let file = RecordingIndex.File(path: path, end: lastCaptured ?? clock.now(), byteCount: Int64(bytes))
            if let sharedMember, let shared = settings.split?.sharedRetention {
                shared.finished(file, startedAt: currentStart ?? file.end, by: sharedMember)
            } else {
                kept.add(file)
            }
        }
        lock.withLock { finishedBytes += bytes }
        if settings.split != nil { messages(.recordingFileFinished(path: location, byteCount: bytes)) }
    }

    /// On `queue`: deletes the files retention no longer keeps, oldest first, and the folders they leave
    /// empty. The file being written is not in the index.
    private func applyRetention(now: Date) throws {
        if let sharedMember, let shared = settings.split?.sharedRetention {
            return try shared.apply(now: now, for: sharedMember)
        }
        guard let retention = settings.split?.retention, !retention.isEmpty else { return }
        let store = settings.store
        let free = retention.minimumFreeBytes == nil ? nil : try store.availableBytes()
        for deletion in retention.deletions(from: &kept, now: now, freeBytes: free) {
            try store.remove(deletion.file.path)
            removeFoldersLeftEmpty(above: deletion.file.path)
            messages(.recordingRemoved(path: store.location + "/" + deletion.file.path, reason: deletion.reason,
                                        byteCount: deletion.file.byteCount))
        }
    }

    /// A folder that cannot be removed is said, and the recording goes on.
    private func removeFoldersLeftEmpty(above path: String) {
        var folder = (path as NSString).deletingLastPathComponent
        do {
            while !folder.isEmpty, try settings.store.removeDirectoryIfEmpty(folder) {
                folder = (folder as NSString).deletingLastPathComponent
            }
        } catch {
            messages(.removalFailed(error))
        }
    }

    /// What the recording became.
    struct Outcome: Sendable {
        /// The last file.
        var path: String
        /// Every file finished whole, in order.
        var files: [String] = []
        var frames: Int
        var dropped: Int
        var byteCount: Int
        var failure: String?
    }

    /// Drains the encoder, writes the last fragment and the index, and closes the file.
    func finish() -> Outcome {
        let files = queue.sync {
            run { try video?.flush() ?? [] }
            if lock.withLock({ failure == nil }) {
                do {
                    for segment in segmenter.finish() { try write(segment) }
                    try finishFile()
                } catch {
                    record(error)
                }
            }
            return finishedFiles
        }
        return lock.withLock {
            Outcome(path: files.last ?? settings.location, files: files, frames: recordedFrames, dropped: droppedFrames,
                    byteCount: finishedBytes, failure: failure)
        }
    }

    private var finishedBytes = 0

    /// On `queue`: segments what `produce` encoded and appends finished fragments; the first failure
    /// ends the recording.
    private func run(_ produce: () throws -> [EncodedSample]) {
        guard lock.withLock({ failure == nil }) else { return }
        do {
            for sample in try produce() {
                for segment in segmenter.append(sample) { try write(segment) }
            }
        } catch {
            record(error)
        }
    }

    private func record(_ error: any Error) {
        let first = lock.withLock {
            defer { if failure == nil { failure = "\(error)" } }
            return failure == nil
        }
        guard first else { return }
        let location = currentPath.map { settings.store.location + "/" + $0 } ?? settings.location
        writer = nil
        messages(.recordingStopped(path: location, reason: "\(error)"))
    }
}
