import Foundation
import Testing
@testable import HLSKit

@Suite struct EncodingOutputSizeTests {
    @Test(arguments: [
        (nil, 1920, 1080, 0, "1920x1080"),
        (nil, 1920, 1080, 90, "1080x1920"),
        (nil, 1279, 719, 0, "1280x720"),
        ("1280x720", 1920, 1080, 0, "1280x720"),
        ("1280x", 1920, 1080, 0, "1280x720"),
        ("x480", 1920, 1080, 0, "854x480"),
        ("x720", 1080, 1920, 270, "1280x720"),
        ("x720", 1080, 1920, 0, "406x720"),
        ("641x361", 1920, 1080, 0, "642x362"),
        ("1280x", 1000, 562, 0, "1280x720"),
    ] as [(String?, Int, Int, Int, String)])
    func resolves(requested: String?, width: Int, height: Int, rotation: Int, expected: String) throws {
        let size = try OutputSize.resolve(requested: requested, inputWidth: width, inputHeight: height,
                                          rotationDegrees: rotation)
        #expect(size.description == expected)
    }

    @Test(arguments: ["9000x100", "abc", "x", "0x100", "-2x100", "1280x720x3", "8192x"])
    func refusesWhatCannotBeEncoded(requested: String) {
        #expect(throws: OutputSize.ResolveError.self) {
            // 8192x on a portrait input would need a 16384-line picture.
            _ = try OutputSize.resolve(requested: requested, inputWidth: 1000, inputHeight: 2000)
        }
    }
}
