import CFFmpeg
import HLSKit

/// The video half of transcoding: scale and rotate, constant frame rate, then every rendition's
/// H.264 encoding with IDRs on one grid.
final class VideoLane {
    let renditions: VideoRenditions
    let trackIndex: Int
    let width: Int
    let height: Int
    let frameRate: Rational

    private var converter: FrameRateConverter
    /// One scaler per rotation: a sideways input is scaled to the turned size, then rotated.
    private var scalers: [Int: Scaler] = [:]
    private var lastPicture: Frame?
    private var nextIndex: Int64 = 0

    /// Frame rates outside this range are taken as a container's guess, not the video's rate.
    private static let plausibleFrameRates = 1.0...240.0

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
                        ?? TranscodeSettings.defaultVideoBitrate(width: size.width, height: size.height, frameRate: frameRate),
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
        converter = FrameRateConverter(frameRate: frameRate)
    }

    private static func plausible(_ rate: Rational?) -> Rational? {
        guard let rate, rate.numerator > 0, rate.denominator > 0 else { return nil }
        let perSecond = Double(rate.numerator) / Double(rate.denominator)
        return plausibleFrameRates.contains(perSecond) ? rate : nil
    }

    /// Encodes a decoded frame that belongs at `ticks` on the output timeline (90 kHz).
    func encode(_ frame: Frame, atTicks ticks: Int64, rotation: Int) throws -> [EncodedSample] {
        let indexes = converter.outputIndexes(forFrameAt: ticks)
        guard !indexes.isEmpty else { return [] }
        let picture = try upright(frame, rotation: rotation)
        lastPicture = picture
        var samples: [EncodedSample] = []
        for index in indexes { samples += try emit(picture, index: index) }
        return samples
    }

    /// Holds the last picture (black before any) over the empty frame slots from `startTicks` until `endTicks`.
    func pad(fromTicks startTicks: Int64, untilTicks endTicks: Int64) throws -> [EncodedSample] {
        var samples: [EncodedSample] = []
        var slotTicks = converter.outputTime(ofIndex: nextIndex) ?? startTicks
        while slotTicks < endTicks {
            let picture = try lastPicture ?? Frame.black(width: width, height: height)
            lastPicture = picture
            for index in converter.outputIndexes(forFrameAt: slotTicks) {
                samples += try emit(picture, index: index)
            }
            guard let next = converter.outputTime(ofIndex: nextIndex) else { break }
            slotTicks = next
        }
        return samples
    }

    /// Output time of the first frame slot not yet filled; nil before the first frame.
    var nextSlotTicks: Int64? { converter.outputTime(ofIndex: nextIndex) }

    func flush() throws -> [EncodedSample] {
        try renditions.flush()
    }

    private func emit(_ picture: Frame, index: Int64) throws -> [EncodedSample] {
        guard let ticks = converter.outputTime(ofIndex: index) else { return [] }
        let frame = try picture.newReference()
        nextIndex = index + 1
        return try renditions.encode(frame, atTicks: ticks)
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
