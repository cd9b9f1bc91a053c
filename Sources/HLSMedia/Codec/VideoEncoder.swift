import CFFmpeg
import HLSKit

/// What the video encoder produces.
public struct VideoEncoderSettings: Sendable, Equatable {
    public var codec = VideoCodec.h264
    public var width: Int
    public var height: Int
    public var frameRate: Rational
    /// Average and peak bit rate in bits per second.
    public var bitrate: Int
    /// An x264 preset, from "ultrafast" to "placebo".
    public var preset: String
    /// x264's zerolatency tuning: no B-frames and no lookahead, so a frame leaves the encoder as soon
    /// as it is coded; live encoding uses it.
    public var zeroLatency: Bool
    /// The longest run of frames between keyframes when none is forced sooner.
    public var keyframeIntervalFrames: Int
    /// A constant bit rate padded with filler data (x264 `nal-hrd=cbr`), so that the rate declared
    /// before anything is measured (a live ladder's master playlist) is the rate sent.
    public var constantBitRate = false
    /// Encoding threads; 0 lets libx264 use every core.
    public var threadCount: Int
    /// The encoder: libx264/libx265, or one in hardware.
    public var kind = VideoEncoderKind.software
    /// Asks for the parameter sets in-band only, in front of each keyframe, as some hardware encoders give
    /// them (a Raspberry Pi's): the sample entry is then made from the first packet's.
    public var parameterSetsInBand = false

    public init(width: Int, height: Int, frameRate: Rational, bitrate: Int, preset: String = "veryfast",
                zeroLatency: Bool = false, keyframeIntervalFrames: Int, threadCount: Int = 0) {
        self.width = width
        self.height = height
        self.frameRate = frameRate
        self.bitrate = bitrate
        self.preset = preset
        self.zeroLatency = zeroLatency
        self.keyframeIntervalFrames = keyframeIntervalFrames
        self.threadCount = threadCount
    }

    /// The VBV buffer holds two seconds at the peak rate: room for a keyframe without letting a
    /// segment's size stray far from the average. Live encoding holds one second, so the peak a live
    /// master playlist must declare before anything is measured stays near the average.
    public var bufferSizeBits: Int { zeroLatency ? bitrate : 2 * bitrate }

    /// The most a segment of `segmentMilliseconds` can hold under the VBV cap, as bits per second:
    /// the peak rate over the segment plus a full buffer drained into it.
    public func peakSegmentBitrate(segmentMilliseconds: Int64) -> Int {
        bitrate + Int(Int64(bufferSizeBits) * 1000 / max(1, segmentMilliseconds))
    }
}

/// H.264 High profile through libx264, or HEVC Main through libx265, for HLS: keyframes only where
/// asked for (plus one at least every `keyframeIntervalFrames`), each an IDR in a closed GOP, never
/// at scene cuts. The same through a hardware encoder (`VideoEncoderKind`), with what it allows.
///
/// An encoder that gives its parameter sets only in-band, with its first keyframe, still makes the
/// sample entry before the first picture: a second encoder of the same settings codes one grey picture
/// and its first packet's parameter sets are the stream's; every keyframe's in-band sets are then
/// checked against them.
///
/// Frames go in as yuv420p of the configured size with any time base; samples come out on a
/// 90 kHz timescale with length-prefixed NAL units and without the parameter sets, which
/// `trackFormat` carries for the init segment.
public final class VideoEncoder {
    public static let timescale = Timescale.video

    public let settings: VideoEncoderSettings
    /// The H.264 level chosen; nil for HEVC, whose level libx265 picks.
    public let level: H264Level?
    /// The track the samples belong to.
    public let trackIndex: Int
    /// The sample entry for the init segment, from the encoder's parameter sets.
    public let trackFormat: TrackDescription.Format
    private let configuration: ParameterSets
    /// The encoder gives its parameter sets only in-band: each sample is checked for new ones.
    private let givesParameterSetsInBand: Bool

    private enum ParameterSets {
        case h264(AVCDecoderConfiguration)
        case hevc(HEVCDecoderConfiguration)
    }

