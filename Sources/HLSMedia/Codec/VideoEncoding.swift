import HLSKit

/// Turns pictures into the compressed samples of one video rendition. `VideoEncoder` is libavcodec's
/// software encoders (libx264, libx265); an encoder in hardware is one more type that conforms.
public protocol VideoEncoding: AnyObject {
    /// The sample entry: the codec, its parameter sets and the picture's size.
    var trackFormat: TrackDescription.Format { get }
    /// Encodes a picture whose `pts` is on the 90 kHz timeline (`VideoEncoder.timescale`), as an IDR
    /// when `forceKeyframe`; returns the samples that came out, parameter sets in the sample entry.
    func encode(_ frame: Frame, forceKeyframe: Bool) throws -> [EncodedSample]
    /// The samples still inside the encoder, at the end.
    func flush() throws -> [EncodedSample]
}

/// Makes the encoder of one rendition, whose samples are for track `trackIndex`.
public typealias VideoEncoderFactory = @Sendable (_ settings: VideoEncoderSettings, _ trackIndex: Int) throws
    -> any VideoEncoding

extension VideoEncoder: VideoEncoding {
    /// libx264 or libx265, as `settings.codec` says.
    public static let factory: VideoEncoderFactory = { settings, trackIndex in
        try VideoEncoder(settings: settings, trackIndex: trackIndex)
    }
}
