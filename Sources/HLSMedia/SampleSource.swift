import HLSKit

/// Where the segmenter's samples come from: a recording copied or transcoded.
public protocol SampleSource: AnyObject {
    var tracks: [TrackDescription] { get }
    /// The next sample in roughly interleaved decode order, or nil at the end.
    func nextSample() throws -> EncodedSample?
    /// Explicit cut points known so far, in microseconds of the samples' timeline: a segment starts at the
    /// first video keyframe at or after each. The list grows as inputs open; it is read between samples.
    var cutMicroseconds: [Int64] { get }
    /// Input time (microseconds from the first input's start) minus the samples' timeline, for reports.
    var inputTimeOffsetMicroseconds: Int64 { get }
}

extension CopySource: SampleSource {}
extension TranscodeSource: SampleSource {}
