import HLSKit

/// How `hlscap file` encodes when it transcodes.
public struct TranscodeSettings: Sendable {
    /// "WxH", "Wx" or "xH"; nil keeps the first input's size (made even).
    public var size: String?
    /// nil keeps the first input's average frame rate.
    public var frameRate: Rational?
    /// nil picks about 0.1 bit per pixel.
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

    /// About 0.1 bit per pixel, in steps of 100 kb/s: 2.8 Mb/s for 720p30, 6.2 Mb/s for 1080p30.
    public static func defaultVideoBitrate(width: Int, height: Int, frameRate: Rational) -> Int {
        let bits = Int64(width) * Int64(height) * Int64(frameRate.numerator) / Int64(max(frameRate.denominator, 1)) / 10
        return Int(max(200_000, bits / 100_000 * 100_000))
    }
}
