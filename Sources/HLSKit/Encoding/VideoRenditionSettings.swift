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
}
