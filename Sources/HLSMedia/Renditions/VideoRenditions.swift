import HLSBase
import HLSKit

/// One picture, several encodings: scale → x264 for each rendition, every one with an IDR at the same
/// frames (one `KeyframeSchedule`), so segment N of every rendition starts at the same instant.
///
/// Renditions come tallest first; each is scaled from the picture itself, so that all of them can be
/// scaled and encoded at the same time.
public final class VideoRenditions {
    public let renditions: [VideoRenditionSettings]
    public let frameRate: Rational
    /// One track per rendition, numbered from `firstTrackIndex`.
    public let tracks: [TrackDescription]

    private let encoders: [any VideoEncoding]
    private let scalers: [Scaler]
    private var schedule: KeyframeSchedule
    private var firstTicks: Int64?
    /// Cut points asked for before the first frame fixed the schedule's origin.
    private var pendingCutTicks: [Int64] = []

    public init(renditions: [VideoRenditionSettings], frameRate: Rational, preset: String, zeroLatency: Bool,
                constantBitRate: Bool = false, segmentMilliseconds: Int64, threadCount: Int, firstTrackIndex: Int,
                makeEncoder: VideoEncoderFactory = VideoEncoder.factory) throws {
        precondition(!renditions.isEmpty, "video needs at least one rendition")
        self.renditions = renditions
        self.frameRate = frameRate
        // The grid forces the keyframes; the interval only bounds a stream whose clock stalls.
        let segmentFrames = Int((Int64(frameRate.numerator) * segmentMilliseconds
            + Int64(frameRate.denominator) * 1000 - 1) / (Int64(frameRate.denominator) * 1000))
        var encoders: [any VideoEncoding] = []
        var tracks: [TrackDescription] = []
        for (position, rendition) in renditions.enumerated() {
            var settings = VideoEncoderSettings(
                width: rendition.size.width, height: rendition.size.height, frameRate: frameRate,
                bitrate: rendition.bitrate, preset: preset, zeroLatency: zeroLatency,
                keyframeIntervalFrames: max(1, segmentFrames), threadCount: threadCount)
            settings.codec = rendition.codec
            settings.constantBitRate = constantBitRate
            let encoder = try makeEncoder(settings, firstTrackIndex + position)
            encoders.append(encoder)
            tracks.append(TrackDescription(trackID: UInt32(firstTrackIndex + position + 1),
                                           timescale: VideoEncoder.timescale, format: encoder.trackFormat))
        }
        self.encoders = encoders
        self.tracks = tracks
        scalers = renditions.map { Scaler(width: $0.size.width, height: $0.size.height) }
        schedule = KeyframeSchedule(segmentMilliseconds: segmentMilliseconds, timescale: VideoEncoder.timescale)
    }

    /// The tallest rendition's size: what a picture is first brought to.
    public var topSize: OutputSize { renditions[0].size }

    /// Encodes `picture` at `ticks` (90 kHz, increasing) in every rendition; several renditions are
    /// scaled and encoded in parallel, each encoder on its own thread for the frame.
    public func encode(_ picture: Frame, atTicks ticks: Int64) throws -> [EncodedSample] {
        let first = firstTicks ?? ticks
        if firstTicks == nil {
            firstTicks = first
            for cut in pendingCutTicks { schedule.addCut(atTicks: cut - first) }
            pendingCutTicks = []
        }
        return try encode(picture, atTicks: ticks, forceKeyframe: schedule.isKeyframe(ticksSinceStart: ticks - first))
    }

    /// Encodes `picture` at `ticks` with an IDR in every rendition exactly when `forceKeyframe`, whatever the
    /// grid says: for rungs that follow a copied source's keyframes rather than the grid.
    public func encode(_ picture: Frame, atTicks ticks: Int64, forceKeyframe: Bool) throws -> [EncodedSample] {
        picture.pts = ticks
        picture.timeBase = Rational(1, Int32(VideoEncoder.timescale.ticksPerSecond))
        guard encoders.count > 1 else {
            return try encoders[0].encode(try scaled(picture, to: 0), forceKeyframe: forceKeyframe)
        }
        let work = ParallelEncoding(renditions: self, picture: picture)
        return try concurrentMap(work.count) { index in
            Result { try work.encode(index, forceKeyframe: forceKeyframe) }
        }.flatMap { try $0.get() }
    }

    /// Forces an IDR in every rendition at the first frame at or after `ticks` (90 kHz, the timeline of
    /// `encode`), where the segmenter is told to cut as well.
    public func addCut(atTicks ticks: Int64) {
        guard let first = firstTicks else {
            pendingCutTicks.append(ticks)
            return
        }
        schedule.addCut(atTicks: ticks - first)
    }

    /// Drains every encoder.
    public func flush() throws -> [EncodedSample] {
        var samples: [EncodedSample] = []
        for encoder in encoders { samples += try encoder.flush() }
        return samples
    }

    fileprivate func encode(_ picture: Frame, rendition index: Int, forceKeyframe: Bool) throws -> [EncodedSample] {
        try encoders[index].encode(try scaled(picture, to: index), forceKeyframe: forceKeyframe)
    }

    /// Each rendition's own scaler, so renditions can be scaled at once; the picture is only read.
    private func scaled(_ frame: Frame, to index: Int) throws -> Frame {
        let size = renditions[index].size
        if frame.width == size.width, frame.height == size.height, frame.isPlanarYUV420, frame.hasSquarePixels {
            return frame
        }
        return try scalers[index].scale(frame)
    }
}

/// One picture encoded by every rendition at once.
///
/// Unchecked sendable: iteration `index` uses only rendition `index`'s scaler and encoder, and the
/// picture is only read (scaling reads its planes; an encoder takes its own counted reference).
private struct ParallelEncoding: @unchecked Sendable {
    let renditions: VideoRenditions
    let picture: Frame

    var count: Int { renditions.renditions.count }

    func encode(_ index: Int, forceKeyframe: Bool) throws -> [EncodedSample] {
        try renditions.encode(picture, rendition: index, forceKeyframe: forceKeyframe)
    }
}
