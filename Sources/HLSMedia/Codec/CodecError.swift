/// Why a decoder, encoder or converter cannot do its work, beyond a failed FFmpeg call
/// (which throws `FFmpegError`).
public enum CodecError: Error, Equatable, CustomStringConvertible {
    /// This FFmpeg build has no decoder for a stream of `path`, its codec named as FFmpeg names it
    /// ("vp9"; "none" when FFmpeg does not know the codec at all).
    case decoderNotFound(codec: String, path: String)
    /// This FFmpeg build has no encoder of that name ("libx264", "aac").
    case encoderNotFound(codec: String)
    /// The decoder rejected a packet's data as damaged. Decoding can go on with the next
    /// packet: the caller counts these and continues.
    case corruptPacket(FFmpegError)
    /// Audio whose format cannot be converted: no channels, or a sample rate out of range.
    case unsupportedAudio(String)
    /// Encoder settings no profile or level can carry, such as an odd or oversized picture.
    case unsupportedSettings(String)
    /// A frame that does not match what the encoder or converter was set up for.
    case unexpectedFrame(String)

    public var description: String {
        switch self {
        case .decoderNotFound(let codec, let path):
            "\(path): this FFmpeg build has no decoder for \(codec == "none" ? "its codec" : codec), so it "
                + "cannot be transcoded"
        case .encoderNotFound(let codec):
            "no \(codec) encoder in this FFmpeg build; install the distribution's full FFmpeg libraries"
        case .corruptPacket(let error):
            "damaged packet skipped (\(error))"
        case .unsupportedAudio(let detail):
            "unsupported audio: \(detail)"
        case .unsupportedSettings(let detail):
            "unsupported encoder settings: \(detail)"
        case .unexpectedFrame(let detail):
            "unexpected frame: \(detail)"
        }
    }
}
