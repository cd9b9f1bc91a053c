import CFFmpeg
import HLSKit

/// The video half of transcoding: scale and rotate, keep each frame's time (or convert to a constant
/// rate when one is asked for), then every rendition's encoding with IDRs on one grid.
final class VideoLane {
    let renditions: VideoRenditions
    let trackIndex: Int
    let width: Int
    let height: Int
    let frameRate: Rational

    /// How input frame times become output frame times.
    private enum Timing {
        /// Every frame at its own time, so a variable frame rate stays as it is; `lastTicks` is the last
        /// frame's time.
        case own(lastTicks: Int64?)
        /// A constant rate: each frame in the slot nearest its time; `nextIndex` is the first slot not filled.
        case constant(FrameRateConverter, nextIndex: Int64)
    }

    private var timing: Timing
    /// One scaler per rotation: a sideways input is scaled to the turned size, then rotated.
    private var scalers: [Int: Scaler] = [:]
    private var lastPicture: Frame?

    /// Frame rates outside this range are taken as a container's guess, not the video's rate.
    private static let plausibleFrameRates = 1.0...240.0

    /// Without `settings.frameRate`, frames keep their own times and `frameRate` (the input's average) only
    /// guides the encoder's rate control and pads gaps.
    init(stream: InputStreamInfo, settings: TranscodeSettings, trackIndex: Int) throws {
        frameRate = settings.frameRate ?? Self.plausible(stream.averageFrameRate) ?? TranscodeSettings.fallbackFrameRate
        let perSecond = Double(frameRate.numerator) / Double(max(1, frameRate.denominator))
        let rungs: [VideoRenditionSettings]
        do {
            if let ladder = settings.ladder {
                rungs = try ladder.map { rung in
                    let size = try OutputSize.resolve(requested: "x\(rung.height)", inputWidth: stream.width,
                                                      inputHeight: stream.height, rotationDegrees: stream.rotationDegrees)
                    return rung.renditionSettings(size: size, framesPerSecond: perSecond,
                                                  streamCodec: settings.videoCodec)
                }
            } else {
                let size = try OutputSize.resolve(requested: settings.size, inputWidth: stream.width,
                                                  inputHeight: stream.height, rotationDegrees: stream.rotationDegrees)
                rungs = [VideoRenditionSettings(
                    size: size, bitrate: settings.videoBitrate
                        ?? VideoRenditionSettings.defaultBitrate(size: size, frameRate: frameRate),
                    name: "", codec: settings.videoCodec)]
            }
        } catch let error as OutputSize.ResolveError {
            throw CodecError.unsupportedSettings(error.description)
        }
        width = rungs[0].size.width
        height = rungs[0].size.height
        self.trackIndex = trackIndex
        renditions = try VideoRenditions(renditions: rungs, frameRate: frameRate, preset: settings.preset,
                                         zeroLatency: false, segmentMilliseconds: settings.segmentMilliseconds,
                                         threadCount: 0, firstTrackIndex: trackIndex)
        timing = settings.frameRate == nil ? .own(lastTicks: nil)
            : .constant(FrameRateConverter(frameRate: frameRate), nextIndex: 0)
    }

    /// One frame at `frameRate`, in 90 kHz ticks.
    static func frameTicks(_ frameRate: Rational) -> Int64 {
        rescale(Int64(frameRate.denominator), multipliedBy: VideoEncoder.timescale.perSecond, dividedBy: Int64(frameRate.numerator))
    }

    private static func plausible(_ rate: Rational?) -> Rational? {
        guard let rate, rate.numerator > 0, rate.denominator > 0 else { return nil }
        let perSecond = Double(rate.numerator) / Double(rate.denominator)
        return plausibleFrameRates.contains(perSecond) ? rate : nil
    }

