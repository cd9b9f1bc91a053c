/// A decode time far from the packets around it, on one stream of a recording.
///
/// Consecutive samples of a track are a frame or an audio packet apart; a step of more than
/// `limitSeconds` is damage. When the track comes back in step within the next few samples, only
/// those samples carry broken timestamps (a damaged PES header stamps every frame it holds): they
/// are re-stamped evenly between their good neighbours, as a player would play them, instead of
/// stretching a segment to the bad time. When the track stays at the far time, the timeline
/// itself jumps, which copying cannot carry.
public enum TimestampJump {
    public static let limitSeconds: Int64 = 10

    /// `limitSeconds` in units of `timeBase`.
    public static func limit(in timeBase: Rational) -> Int64 {
        limitSeconds * Int64(timeBase.denominator) / Int64(max(timeBase.numerator, 1))
    }
    /// How many samples of the track are looked at for one back in step.
    public static let lookaheadSamples = 64

    public enum Verdict: Sendable, Equatable {
        case inStep
        /// The sample's decode time, re-stamped between its neighbours.
        case repaired(decodeTime: Int64)
        /// The track goes on at the far time.
        case jump
    }

    /// Judges `current` against the track's `previous` decode time and the decode times of the
    /// samples that follow it (`upcoming`, up to `lookaheadSamples`; fewer only at the end of the
    /// file), all in one time base in which `limit` is `limitSeconds`. `durationHint` is the
    /// sample's own duration, 0 when unknown.
    public static func judge(previous: Int64?, current: Int64, upcoming: [Int64], durationHint: Int64,
                      limit: Int64) -> Verdict {
        guard let previous, abs(current - previous) > limit else { return .inStep }
        guard let back = upcoming.firstIndex(where: { $0 > previous && $0 - previous <= limit }) else {
            // Far until the end of the file: the last samples are damaged, not the timeline.
            return upcoming.count < lookaheadSamples ? .repaired(decodeTime: previous + max(durationHint, 1)) : .jump
        }
        // `back + 2` steps separate the previous sample from the first one back in step.
        return .repaired(decodeTime: previous + (upcoming[back] - previous) / Int64(back + 2))
    }
}
