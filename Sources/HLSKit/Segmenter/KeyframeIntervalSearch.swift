/// The distance between a copied source's first two keyframes, found by reading ahead before its stream
/// starts: the shortest segments its keyframes allow. Fed its video samples in decode order.
public struct KeyframeIntervalSearch: Sendable {
    /// How far past the first keyframe the search reads before it gives up.
    public static let limitMicroseconds: Int64 = 12_000_000

    public enum Outcome: Equatable, Sendable {
        case searching
        /// Microseconds from the first keyframe to the second.
        case found(Int64)
        /// No second keyframe within `limitMicroseconds` of the first.
        case gaveUp
    }

    private var firstKeyframe: Int64?

    public init() {}

    public mutating func add(microseconds: Int64, isSync: Bool) -> Outcome {
        guard let first = firstKeyframe else {
            if isSync { firstKeyframe = microseconds }
            return .searching
        }
        if isSync { return .found(microseconds - first) }
        return microseconds - first > Self.limitMicroseconds ? .gaveUp : .searching
    }
}