    /// The H.264 sample entry, when encoding H.264.
    public var format: H264Format? {
        if case .h264(let format) = trackFormat { return format }
        return nil
    }

    private let context: CodecContext
    private var packet: Packet
    /// With VAAPI, pictures go to the GPU first.
    private let upload: VAAPIUpload?

    /// The longest picture side accepted; sides must also be even, as 4:2:0 halves them.
    private static let maxSide = 8192
    public init(settings: VideoEncoderSettings, trackIndex: Int) throws {
        try Self.validate(settings)
        var level: H264Level?
        if settings.codec == .h264 {
            guard let lowest = H264Level.lowest(width: settings.width, height: settings.height,
                                                frameRate: settings.frameRate, maxBitrate: settings.bitrate,
                                                bufferSize: settings.bufferSizeBits) else {
                throw CodecError.unsupportedSettings("\(settings.width)x\(settings.height) at \(settings.frameRate) fps "
                    + "and \(settings.bitrate) bit/s exceeds every H.264 level")
            }
            level = lowest
        }
        let encoderName = settings.kind.encoderName(for: settings.codec)
        self.settings = settings
        self.level = level
        self.trackIndex = trackIndex
        upload = try Self.upload(settings)
        context = try Self.open(settings, level: level, upload: upload)
        packet = try Packet()

        var parameterSets = context.extradata
        givesParameterSetsInBand = parameterSets.isEmpty
        if givesParameterSetsInBand {
            parameterSets = try Self.firstPacket(settings, level: level)
        }
        do {
            switch settings.codec {
            case .h264:
                let configuration = try AVCDecoderConfiguration(annexB: parameterSets)
                self.configuration = .h264(configuration)
                trackFormat = .h264(H264Format(decoderConfiguration: configuration, width: settings.width,
                                               height: settings.height))
            case .hevc:
                let configuration = try HEVCDecoderConfiguration(annexB: parameterSets)
                self.configuration = .hevc(configuration)
                trackFormat = .hevc(try HEVCFormat(decoderConfiguration: configuration))
            }
        } catch {
            throw CodecError.unsupportedSettings("\(encoderName) produced no usable parameter sets (\(error))")
        }
    }

    /// The VAAPI upload `settings` need, or nil.
    private static func upload(_ settings: VideoEncoderSettings) throws -> VAAPIUpload? {
        guard settings.kind == .vaapi else { return nil }
        return try VAAPIUpload(devicePath: VideoEncoderKind.vaapiDevice, width: settings.width, height: settings.height)
    }

