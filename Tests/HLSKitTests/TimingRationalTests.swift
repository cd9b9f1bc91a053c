import Testing
@testable import HLSKit

/// A frame rate as the whole frames a second a configuration or a stand-in picture takes.
@Suite struct TimingRationalTests {
    @Test func aRateRoundsToTheNearestWholeFrame() {
        #expect(Rational(30000, 1001).wholeFramesPerSecond == 30)
        #expect(Rational(24000, 1001).wholeFramesPerSecond == 24)
        #expect(Rational(25, 1).wholeFramesPerSecond == 25)
        #expect(Rational(15, 2).wholeFramesPerSecond == 8)
    }

    @Test func aRateStaysBetweenOneAndTwoHundredForty() {
        #expect(Rational(1, 10).wholeFramesPerSecond == 1)
        #expect(Rational(1000, 1).wholeFramesPerSecond == 240)
    }

    @Test func aFractionThatIsNoRateGivesNone() {
        #expect(Rational(0, 1).wholeFramesPerSecond == nil)
        #expect(Rational(30, 0).wholeFramesPerSecond == nil)
        #expect(Rational(-30, 1).wholeFramesPerSecond == nil)
    }
}
