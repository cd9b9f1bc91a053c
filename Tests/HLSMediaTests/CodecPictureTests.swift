import Foundation
import HLSBase
import Testing
import HLSKit
@testable import HLSMedia

/// Plane contents as rows of bytes, for comparing small pictures.
func rows(of frame: Frame, plane index: Int) -> [[UInt8]] {
    let (base, bytesPerRow) = frame.plane(index)
    let width = index == 0 ? frame.width : (frame.width + 1) / 2
    let height = index == 0 ? frame.height : (frame.height + 1) / 2
    return (0..<height).map { y in (0..<width).map { x in base[y * bytesPerRow + x] } }
}

func fill(_ frame: Frame, plane index: Int, with rows: [[UInt8]]) {
    let (base, bytesPerRow) = frame.plane(index)
    for (y, row) in rows.enumerated() {
        for (x, value) in row.enumerated() { base[y * bytesPerRow + x] = value }
    }
}

@Suite struct CodecRotationTests {
    /// A 4x2 picture with a distinct value in every luma and chroma sample.
    static func picture() throws -> Frame {
        let frame = try Frame.yuv420p(width: 4, height: 2)
        frame.pts = 42
        fill(frame, plane: 0, with: [[1, 2, 3, 4], [5, 6, 7, 8]])
        fill(frame, plane: 1, with: [[10, 20]])
        fill(frame, plane: 2, with: [[30, 40]])
        return frame
    }

    @Test(arguments: [
        (90, [[5, 1], [6, 2], [7, 3], [8, 4]], [[10], [20]], [[30], [40]]),
        (180, [[8, 7, 6, 5], [4, 3, 2, 1]], [[20, 10]], [[40, 30]]),
        (270, [[4, 8], [3, 7], [2, 6], [1, 5]], [[20], [10]], [[40], [30]]),
    ] as [(Int, [[UInt8]], [[UInt8]], [[UInt8]])])
    func quarterTurnsClockwise(degrees: Int, luma: [[UInt8]], blue: [[UInt8]], red: [[UInt8]]) throws {
        let rotated = try Rotation.rotate(try Self.picture(), clockwiseDegrees: degrees)
        #expect(rows(of: rotated, plane: 0) == luma)
        #expect(rows(of: rotated, plane: 1) == blue)
        #expect(rows(of: rotated, plane: 2) == red)
        #expect(rotated.pts == 42)
    }

    @Test func fourQuarterTurnsGiveThePictureBack() throws {
        let original = try Self.picture()
        var frame = original
        for _ in 0..<4 { frame = try Rotation.rotate(frame, clockwiseDegrees: 90) }
        for plane in 0..<3 { #expect(rows(of: frame, plane: plane) == rows(of: original, plane: plane)) }
    }

    @Test func otherAnglesAreRefused() throws {
        #expect(throws: CodecError.self) { _ = try Rotation.rotate(try Self.picture(), clockwiseDegrees: 45) }
    }
}

@Suite struct CodecScalerTests {
    static let gray: (luma: UInt8, blue: UInt8, red: UInt8) = (200, 90, 170)

    static func flatPicture(width: Int, height: Int) throws -> Frame {
        let frame = try Frame.yuv420p(width: width, height: height, timeBase: Rational(1, 25))
        frame.pts = 7
        for (plane, value) in [gray.luma, gray.blue, gray.red].enumerated() {
            let (base, bytesPerRow) = frame.plane(plane)
            base.update(repeating: value, count: bytesPerRow * (plane == 0 ? height : height / 2))
        }
        return frame
    }

    /// The distinct runs of values along a row or column, e.g. [16, 200, 16] for a pillarbox.
    static func runs(_ values: [UInt8]) -> [UInt8] {
        values.reduce(into: []) { runs, value in if runs.last != value { runs.append(value) } }
    }

