import Foundation
import HLSKit
import HLSMedia
import HLSOutput

/// How `LiveEngine` encodes what its sources capture, and what it tells the caller on the way. Where
/// the stream goes is the engine's store; what it captures, its sources.
public struct LiveConfiguration: Sendable {
    /// The capture size, and the encoded size without a ladder.
    public var size = OutputSize(width: 1280, height: 720)
    public var framesPerSecond = 30
    /// Several video renditions, tallest first; nil encodes one at `size`.
    public var ladder: [LadderRung]?
    /// nil picks `VideoEncoderSettings.defaultBitrate` for the size and rate.
    public var videoBitrate: Int?
    public var videoCodec = VideoCodec.h264
    /// Makes each rendition's video encoder; libavcodec's software encoders unless another is given.
    public var makeVideoEncoder: VideoEncoderFactory = VideoEncoder.factory
    /// The capture time written into every encoded picture, the recording's too; copied video has none.
    public var overlay: TimeOverlay?
    /// A full-quality recording beside the stream, written as one fragmented MP4 file.
    public var record: Recording?

    public struct Recording: Sendable {
        /// Where the recording goes: the file `path` in `store`.
        public var store: any StreamStore
        public var path: String
        /// nil records at the capture size.
        public var size: OutputSize?
        public var codec = VideoCodec.hevc
        /// nil picks twice the stream's default rate for the size (H.264), 80 % of that for HEVC.
        public var bitrate: Int?
        /// The recording has an encoding of its own even when the stream copies its source (a size, codec
        /// or rate was asked for); without it a copied source is recorded as it is.
        public var encodes = true
        /// Split by time: a new file at each boundary of the period, named by the pattern (a path in
        /// `store`); nil records one file at `path`.
        public var split: Split?

        public struct Split: Sendable {
            public var pattern: RecordingPattern
            public var period: RecordingPeriod
            /// Where boundaries and names are reckoned: UTC unless local time was asked for.
            public var timeZone: TimeZone
            /// Which finished files are deleted as new ones come (none by default).
            public var retention = RecordingRetention()
            /// Retention shared with other streams' recordings on the same disk, applied after `retention`;
            /// nil: this recording's own rules alone.
            public var sharedRetention: SharedRecordingRetention?

            public init(pattern: RecordingPattern, period: RecordingPeriod, timeZone: TimeZone) {
                self.pattern = pattern
                self.period = period
                self.timeZone = timeZone
            }
        }

        public init(store: any StreamStore, path: String) {
            self.store = store
            self.path = path
        }

        /// The file's name as the user knows it.
        public var location: String { store.location + "/" + path }

        /// With a resumed stream, a new file beside the old one: `rec.mp4` → `rec-2.mp4`, `rec-3.mp4` …
        func pathAvoidingExisting() throws(StoreError) -> String {
            guard try store.exists(path) else { return path }
            let dot = path.lastIndex(of: ".").flatMap { path[$0...].contains("/") ? nil : $0 }
            let stem = dot.map { String(path[..<$0]) } ?? path
            let suffix = dot.map { String(path[$0...]) } ?? ""
            var number = 2
            while try store.exists("\(stem)-\(number)\(suffix)") { number += 1 }
            return "\(stem)-\(number)\(suffix)"
        }
    }
    public var audioBitrate = 128_000
    public var preset = "veryfast"
    public var segmentMilliseconds: Int64 = 2000
    /// EXT-X-TARGETDURATION when segments may run longer than `segmentMilliseconds`: copied video is cut
    /// only at the source's keyframes. Nil: the segment duration, rounded up.
    public var targetDurationSeconds: Int?
    public var windowSize = 6
    public var durationMilliseconds: Int64?
    /// Continue the stream the store holds, after a stop or a crash.
    public var resume = false
    /// Replace the stream the store holds.
    public var overwrite = false
    /// Makes the publisher that uploads what is stored in one rendition directory ("" for the top),
    /// given the store seen from there; nil keeps the stream in the store only.
    public var makePublisher: (@Sendable (_ store: any StreamStore, _ directory: String) -> StreamPublisher)?
    /// Cut segments into parts of at most this long (LL-HLS); nil cuts none.
    public var partMilliseconds: Int64?
    /// AES-128 encryption of every segment (no parts, no I-frame playlists).
    public var encryption: SegmentEncryption?
    /// Upload the keys with the stream, to `keys/` at the origin (`--publish-keys`).
    public var publishKeys = false
    /// Who follows the stream beyond the store, told in this order.
    public var observers: [any LiveStreamObserver] = []
    /// How many copied samples of a live source may wait for the writing queue before the source's thread
    /// waits too (a copied sample is never dropped: the pictures after it need it). About 13 s of 30 fps
    /// video with AAC, a few megabytes; more than the read-ahead to a second keyframe usually hands on at once.
    public var copiedSamplesWaitingAtMost = 1024

    public init() {}

    /// Up to 720p30 one thread keeps up in real time with room to spare and costs less CPU than
    /// sliced threads, which split every frame; larger pictures get every core. A ladder's rungs
    /// each take one thread.
    func encoderThreads(for size: OutputSize) -> Int {
        ladder != nil || size.width * size.height * framesPerSecond <= 1280 * 720 * 30 ? 1 : 0
    }
}

/// One listed segment, for a log line.
public struct LiveSegmentReport: Sendable {
    public var path: String
    public var durationSeconds: Double
    public var byteCount: Int
    /// From the capture of its last frame to the playlist that lists it.
    public var latencyMicroseconds: Int64?
    /// Video frames dropped since the stream started, as this segment is listed.
    public var droppedFramesSoFar: Int
}

/// Why a live stream could not start, or how it ended badly. Carries no exit status and names no
/// option: the command line decides what to say.
public enum LiveError: Error, CustomStringConvertible {
    /// The store holds a stream, and neither resuming nor replacing it was asked for.
    case holdsStream(location: String)
    case cannotResume(String)
    case store(StoreError)
    /// A device that could not be opened.
    case device(CaptureError)
    /// A device that failed while the stream was running; the stream was ended.
    case deviceFailed(CaptureError)
    case encoding(String)
    /// The recording's file exists, and neither resuming nor replacing was asked for.
    case recordingExists(path: String)
    /// The recording beside the stream failed; the stream went on.
    case recording(String)
    /// Some files did not reach the origin.
    case publishIncomplete(PublishReport)

    public var description: String {
        switch self {
        case .holdsStream(let location): "\(location) already holds a stream"
        case .cannotResume(let reason): reason
        case .store(let error): error.description
        case .device(let error): error.description
        case .deviceFailed(let error): "\(error); the stream was ended"
        case .encoding(let reason): reason
        case .recording(let reason): reason
        case .recordingExists(let path): "\(path) already exists"
        case .publishIncomplete(let report): "\(report.undelivered.count) of the stream's files did not reach the origin"
        }
    }
}
