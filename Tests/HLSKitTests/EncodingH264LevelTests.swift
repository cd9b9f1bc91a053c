import Foundation
import Testing
@testable import HLSKit

@Suite struct EncodingH264LevelTests {
    @Test(arguments: [
        (2, 2, Rational(30, 1), 50_000, 10),
        (320, 240, Rational(30, 1), 500_000, 13),
        (320, 240, Rational(30, 1), 1_000_000, 20),
        (640, 360, Rational(30, 1), 1_000_000, 30),
        (1280, 720, Rational(30, 1), 3_000_000, 31),
        (1280, 720, Rational(60, 1), 3_000_000, 32),
        (1920, 1080, Rational(30_000, 1001), 6_000_000, 40),
        (1920, 1080, Rational(30, 1), 24_000_000, 41),
        (1920, 1080, Rational(60, 1), 6_000_000, 42),
        (3840, 2160, Rational(30, 1), 20_000_000, 51),
        (3840, 2160, Rational(60, 1), 20_000_000, 52),
        (8192, 4320, Rational(30, 1), 50_000_000, 60),
        // 256 macroblocks wide: within level 1.1's frame size, but a side may be at most
        // sqrt(8 · MaxFS) macroblocks, which first allows 256 at level 4.
        (4096, 16, Rational(1, 1), 50_000, 40),
    ])
    func lowestFittingLevel(width: Int, height: Int, frameRate: Rational, bitrate: Int, expectedIDC: Int) {
        let level = H264Level.lowest(width: width, height: height, frameRate: frameRate, maxBitrate: bitrate,
                                     bufferSize: 2 * bitrate)
        #expect(level?.idc == expectedIDC)
    }

    @Test func nothingFitsBeyondTheLastLevel() {
        #expect(H264Level.lowest(width: 8192, height: 8192, frameRate: Rational(30, 1), maxBitrate: 1_000_000,
                                 bufferSize: 2_000_000) == nil)
        #expect(H264Level.lowest(width: 1280, height: 720, frameRate: Rational(30, 1), maxBitrate: 2_000_000_000,
                                 bufferSize: 4_000_000_000) == nil)
    }

    @Test func levelsAreNamedAsInTheStandard() {
        #expect(H264Level.all.map(\.description).prefix(5) == ["1.0", "1.1", "1.2", "1.3", "2.0"])
        #expect(H264Level.all.map(\.idc) == H264Level.all.map(\.idc).sorted())
    }
}
