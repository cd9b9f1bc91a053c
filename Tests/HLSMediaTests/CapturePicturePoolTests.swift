import CFFmpeg
import HLSKit
import Testing
@testable import HLSMedia

@Suite struct CapturePicturePoolTests {
    static let timeBase = Rational(1, 1_000_000)

    @Test func aReleasedPictureIsDrawnIntoAgain() throws {
        let pool = PicturePool(width: 64, height: 48, capacity: 4)
        var first: Frame? = try pool.picture(timeBase: Self.timeBase)
        let buffer = first!.plane(0).base
        first = nil
        let second = try pool.picture(timeBase: Self.timeBase)
        #expect(second.plane(0).base == buffer)
        #expect(second.timeBase == Self.timeBase)
    }

    @Test func aPictureStillHeldIsNotHandedOutAgain() throws {
        let pool = PicturePool(width: 64, height: 48, capacity: 4)
        let first = try pool.picture(timeBase: Self.timeBase)
        let second = try pool.picture(timeBase: Self.timeBase)
        #expect(first.plane(0).base != second.plane(0).base)
    }

    @Test func beyondItsCapacityThePoolMakesPicturesItDoesNotKeep() throws {
        let pool = PicturePool(width: 64, height: 48, capacity: 1)
        var kept: Frame? = try pool.picture(timeBase: Self.timeBase)
        let keptBuffer = kept!.plane(0).base
        var extra: Frame? = try pool.picture(timeBase: Self.timeBase)
        #expect(extra!.plane(0).base != keptBuffer)
        extra = nil
        kept = nil
        #expect(try pool.picture(timeBase: Self.timeBase).plane(0).base == keptBuffer)
    }
}
