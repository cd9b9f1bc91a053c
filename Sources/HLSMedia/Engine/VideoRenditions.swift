import CFFmpeg
import HLSKit

/// What to encode one video rendition at.
public struct VideoRenditionSettings: Sendable, Equatable {
    public var size: OutputSize
    public var bitrate: Int
    /// The rendition's directory and name, such as `720p`.
    public var name: String

    public init(size: OutputSize, bitrate: Int, name: String) {
        self.size = size
        self.bitrate = bitrate
        self.name = name
    }
}

/// One picture, several encodings: scale → x264 for each rendition, every one with an IDR at the same
/// frames (one `KeyframeSchedule`), so segment N of every rendition starts at the same instant.
///
/// Renditions come tallest first; each is scaled from the one before it when that is at least as
/// large (a cheaper, smaller source), else from the picture itself.
public final class VideoRenditions {
    public let renditions: [VideoRenditionSettings]
    public let frameRate: Rational
    /// One track per rendition, numbered from `firstTrackIndex`.
    public let tracks: [TrackDescription]

    private let encoders: [VideoEncoder]
    private var scalers: [Scaler?]
    private var schedule: KeyframeSchedule
    private var firstTicks: Int64?

    public init(renditions: [VideoRenditionSettings], frameRate: Rational, preset: String, zeroLatency: Bool,
                segmentMilliseconds: Int64, threadCount: Int, firstTrackIndex: Int) throws {
        precondition(!renditions.isEmpty, "video needs at least one rendition")
        self.renditions = renditions
        self.frameRate = frameRate
        // The grid forces the keyframes; the interval only bounds a stream whose clock stalls.
        let segmentFrames = Int((Int64(frameRate.numerator) * segmentMilliseconds
            + Int64(frameRate.denominator) * 1000 - 1) / (Int64(frameRate.denominator) * 1000))
        var encoders: [VideoEncoder] = []
        var tracks: [TrackDescription] = []
        for (position, rendition) in renditions.enumerated() {
            let encoder = try VideoEncoder(settings: VideoEncoderSettings(
                width: rendition.size.width, height: rendition.size.height, frameRate: frameRate,
                bitrate: rendition.bitrate, preset: preset, zeroLatency: zeroLatency,
                keyframeIntervalFrames: max(1, segmentFrames), threadCount: threadCount),
                trackIndex: firstTrackIndex + position)
            encoders.append(encoder)
            tracks.append(TrackDescription(trackID: UInt32(firstTrackIndex + position + 1),
                                           timescale: UInt32(VideoEncoder.timescale), format: .h264(encoder.format)))
        }
        self.encoders = encoders
        self.tracks = tracks
        scalers = Array(repeating: nil, count: renditions.count)
        schedule = KeyframeSchedule(segmentMilliseconds: segmentMilliseconds, timescale: VideoEncoder.timescale)
    }

    /// The tallest rendition's size: what a picture is first brought to.
    public var topSize: OutputSize { renditions[0].size }

    /// Encodes `picture` at `ticks` (90 kHz, increasing) in every rendition.
    public func encode(_ picture: Frame, atTicks ticks: Int64) throws -> [EncodedSample] {
        let first = firstTicks ?? ticks
        firstTicks = first
        let forceKeyframe = schedule.isKeyframe(ticksSinceStart: ticks - first)
        var samples: [EncodedSample] = []
        var source = picture
        for index in encoders.indices {
            let scaled = try self.scaled(source, to: index)
            scaled.pts = ticks
            scaled.timeBase = Rational(1, Int32(VideoEncoder.timescale))
            samples += try encoders[index].encode(scaled, forceKeyframe: forceKeyframe)
            if scaled.width >= renditions[min(index + 1, renditions.count - 1)].size.width { source = scaled }
        }
        return samples
    }

    /// Drains every encoder.
    public func flush() throws -> [EncodedSample] {
        var samples: [EncodedSample] = []
        for encoder in encoders { samples += try encoder.flush() }
        return samples
    }

    private func scaled(_ frame: Frame, to index: Int) throws -> Frame {
        let size = renditions[index].size
        let aspect = frame.pointer.pointee.sample_aspect_ratio
        let squarePixels = aspect.num == 0 || aspect.num == aspect.den
        if frame.width == size.width, frame.height == size.height, frame.pixelFormat == AV_PIX_FMT_YUV420P,
           squarePixels {
            return frame
        }
        let scaler = scalers[index] ?? Scaler(width: size.width, height: size.height)
        scalers[index] = scaler
        return try scaler.scale(frame)
    }
}
