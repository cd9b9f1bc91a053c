/// The video coding formats hlscap encodes.
public enum VideoCodec: String, Sendable, Equatable, CaseIterable {
    /// H.264 High profile through libx264.
    case h264
    /// HEVC Main profile through libx265, in `hvc1` sample entries.
    case hevc
}