    @Test func narrowerPictureIsPillarboxed() throws {
        let scaled = try Scaler(width: 640, height: 360).scale(try Self.flatPicture(width: 320, height: 240))
        #expect(scaled.width == 640 && scaled.height == 360)
        #expect(scaled.pts == 7 && scaled.timeBase == Rational(1, 25))
        // 4:3 in 16:9: a 480-wide picture with 80-pixel black bars either side.
        let luma = rows(of: scaled, plane: 0)
        for row in [luma[0], luma[180], luma[359]] {
            #expect(Array(row[0..<80]).allSatisfy { $0 == Scaler.blackLuma })
            #expect(Array(row[80..<560]).allSatisfy { $0 == Self.gray.luma })
            #expect(Array(row[560..<640]).allSatisfy { $0 == Scaler.blackLuma })
        }
        let blue = rows(of: scaled, plane: 1)[90]
        #expect(Self.runs(blue) == [Scaler.neutralChroma, Self.gray.blue, Scaler.neutralChroma])
        #expect(blue.firstIndex(of: Self.gray.blue) == 40)
        let red = rows(of: scaled, plane: 2)[90]
        #expect(Self.runs(red) == [Scaler.neutralChroma, Self.gray.red, Scaler.neutralChroma])
    }

    @Test func widerPictureIsLetterboxed() throws {
        let scaled = try Scaler(width: 320, height: 320).scale(try Self.flatPicture(width: 640, height: 360))
        // 16:9 in a square: 180 lines of picture, 70 black lines above and below.
        let column = rows(of: scaled, plane: 0).map { $0[160] }
        #expect(Self.runs(column) == [Scaler.blackLuma, Self.gray.luma, Scaler.blackLuma])
        #expect(column.firstIndex(of: Self.gray.luma) == 70)
        #expect(column.lastIndex(of: Self.gray.luma) == 249)
    }

    /// The rungs of a ladder scale one captured frame on several threads at once; under
    /// ThreadSanitizer (`make test-sanitizers`) reading its planes must not count as a write.
    @Test func severalScalersReadOneFrameAtOnce() throws {
        let picture = try Self.flatPicture(width: 320, height: 240)
        let sizes = [(640, 360), (480, 270), (320, 180), (160, 90)]
        let work = SharedPicture(picture: picture, scalers: sizes.map { Scaler(width: $0.0, height: $0.1) })
        let widths = concurrentMap(sizes.count) { index in (try? work.scalers[index].scale(work.picture))?.width ?? 0 }
        #expect(widths == sizes.map(\.0))
    }

    /// Unchecked sendable: each thread uses its own scaler and only reads the picture.
    struct SharedPicture: @unchecked Sendable {
        let picture: Frame
        let scalers: [Scaler]
    }

    @Test func stretchingFillsTheWholeFrame() throws {
        let scaled = try Scaler(width: 640, height: 360, keepsAspectRatio: false)
            .scale(try Self.flatPicture(width: 320, height: 240))
        #expect(rows(of: scaled, plane: 0).allSatisfy { $0.allSatisfy { $0 == Self.gray.luma } })
    }

    @Test(arguments: [
        // Same shape: the whole frame.
        (1920, 1080, (1, 1), 1280, 720, PictureLayout(x: 0, y: 0, width: 1280, height: 720)),
        (320, 240, (1, 1), 640, 360, PictureLayout(x: 80, y: 0, width: 480, height: 360)),
        (640, 360, (1, 1), 320, 320, PictureLayout(x: 0, y: 70, width: 320, height: 180)),
        // PAL 4:3 with 16:15 pixels is 768x576 on screen: exactly 4:3.
        (720, 576, (16, 15), 640, 480, PictureLayout(x: 0, y: 0, width: 640, height: 480)),
        // 1080x1920 portrait into 1280x720: 405 wide, made even and centred on an even column.
        (1080, 1920, (1, 1), 1280, 720, PictureLayout(x: 436, y: 0, width: 406, height: 720)),
    ] as [(Int, Int, (Int, Int), Int, Int, PictureLayout)])
    func layoutKeepsTheDisplayShapeOnEvenPositions(sourceWidth: Int, sourceHeight: Int, pixelAspect: (Int, Int),
                                                    outputWidth: Int, outputHeight: Int, expected: PictureLayout) {
        let layout = PictureLayout.fitting(sourceWidth: sourceWidth, sourceHeight: sourceHeight,
                                           pixelAspect: pixelAspect, outputWidth: outputWidth,
                                           outputHeight: outputHeight)
        #expect(layout == expected)
    }
}

