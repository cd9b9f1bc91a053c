import Testing
@testable import HLSKit

@Suite struct TimingFrameRateConverterTests {
    /// Runs input times (90 kHz ticks) through a converter to `frameRate`; returns the output
    /// indexes per input frame and the converter.
    static func convert(_ times: [Int64], to frameRate: Rational) -> ([Range<Int64>], FrameRateConverter) {
        var converter = FrameRateConverter(frameRate: frameRate)
        let indexes = times.map { converter.outputIndexes(forFrameAt: $0) }
        return (indexes, converter)
    }

    /// Output indexes must run 0, 1, 2 … without gaps however the input was spaced.
    static func expectContiguous(_ indexes: [Range<Int64>]) {
        let all = indexes.flatMap { Array($0) }
        #expect(all == Array(0..<Int64(all.count)))
    }

    @Test func ntscRateTo30RepeatsOneFrameInAThousand() {
        let times = (0..<1001).map { Int64($0) * 3003 }
        let (indexes, converter) = Self.convert(times, to: Rational(30, 1))
        Self.expectContiguous(indexes)
        #expect(converter.repeatedFrameCount == 1)
        #expect(converter.droppedFrameCount == 0)
        // Frame 501 is at 501.501 output frames: it also fills the empty slot 501.
        #expect(indexes[501] == 501..<503)
    }

    @Test func sixtyTo30KeepsEveryOtherFrameOnTheGrid() {
        let times = (0..<60).map { Int64($0) * 1500 }
        let (indexes, converter) = Self.convert(times, to: Rational(30, 1))
        Self.expectContiguous(indexes)
        let kept = indexes.indices.filter { !indexes[$0].isEmpty }
        #expect(kept == Array(stride(from: 0, to: 60, by: 2)))
        #expect(converter.droppedFrameCount == 30)
        #expect(converter.repeatedFrameCount == 0)
    }

    @Test func twentyFiveTo30RepeatsOneFrameInFive() {
        let times = (0..<25).map { Int64($0) * 3600 }
        let (indexes, converter) = Self.convert(times, to: Rational(30, 1))
        Self.expectContiguous(indexes)
        #expect(indexes.reduce(0) { $0 + $1.count } == 30)
        #expect(converter.repeatedFrameCount == 5)
    }

    @Test func gapsInVariableRateInputAreFilledWithRepeats() {
        // 30 fps with frames 3 and 4 missing.
        let (indexes, converter) = Self.convert([0, 3000, 6000, 15000, 18000], to: Rational(30, 1))
        #expect(indexes == [0..<1, 1..<2, 2..<3, 3..<6, 6..<7])
        #expect(converter.repeatedFrameCount == 2)
    }

    @Test func jitterBelowHalfAFrameChangesNothing() {
        let jitter: [Int64] = [0, 1400, -1400, 900, -700, 1200, -1490, 300]
        let times = jitter.indices.map { Int64($0) * 3000 + 900_000 + ($0 == 0 ? 0 : jitter[$0]) }
        let (indexes, converter) = Self.convert(times, to: Rational(30, 1))
        #expect(indexes == (0..<Int64(times.count)).map { $0..<($0 + 1) })
        #expect(converter.droppedFrameCount == 0 && converter.repeatedFrameCount == 0)
    }

    @Test func framesGoingBackInTimeAreDropped() {
        let (indexes, converter) = Self.convert([0, 3000, 1000, 6000], to: Rational(30, 1))
        #expect(indexes.map(\.count) == [1, 1, 0, 1])
        #expect(converter.droppedFrameCount == 1)
    }

    @Test func outputTimesStartAtTheFirstFrame() {
        var converter = FrameRateConverter(frameRate: Rational(30_000, 1001))
        #expect(converter.outputTime(ofIndex: 0) == nil)
        _ = converter.outputIndexes(forFrameAt: 900_000)
        #expect(converter.outputTime(ofIndex: 0) == 900_000)
        #expect(converter.outputTime(ofIndex: 30) == 990_090, "30 frames of 1001/30000 s")
        #expect(converter.outputTime(ofIndex: 1) == 903_003)
    }
}