    /// Encodes a decoded frame that belongs at `ticks` on the output timeline (90 kHz).
    func encode(_ frame: Frame, atTicks ticks: Int64, rotation: Int) throws -> [EncodedSample] {
        switch timing {
        case .own(let lastTicks):
            // The encoder needs increasing times: a frame no later than the one before is a duplicate.
            if let lastTicks, ticks <= lastTicks { return [] }
            let picture = try upright(frame, rotation: rotation)
            lastPicture = picture
            return try emit(picture, atTicks: ticks)
        case .constant(var converter, let nextIndex):
            let indexes = converter.outputIndexes(forFrameAt: ticks)
            timing = .constant(converter, nextIndex: nextIndex)
            guard !indexes.isEmpty else { return [] }
            let picture = try upright(frame, rotation: rotation)
            // Empty slots before the frame's own hold the picture before it: no frame is shown early.
            let previous = lastPicture ?? picture
            lastPicture = picture
            var samples: [EncodedSample] = []
            for index in indexes.dropLast() { samples += try emit(previous, index: index) }
            samples += try emit(picture, index: indexes.upperBound - 1)
            return samples
        }
    }

    /// Holds the last picture (black before any) over the empty frame slots from `startTicks` until `endTicks`.
    func pad(fromTicks startTicks: Int64, untilTicks endTicks: Int64) throws -> [EncodedSample] {
        var samples: [EncodedSample] = []
        var slotTicks = nextSlotTicks ?? startTicks
        while slotTicks < endTicks {
            let picture = try lastPicture ?? Frame.black(width: width, height: height)
            lastPicture = picture
            switch timing {
            case .own:
                samples += try emit(picture, atTicks: slotTicks)
            case .constant(var converter, let nextIndex):
                let indexes = converter.outputIndexes(forFrameAt: slotTicks)
                timing = .constant(converter, nextIndex: nextIndex)
                for index in indexes { samples += try emit(picture, index: index) }
            }
            guard let next = nextSlotTicks else { break }
            slotTicks = next
        }
        return samples
    }

    /// Whether frames keep their own times (no constant rate was asked for).
    var keepsFrameTimes: Bool {
        if case .own = timing { return true }
        return false
    }

    /// Output time of the first frame slot not yet filled (one nominal frame after the last frame, when
    /// frames keep their own times); nil before the first frame.
    var nextSlotTicks: Int64? {
        switch timing {
        case .own(let lastTicks): lastTicks.map { $0 + Self.frameTicks(frameRate) }
        case .constant(let converter, let nextIndex): converter.outputTime(ofIndex: nextIndex)
        }
    }

    func flush() throws -> [EncodedSample] {
        try renditions.flush()
    }

    /// Encodes `picture` in constant-rate slot `index`.
    private func emit(_ picture: Frame, index: Int64) throws -> [EncodedSample] {
        guard case .constant(let converter, _) = timing, let ticks = converter.outputTime(ofIndex: index) else { return [] }
        timing = .constant(converter, nextIndex: index + 1)
        return try renditions.encode(try picture.newReference(), atTicks: ticks)
    }

    /// Encodes `picture` at its own time.
    private func emit(_ picture: Frame, atTicks ticks: Int64) throws -> [EncodedSample] {
        timing = .own(lastTicks: ticks)
        return try renditions.encode(try picture.newReference(), atTicks: ticks)
    }

    /// Scaled into the output size (letterboxed) and turned upright.
    private func upright(_ frame: Frame, rotation: Int) throws -> Frame {
        let quarterTurns = ((rotation % 360) + 360) % 360 / 90
        if quarterTurns == 0 && isEncoderReady(frame) { return frame }
        let sideways = quarterTurns % 2 == 1
        let scaler = scalers[quarterTurns] ?? Scaler(width: sideways ? height : width, height: sideways ? width : height)
        scalers[quarterTurns] = scaler
        let scaled = try scaler.scale(frame)
        return quarterTurns == 0 ? scaled : try Rotation.rotate(scaled, clockwiseDegrees: quarterTurns * 90)
    }

    /// A frame already in the output size and format, with square pixels, needs no scaling pass.
    private func isEncoderReady(_ frame: Frame) -> Bool {
        let aspect = frame.pointer.pointee.sample_aspect_ratio
        let squarePixels = aspect.num == 0 || aspect.num == aspect.den
        return frame.width == width && frame.height == height && frame.pixelFormat == AV_PIX_FMT_YUV420P && squarePixels
    }
}
