/// What to encode one video rendition at.
public struct VideoRenditionSettings: Sendable, Equatable {
    public var size: OutputSize
    public var bitrate: Int
    /// The rendition's directory and name, such as `720p`.
    public var name: String
    public var codec: VideoCodec

    public init(size: OutputSize, bitrate: Int, name: String, codec: VideoCodec = .h264) {
        self.size = size
        self.bitrate = bitrate
        self.name = name
        self.codec = codec
    }

    /// About 0.1 bit per pixel, in steps of 100 kb/s and at least 200 kb/s: 2.8 Mb/s for 720p30,
    /// 6.2 Mb/s for 1080p30. The rate of a stream, or a file's transcoding, when none is given.
    public static func defaultBitrate(size: OutputSize, frameRate: Rational) -> Int {
        let bits = Int64(size.width) * Int64(size.height) * Int64(frameRate.numerator)
            / Int64(max(frameRate.denominator, 1)) / 10
        return Int(max(200_000, bits / 100_000 * 100_000))
    }
}