    /// An open encoder context for `settings`, taking its pictures through `upload` with VAAPI.
    private static func open(_ settings: VideoEncoderSettings, level: H264Level?,
                             upload: VAAPIUpload?) throws -> CodecContext {
        let encoderName = settings.kind.encoderName(for: settings.codec)
        guard let codec = avcodec_find_encoder_by_name(encoderName) else {
            throw CodecError.encoderNotFound(codec: encoderName)
        }
        let context = try CodecContext(codec: codec)
        let codecContext = context.pointer
        codecContext.pointee.width = Int32(settings.width)
        codecContext.pointee.height = Int32(settings.height)
        codecContext.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        codecContext.pointee.time_base = AVRational(num: 1, den: Int32(Self.timescale.ticksPerSecond))
        codecContext.pointee.framerate = AVRational(num: settings.frameRate.numerator,
                                                    den: settings.frameRate.denominator)
        codecContext.pointee.bit_rate = Int64(settings.bitrate)
        codecContext.pointee.rc_max_rate = Int64(settings.bitrate)
        codecContext.pointee.rc_buffer_size = Int32(settings.bufferSizeBits)
        codecContext.pointee.gop_size = Int32(settings.keyframeIntervalFrames)
        codecContext.pointee.keyint_min = Int32(settings.keyframeIntervalFrames)
        // Parameter sets go to extradata (for avcC/hvcC), not in front of every keyframe.
        if !settings.parameterSetsInBand { codecContext.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        codecContext.pointee.flags |= Int32(bitPattern: AV_CODEC_FLAG_CLOSED_GOP)
        codecContext.pointee.thread_count = Int32(settings.threadCount)
        if settings.zeroLatency, settings.kind != .software { codecContext.pointee.max_b_frames = 0 }
        if let upload {
            upload.attach(to: codecContext)
            codecContext.pointee.profile = settings.codec == .h264 ? FF_PROFILE_H264_HIGH : FF_PROFILE_HEVC_MAIN
        }
        let options: [String: String]
        switch settings.kind {
        case .software:
            options = settings.codec == .h264 ? Self.x264Options(settings, level: level) : Self.x265Options(settings)
        case .nvenc:
            // An IDR wherever a keyframe is forced; p4 is NVENC's middle preset.
            options = ["preset": "p4", "forced-idr": "1", "profile": settings.codec == .h264 ? "high" : "main"]
                .merging(settings.zeroLatency ? ["zerolatency": "1"] : [:]) { $1 }
        case .vaapi:
            options = ["rc_mode": "VBR"]
        case .v4l2m2m:
            options = [:]
        }
        try context.open(options: options)
        return context
    }

    /// The first packet of a second encoder of the same settings, given one grey picture: for an encoder
    /// that puts its parameter sets only in-band, in front of its first keyframe.
    private static func firstPacket(_ settings: VideoEncoderSettings, level: H264Level?) throws -> [UInt8] {
        let upload = try upload(settings)
        let probe = try open(settings, level: level, upload: upload)
        var picture = try Frame.black(width: settings.width, height: settings.height)
        picture.pts = 0
        picture.pointer.pointee.pict_type = AV_PICTURE_TYPE_I
        if let upload { picture = try upload.upload(picture) }
        var packet = try Packet()
        var first: [UInt8]?
        try probe.sendFrame(picture.pointer)
        try probe.sendFrame(nil)
        try probe.receivePackets(into: &packet) { packet in
            if first == nil { first = packet.bytes }
        }
        guard let first else {
            throw CodecError.unsupportedSettings("\(settings.kind.encoderName(for: settings.codec)) gave no packet for a "
                + "first picture, so its parameter sets are unknown")
        }
        return first
    }

    private static func x264Options(_ settings: VideoEncoderSettings, level: H264Level?) -> [String: String] {
        var options = [
            "preset": settings.preset,
            "profile": "high",
            // No keyframes of the encoder's own choosing at scene changes: segment starts are ours.
            "sc_threshold": "0",
            // A forced keyframe must be an IDR, or a segment could not be decoded on its own.
            "forced-idr": "1",
        ]
        if let level { options["level"] = level.description }
        if settings.zeroLatency { options["tune"] = "zerolatency" }
        // Apple's authoring specification wants a segment's rate within 10 % of AVERAGE-BANDWIDTH.
        if settings.constantBitRate { options["nal-hrd"] = "cbr" }
        return options
    }

    /// libx265 takes its GOP rules as x265 parameters: a closed GOP (every forced keyframe an IDR),
    /// no scene-cut keyframes, parameter sets only in the extradata, no version SEI.
    private static func x265Options(_ settings: VideoEncoderSettings) -> [String: String] {
        var parameters = [
            "keyint=\(settings.keyframeIntervalFrames)", "min-keyint=\(settings.keyframeIntervalFrames)",
            "scenecut=0", "open-gop=0", "repeat-headers=0", "info=0", "log-level=error",
        ]
        if settings.threadCount == 1 { parameters += ["pools=1", "frame-threads=1"] }
        if settings.constantBitRate { parameters.append("strict-cbr=1") }
        var options = ["preset": settings.preset, "profile": "main", "forced-idr": "1",
                       "x265-params": parameters.joined(separator: ":")]
        if settings.zeroLatency { options["tune"] = "zerolatency" }
        return options
    }

    /// Encodes `frame` (its `pts` in any time base, converted to 90 kHz); when `forceKeyframe`
    /// is set the frame becomes an IDR. Returns the samples the encoder finished, in decode order.
    public func encode(_ frame: Frame, forceKeyframe: Bool) throws -> [EncodedSample] {
        guard frame.width == settings.width, frame.height == settings.height,
              frame.pixelFormat == AV_PIX_FMT_YUV420P else {
            throw CodecError.unexpectedFrame("\(frame.width)x\(frame.height) format \(frame.pixelFormat.rawValue); "
                + "the encoder takes \(settings.width)x\(settings.height) yuv420p")
        }
        guard let pts = frame.pts(inTimescale: Self.timescale) else {
            throw CodecError.unexpectedFrame("video frame without a timestamp")
        }
        // A reference of our own, so the caller's frame keeps its pts and picture type.
        var input = try frame.newReference()
        input.pts = pts
        input.pointer.pointee.pict_type = forceKeyframe ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE
        if let upload { input = try upload.upload(input) }
        try context.sendFrame(input.pointer)
        return try receiveSamples()
    }

    /// Drains the frames the encoder still holds (B-frames, lookahead); the encoder takes no
    /// more frames afterwards.
    public func flush() throws -> [EncodedSample] {
        try context.sendFrame(nil)
        return try receiveSamples()
    }

    private func receiveSamples() throws -> [EncodedSample] {
        var samples: [EncodedSample] = []
        try context.receivePackets(into: &packet) { packet in
            guard let dts = packet.dts, let pts = packet.pts else {
                throw CodecError.unexpectedFrame("the encoder returned a packet without timestamps")
            }
            let bytes: [UInt8]
            let isSync: Bool
            switch configuration {
            case .h264(let configuration):
                // A constant-rate stream keeps its filler: the rate it declares is the rate it sends.
                let unit = try H264AccessUnit(packet.bytes, framing: .annexB, configuration: configuration,
                                              keepsFillerData: settings.constantBitRate)
                (bytes, isSync) = (unit.bytes, unit.isIDR)
                // The sample entry's sets are taken out; any left are new ones, which it does not describe.
                // Only an encoder that sends them in-band can send others.
                let changed = try givesParameterSetsInBand && LengthPrefixed.nalUnits(in: bytes, lengthSize: 4).contains {
                    [H264NALUnitType.sequenceParameterSet.rawValue, H264NALUnitType.pictureParameterSet.rawValue]
                        .contains(H264NALUnit.typeField(of: $0))
                }
                if changed { throw Self.changedParameterSets(settings) }
            case .hevc(let configuration):
                let unit = try HEVCAccessUnit(packet.bytes, framing: .annexB, configuration: configuration)
                (bytes, isSync) = (unit.bytes, unit.isIntraRandomAccessPoint)
            }
            samples.append(EncodedSample(track: trackIndex, decodeTime: dts, compositionOffset: Int32(clamping: pts - dts),
                                         durationHint: packet.duration > 0 ? packet.duration : nil,
                                         isSync: isSync, data: bytes))
        }
        return samples
    }

    private static func changedParameterSets(_ settings: VideoEncoderSettings) -> CodecError {
        .unexpectedFrame("\(settings.kind.encoderName(for: settings.codec)) changed its parameter sets in the middle of "
            + "the stream, which the init section cannot follow")
    }

    private static func validate(_ settings: VideoEncoderSettings) throws {
        let sizeFits = (2...maxSide).contains(settings.width) && (2...maxSide).contains(settings.height)
        guard sizeFits, settings.width % 2 == 0, settings.height % 2 == 0 else {
            throw CodecError.unsupportedSettings("picture size \(settings.width)x\(settings.height) must be even "
                + "and at most \(maxSide) pixels a side")
        }
        guard settings.frameRate.numerator > 0, settings.frameRate.denominator > 0 else {
            throw CodecError.unsupportedSettings("frame rate \(settings.frameRate) must be positive")
        }
        guard settings.bitrate > 0, settings.keyframeIntervalFrames > 0 else {
            throw CodecError.unsupportedSettings("bit rate and keyframe interval must be positive")
        }
    }
}
