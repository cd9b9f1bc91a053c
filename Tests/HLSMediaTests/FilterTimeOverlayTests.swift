import Foundation
import HLSKit
import Testing
@testable import HLSMedia

@Suite struct FilterTimeOverlayTests {
    /// av_get_token splits a `%{…}` expansion at `:` and `}`, reads `\` and `'`, and strips blanks at the ends.
    @Test(arguments: [
        ("%H:%M:%S", #"%H\:%M\:%S"#),
        (#"C:\cam %S"#, #"C\:\\cam\ %S"#),
        ("100%% %S", #"100%%\ %S"#),
        (" %S} 'x' ", #"\ %S\}\ \'x\'\ "#),
        ("%Y-%m-%d", "%Y-%m-%d"),
    ])
    func formatsAreEscapedForDrawtext(format: String, escaped: String) {
        #expect(TimeOverlay.drawtextArgument(format) == escaped)
    }

    @Test func theFramesTimeIsTheTextInUTCOrLocalTime() throws {
        #expect(try TimeOverlay(format: "%H:%M").drawtextText == #"%{pts:gmtime:0:%H\:%M}"#)
        #expect(try TimeOverlay(format: "%H:%M", localTime: true).drawtextText == #"%{pts:localtime:0:%H\:%M}"#)
    }

    @Test(arguments: [
        ("", TimeOverlayError.emptyFormat),
        ("cam 1", .noPlaceholder("cam 1")),
        ("100%%", .noPlaceholder("100%%")),
        ("%n%t", .noPlaceholder("%n%t")),
        ("%", .noPlaceholder("%")),
    ])
    func formatsWithoutATimeAreRefused(format: String, error: TimeOverlayError) {
        #expect(throws: error) { try TimeOverlay(format: format) }
    }

    @Test(arguments: ["%S", "%-d", "%_H", "%04Y", "%Ey", "at %T", TimeOverlay.clockFormat])
    func formatsWithATimeAreTaken(format: String) throws {
        #expect(try TimeOverlay(format: format).format == format)
    }

    @Test func aMissingFontIsSaid() throws {
        let overlay = try TimeOverlay(format: "%S", fontPath: "/nonexistent/font.ttf")
        #expect(throws: TimeOverlayError.fontMissing("/nonexistent/font.ttf")) { try overlay.checkAvailable() }
        try TimeOverlay(format: "%S").checkAvailable()
    }

    // MARK: Pictures

    static let width = 320
    static let height = 180
    /// Where the text and its box are drawn: a 12 px clock at 320x180 is about 140 px wide.
    static let textRows = 0..<24
    static let textColumns = 0..<160
    /// 2030-01-01 00:00:00.100 UTC: a thirtieth of a second later is still the same second.
    static let captured = Date(timeIntervalSince1970: 1_893_456_000.1)

    /// A white picture with the time of `date` drawn on it by `filter`.
    static func drawn(_ filter: TimeOverlayFilter, at date: Date, width: Int = width, height: Int = height) throws
        -> [[UInt8]] {
        let frame = try Frame.yuv420p(width: width, height: height)
        frame.pts = 7
        for index in 0..<3 {
            let (base, bytesPerRow) = frame.plane(index)
            base.update(repeating: index == 0 ? 235 : 128, count: bytesPerRow * (index == 0 ? height : height / 2))
        }
        let output = try filter.draw(on: frame, capturedAt: date)
        #expect(output.pts == 7 && output.width == width && output.height == height)
        return rows(of: output, plane: 0)
    }

    static func region(_ luma: [[UInt8]]) -> [UInt8] {
        textRows.flatMap { luma[$0][textColumns] }
    }

    @Test func theCaptureTimeIsDrawnOnAHalfDarkBoxAtTheTopLeft() throws {
        let filter = try TimeOverlayFilter(overlay: try TimeOverlay(format: TimeOverlay.clockFormat))
        let luma = try Self.drawn(filter, at: Self.captured)
        let text = Self.region(luma)
        // White (235) under black at half opacity is about 125; the glyphs are white again.
        let boxed = text.filter { (100...150).contains($0) }.count
        let bright = text.filter { $0 > 200 }.count
        #expect(boxed > text.count / 3, "\(boxed) of \(text.count) pixels boxed")
        #expect(bright > 100, "\(bright) bright glyph pixels")
        // Nothing below the text or to its right.
        #expect(luma[Self.textRows.upperBound...].allSatisfy { $0.allSatisfy { $0 == 235 } })
        #expect(luma.allSatisfy { $0[Self.textColumns.upperBound...].allSatisfy { $0 == 235 } })
    }

    /// The text is the capture time handed in, whenever the picture is drawn on: the same second draws the
    /// same pixels, the next second other ones.
    @Test func theTextChangesWithTheCaptureTimeNotTheClock() throws {
        let filter = try TimeOverlayFilter(overlay: try TimeOverlay(format: "%H:%M:%S"))
        let first = try Self.drawn(filter, at: Self.captured)
        let nextFrame = try Self.drawn(filter, at: Self.captured.addingTimeInterval(1.0 / 30))
        Thread.sleep(forTimeInterval: 1.1)
        let again = try Self.drawn(filter, at: Self.captured)
        let nextSecond = try Self.drawn(filter, at: Self.captured.addingTimeInterval(1))
        #expect(first == nextFrame)
        #expect(first == again)
        let changed = zip(Self.region(first), Self.region(nextSecond)).filter { abs(Int($0) - Int($1)) > 64 }.count
        #expect(changed > 10, "\(changed) pixels changed with the second")
    }

    @Test func localTimeFollowsTheTimeZone() throws {
        let utc = try TimeOverlayFilter(overlay: try TimeOverlay(format: "%H"))
        let local = try TimeOverlayFilter(overlay: try TimeOverlay(format: "%H", localTime: true))
        // Glibc reads TZ when localtime_r is first called; this test runs with the machine's zone.
        let offset = TimeZone.current.secondsFromGMT(for: Self.captured)
        #expect((try Self.drawn(utc, at: Self.captured) == Self.drawn(local, at: Self.captured)) == (offset == 0))
    }

    /// A picture of another size makes the graph again, with text to that picture's scale.
    @Test func anotherSizeIsDrawnToItsScale() throws {
        let filter = try TimeOverlayFilter(overlay: try TimeOverlay(format: TimeOverlay.clockFormat))
        let small = try Self.drawn(filter, at: Self.captured)
        let large = try Self.drawn(filter, at: Self.captured, width: 1280, height: 720)
        func boxedRows(_ luma: [[UInt8]]) -> Int { luma.filter { $0[10] < 200 }.count }
        // 12 px text at 180 rows, 30 px at 720 (a twenty-fourth), each with its box's border.
        #expect((10...20).contains(boxedRows(small)) && (30...50).contains(boxedRows(large)),
                "\(boxedRows(small)) and \(boxedRows(large)) rows")
    }
}
