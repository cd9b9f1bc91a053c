import Dispatch
import Foundation
import HLSKit
import HLSMedia
import HLSOutput
import HLSOutput

/// The full-quality recording beside the stream (`--record`): a second encoding of the same capture,
/// with its own size, codec and rate, and the stream's AAC audio, written as one fragmented MP4 file
/// (`RecordingWriter`). It runs on its own queue with its own bounded backlog, so a slow encoder or a
/// failing disk stops only the recording, never the stream.
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

        /// The file as the user named it.
        var location: String { store.location + "/" + path }
    }

    /// A file starts near zero rather than at the stream's 10 s: one second still keeps the AAC
    /// priming's decode times from going negative.
    static let startOffsetSeconds: Int64 = 1

    /// Frames waiting for the recording's encoder before new ones are dropped: a second at 30 fps.
    static let frameQueueLimit = 30

    let settings: Settings
    private let queue = DispatchQueue(label: "hlscap.live.record")
    private let lock = NSLock()
    private let video: VideoRenditions
    private let tracks: [TrackDescription]
    private let audioTrack: Int?
    private var segmenter: Segmenter
    private var writer: RecordingWriter?
    private var queuedFrames = 0
    private var recordedFrames = 0
    private var droppedFrames = 0
    private var failure: String?
    private let messages: @Sendable (EngineMessage) -> Void

    init(settings: Settings, audio: TrackDescription?, messages: @escaping @Sendable (EngineMessage) -> Void) throws {
        self.settings = settings
        self.messages = messages
        video = try VideoRenditions(
            renditions: [VideoRenditionSettings(size: settings.size, bitrate: settings.bitrate, name: "record",
                                                codec: settings.codec)],
            frameRate: Rational(Int32(settings.framesPerSecond), 1), preset: settings.preset, zeroLatency: false,
            segmentMilliseconds: settings.segmentMilliseconds, threadCount: 0, firstTrackIndex: 0,
            makeEncoder: settings.makeVideoEncoder)
        var tracks = video.tracks
        if var audio {
            audio.trackID = 2
            tracks.append(audio)
        }
        self.tracks = tracks
        audioTrack = audio == nil ? nil : 1
        segmenter = Segmenter(configuration: .init(
            tracks: tracks.map { Segmenter.Track(timescale: $0.timescale, isVideo: $0.isVideo) },
            segmentMilliseconds: settings.segmentMilliseconds, startOffsetSeconds: Self.startOffsetSeconds))
        writer = try RecordingWriter(store: settings.store, path: settings.path, tracks: tracks)
    }

    /// A captured frame at `ticks` (90 kHz); the recorder keeps its own reference.
    func take(video frame: Frame, atTicks ticks: Int64) {
        let admitted = lock.withLock {
            guard failure == nil else { return false }
            guard queuedFrames < Self.frameQueueLimit else {
                droppedFrames += 1
                return false
            }
            queuedFrames += 1
            return true
        }
        guard admitted else { return }
        let reference: Frame
        do {
            reference = try frame.newReference()
        } catch {
            lock.withLock { queuedFrames -= 1 }
            return queue.async { [self] in record(error) }
        }
        reference.pts = ticks
        reference.timeBase = Rational(1, Int32(VideoEncoder.timescale.ticksPerSecond))
        let handoff = FrameHandoff(reference)
        queue.async { [self] in
            lock.withLock { queuedFrames -= 1 }
            run { try video.encode(handoff.frame, atTicks: ticks) }
            lock.withLock { recordedFrames += 1 }
        }
    }

    /// The stream's encoded audio, carried into the recording as it is.
    func take(audio samples: [EncodedSample]) {
        guard let audioTrack, !samples.isEmpty else { return }
        let moved = samples.map { sample in
            var sample = sample
            sample.track = audioTrack
            return sample
        }
        queue.async { [self] in run { moved } }
    }

    /// What the recording became.
    struct Outcome: Sendable {
        var path: String
        var frames: Int
        var dropped: Int
        var byteCount: Int
        var failure: String?
    }

    /// Drains the encoder, writes the last fragment and the index, and closes the file.
    func finish() -> Outcome {
        queue.sync {
            run { try video.flush() }
            if lock.withLock({ failure == nil }) {
                do {
                    for segment in segmenter.finish() { try writer?.append(segment) }
                    let bytes = writer?.byteCount ?? 0
                    try writer.take()?.finish()
                    lock.withLock { finishedBytes = bytes }
                } catch {
                    record(error)
                }
            }
        }
        return lock.withLock {
            Outcome(path: settings.location, frames: recordedFrames, dropped: droppedFrames, byteCount: finishedBytes,
                    failure: failure)
        }
    }

    private var finishedBytes = 0

    /// On `queue`: segments what `produce` encoded and appends finished fragments; the first failure
    /// ends the recording.
    private func run(_ produce: () throws -> [EncodedSample]) {
        guard lock.withLock({ failure == nil }) else { return }
        do {
            for sample in try produce() {
                for segment in segmenter.append(sample) { try writer?.append(segment) }
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
        writer = nil
        messages(.recordingStopped(path: settings.location, reason: "\(error)"))
    }
}
