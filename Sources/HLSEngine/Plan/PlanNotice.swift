import HLSKit
import HLSMedia

/// What a plan decided that the user should hear about: warnings, returned as values (libraries never
/// print); the command line turns each into a line.
public enum PlanNotice: Equatable, Sendable {
    /// No second keyframe of `input` came within `searchedSeconds`: copied segments may be that long.
    case copiedSegmentsUnbounded(input: String, searchedSeconds: Int, segmentSeconds: Double)
    /// `input`'s keyframes do not fall on the segment boundaries: copied segments last up to `longestSeconds`.
    case copiedSegmentsLonger(input: String, keyframeIntervalSeconds: Double, longestSeconds: Double,
                              segmentSeconds: Double)
    /// A camera's frames are stamped as they are captured, so a keyframe due on a boundary that comes a
    /// little early misses it: copied segments last up to `longestSeconds`.
    case copiedSegmentsJitter(input: String, keyframeIntervalSeconds: Double, longestSeconds: Double,
                              segmentSeconds: Double)
    /// The ladder's source rung is encoded at `size`: the input's video is not copied.
    case sourceRungEncoded(OutputSize)
    /// No hardware encoder of those asked for opens here (`why`, each one's reason): `encoder` encodes.
    case softwareEncoderFallback(why: String, encoder: String)
    /// `input` cannot be copied (`reason`): it is encoded.
    case copyRefused(input: String, reason: String)
    /// `input` has streams the stream does not carry.
    case streamsLeftOut(input: String, streams: [String])
    /// The stream waits for a publisher on `address`.
    case waitingForPublisher(String)
}
