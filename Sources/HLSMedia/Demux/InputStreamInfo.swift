import CFFmpeg
import HLSKit

/// What the file demuxer knows about one selected stream before reading its packets.
public struct InputStreamInfo: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case video, audio
    }

    /// The stream's index in the container (FFmpeg's numbering).
    public var index: Int
    public var kind: Kind
    /// FFmpeg's codec name, such as "h264", "hevc" or "aac".
    public var codecName: String
    public var isH264: Bool
    public var isAAC: Bool
    /// The unit of the packets' `pts`, `dts` and `duration`.
    public var timeBase: Rational
    /// Codec configuration as the container stores it: avcC or Annex-B parameter sets for
    /// H.264, the AudioSpecificConfig for AAC; empty when the stream carries it in-band.
    public var extradata: [UInt8]

    // Video; zero or nil for audio.
    public var width: Int
    public var height: Int
    public var sampleAspectRatio: Rational?
    public var averageFrameRate: Rational?
    /// Clockwise rotation a player applies for display (the convention of the legacy
    /// `rotate` tag), from the display matrix, rounded to 0, 90, 180 or 270.
    public var rotationDegrees: Int
    /// The container's 3x3 display matrix (16.16 and 2.30 fixed point), when present.
    public var displayMatrix: [Int32]?

    // Audio; zero for video.
    public var sampleRate: Int
    public var channelCount: Int
    /// Encoder priming: samples at the start that are not part of the signal.
    public var initialPaddingSamples: Int

    /// The stream's (or else the container's) duration, for progress reports only.
    public var durationSeconds: Double?
    /// The number of frames the container declares, when it does.
    public var frameCountHint: Int?
    /// The stream's language tag from the container (usually ISO 639-2, such as `eng`), when it has one.
    public var language: String? = nil
}

extension InputStreamInfo {
    /// How long a picture lasts at the stream's average frame rate, in ticks of `timeBase` (whole ticks,
    /// rounded down); nil when the rate or the time base is not known, or a picture is under a tick.
    func pictureTicks(in timeBase: Rational) -> Int64? {
        guard let rate = averageFrameRate, rate.numerator > 0, rate.denominator > 0,
              timeBase.numerator > 0, timeBase.denominator > 0 else { return nil }
        let ticks = Int64(timeBase.denominator) * Int64(rate.denominator) / (Int64(timeBase.numerator) * Int64(rate.numerator))
        return ticks > 0 ? ticks : nil
    }

    /// Values in a display matrix.
    static let displayMatrixCount = 9
    static let quarterTurnDegrees = 90.0
    static let quarterTurnsPerTurn = 4

    init(stream: UnsafeMutablePointer<AVStream>, kind: Kind, in input: borrowing InputFormatContext) {
        let parameters = stream.pointee.codecpar.pointee
        let timeBase = stream.pointee.time_base
        let displayMatrix = Self.displayMatrix(of: stream)
        var durationSeconds = input.durationSeconds
        if stream.pointee.duration != hlscap_nopts_value(), stream.pointee.duration > 0 {
            durationSeconds = Double(stream.pointee.duration) * av_q2d(timeBase)
        }

        self.init(
            index: Int(stream.pointee.index),
            kind: kind,
            codecName: String(cString: avcodec_get_name(parameters.codec_id)),
            isH264: parameters.codec_id == AV_CODEC_ID_H264,
            isAAC: parameters.codec_id == AV_CODEC_ID_AAC,
            timeBase: Rational(timeBase),
            extradata: parameters.extradata.map {
                Array(UnsafeBufferPointer(start: $0, count: Int(parameters.extradata_size)))
            } ?? [],
            width: Int(parameters.width),
            height: Int(parameters.height),
            sampleAspectRatio: kind == .video
                ? Rational(ifKnown: av_guess_sample_aspect_ratio(input.pointer, stream, nil)) : nil,
            averageFrameRate: kind == .video ? Rational(ifKnown: stream.pointee.avg_frame_rate) : nil,
            rotationDegrees: displayMatrix.map(Self.clockwiseRotationDegrees) ?? 0,
            displayMatrix: displayMatrix,
            sampleRate: Int(parameters.sample_rate),
            channelCount: Int(parameters.ch_layout.nb_channels),
            initialPaddingSamples: Int(parameters.initial_padding),
            durationSeconds: durationSeconds,
            frameCountHint: stream.pointee.nb_frames > 0 ? Int(stream.pointee.nb_frames) : nil,
            language: av_dict_get(stream.pointee.metadata, "language", nil, 0)
                .flatMap { $0.pointee.value.map { String(cString: $0) } }
                .flatMap { $0.isEmpty || $0 == "und" ? nil : $0 }
        )
    }

    private static func displayMatrix(of stream: UnsafeMutablePointer<AVStream>) -> [Int32]? {
        var size = 0
        guard let data = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size),
              size >= displayMatrixCount * MemoryLayout<Int32>.size else { return nil }
        return data.withMemoryRebound(to: Int32.self, capacity: displayMatrixCount) {
            Array(UnsafeBufferPointer(start: $0, count: displayMatrixCount))
        }
    }

    /// av_display_rotation_get gives the counter-clockwise angle; players rotate the other way.
    private static func clockwiseRotationDegrees(_ matrix: [Int32]) -> Int {
        let counterClockwise = matrix.withUnsafeBufferPointer { av_display_rotation_get($0.baseAddress) }
        guard counterClockwise.isFinite else { return 0 }
        let quarterTurns = Int((-counterClockwise / quarterTurnDegrees).rounded())
        let normalised = (quarterTurns % quarterTurnsPerTurn + quarterTurnsPerTurn) % quarterTurnsPerTurn
        return normalised * Int(quarterTurnDegrees)
    }
}
