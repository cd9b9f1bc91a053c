import Foundation
import HLSKit
import HLSOutput

/// What `LiveEngine` captures, how it encodes, and where the stream goes.
public struct LiveConfiguration: Sendable {
    public enum VideoInput: Sendable, Equatable {
        case firstCamera, device(String), test, none

        public init(_ text: String) {
            switch text {
            case "test": self = .test
            case "none": self = .none
            default: self = .device(text)
            }
        }
    }

    public enum AudioInput: Sendable, Equatable {
        /// `test`, or `test:+5000ppm`: the tone as a microphone whose sample clock runs that fast
        /// (`TestSource.Configuration.audioClockPartsPerMillion`).
        case device(String), test(clockPartsPerMillion: Int), none

        public init(_ text: String) {
            switch text {
            case "test": self = .test(clockPartsPerMillion: 0)
            case "none": self = .none
            default:
                if text.hasPrefix("test:"), text.hasSuffix("ppm"),
                   let partsPerMillion = Int(text.dropFirst("test:".count).dropLast("ppm".count)) {
                    self = .test(clockPartsPerMillion: partsPerMillion)
                } else {
                    self = .device(text)
                }
            }
        }

        var isTest: Bool {
            if case .test = self { return true }
            return false
        }
    }

    public var video = VideoInput.firstCamera
    public var audio = AudioInput.device("default")
    /// The capture size, and the encoded size without a ladder.
    public var size = OutputSize(width: 1280, height: 720)
    public var framesPerSecond = 30
    /// With the test source: as fast as it encodes instead of in real time.
    public var realtime = true
    /// A camera or microphone that fails or disappears is waited for while a stand-in (a dark picture
    /// or silence) keeps its track flowing; the stream goes on after EXT-X-DISCONTINUITY when it comes
    /// back. Without it such a failure ends the stream.
    public var reconnect = false
    /// Several video renditions, tallest first; nil encodes one at `size`.
    public var ladder: [LadderRung]?
    /// nil picks about 0.1 bit per pixel.
    public var videoBitrate: Int?
    public var videoCodec = VideoCodec.h264
    /// A full-quality recording beside the stream, written as one fragmented MP4 file.
    public var record: Recording?

    public struct Recording: Sendable {
        public var path: String
        /// nil records at the capture size.
        public var size: OutputSize?
        public var codec = VideoCodec.hevc
        /// nil picks twice the stream's default rate for the size (H.264), 80 % of that for HEVC.
        public var bitrate: Int?

        public init(path: String) {
            self.path = path
        }

        /// With a resumed stream, a new file beside the old one: `rec.mp4` → `rec-2.mp4`, `rec-3.mp4` …
        func pathAvoidingExisting() -> String {
            guard FileManager.default.fileExists(atPath: path) else { return path }
            let url = URL(fileURLWithPath: path)
            let stem = url.deletingPathExtension().lastPathComponent
            let suffix = url.pathExtension.isEmpty ? "" : "." + url.pathExtension
            let directory = url.deletingLastPathComponent()
            for number in 2... {
                let candidate = directory.appendingPathComponent("\(stem)-\(number)\(suffix)").path
                if !FileManager.default.fileExists(atPath: candidate) { return candidate }
            }
            return path
        }
    }
    public var audioBitrate = 128_000
    public var preset = "veryfast"
    public var segmentMilliseconds: Int64 = 2000
    public var windowSize = 6
    public var durationMilliseconds: Int64?
    public var outputDirectory = "."
    public var resume = false
    public var overwrite = false
    /// Makes the publisher that uploads what is stored in one rendition directory ("" for the top),
    /// given a store rooted there; nil keeps the stream on disk only.
    public var makePublisher: (@Sendable (_ store: any StreamStore, _ directory: String) -> StreamPublisher)?
    /// Called on the output queue after each segment is listed.
    public var onSegment: (@Sendable (LiveSegmentReport) -> Void)?
    /// Cut segments into parts of at most this long (LL-HLS); nil cuts none.
    public var partMilliseconds: Int64?
    /// Called on the output queue once the stream's renditions and first playlists are known, before
    /// any part or segment: the directories, in layout order, their playlists, and the PART-TARGET of
    /// them all (the longest part any of them lists; 0 without parts).
    public var onStart: (@Sendable (_ directories: [String], _ playlists: [MediaPlaylist],
                                    _ partTargetSeconds: Double) -> Void)?
    /// Called on the output queue for every rendition's piece of each part, before the segment that
    /// holds it is stored.
    public var onPart: (@Sendable (StreamWriter.RenditionPart) -> Void)?
    /// Called on the output queue with every rendition's playlist after a segment is listed, and at the end.
    public var onPlaylists: (@Sendable ([MediaPlaylist]) -> Void)?

    public init() {}

    /// About 0.1 bit per pixel: 2.8 Mb/s for 720p30, 6.2 Mb/s for 1080p30.
    public static func defaultVideoBitrate(size: OutputSize, framesPerSecond: Int) -> Int {
        let bits = size.width * size.height * framesPerSecond / 10
        return max(200_000, bits / 100_000 * 100_000)
    }

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

/// Why a live stream could not start, or how it ended badly. Carries no exit status: the command
/// line decides that.
public enum LiveError: Error, CustomStringConvertible {
    /// The output directory holds a stream, and neither resuming nor replacing it was asked for.
    case holdsStream(directory: String)
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
        case .holdsStream(let directory): "\(directory) already holds a stream"
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
