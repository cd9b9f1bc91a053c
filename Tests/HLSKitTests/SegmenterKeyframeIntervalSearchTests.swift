import Testing
@testable import HLSKit

/// The read-ahead of a copied source: how far apart its first two keyframes are.
@Suite struct SegmenterKeyframeIntervalSearchTests {
    static func search(_ samples: [(Int64, Bool)]) -> [KeyframeIntervalSearch.Outcome] {
        var search = KeyframeIntervalSearch()
        return samples.map { search.add(microseconds: $0.0, isSync: $0.1) }
    }

    @Test func theIntervalIsCountedFromTheFirstKeyframeNotTheFirstSample() {
        // Two pictures from before the first keyframe (a camera joined mid-GOP), then keyframes 2 s apart.
        let outcomes = Self.search([(0, false), (33_333, false), (66_667, true), (1_000_000, false), (2_066_667, true)])
        #expect(outcomes == [.searching, .searching, .searching, .searching, .found(2_000_000)])
    }

    @Test func theSearchGivesUpTwelveSecondsPastTheFirstKeyframe() {
        let limit = KeyframeIntervalSearch.limitMicroseconds
        #expect(Self.search([(5_000_000, false), (5_000_000 + limit, false)]) == [.searching, .searching],
                "no keyframe yet: no limit either")
        #expect(Self.search([(0, true), (limit, false), (limit + 1, false)]) == [.searching, .searching, .gaveUp])
        #expect(Self.search([(0, true), (limit + 40_000, true)]) == [.searching, .found(limit + 40_000)],
                "a keyframe is an answer however late it is")
    }
}
