import HLSKit

/// How `hlscap file` encodes when it transcodes.
public struct TranscodeSettings: Sendable {
    /// "WxH", "Wx" or "xH"; nil keeps the first input's size (made even).
    public var size: String?
    /// nil keeps the first input's average frame rate.
    public var frameRate: Rational?
    /// nil picks `VideoRenditionSettings.defaultBitrate`.
    public var videoBitrate: Int?
    public var preset = "veryfast"
    public var audio = AudioEncoderSettings()
    public var segmentMilliseconds: Int64 = 2000
    public var videoCodec = VideoCodec.h264
    /// Several video renditions instead of one (`size` and `videoBitrate` then do not apply).
    public var ladder: [LadderRung]?
    /// Which audio streams become audio tracks: every one by default.
    public var audioTracks = FileDemuxer.AudioSelection.all

    public init() {}

    /// Used when an input does not say its frame rate.
    public static let fallbackFrameRate = Rational(30, 1)
}
