import HLSKit

/// Where the segmenter's samples come from: a recording copied or transcoded.
public protocol SampleSource: AnyObject {
    var tracks: [TrackDescription] { get }
    /// The next sample in roughly interleaved decode order, or nil at the end.
    func nextSample() throws -> EncodedSample?
}

extension CopySource: SampleSource {}
extension TranscodeSource: SampleSource {}
