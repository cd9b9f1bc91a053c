import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `hlscap live --overlay`: the capture time burnt into the pictures, shown by their pixels (decoded by
/// ffmpeg to gray) against the same run without it.
@Suite(.serialized) struct LiveOverlayTests {
    static let width = 320
    static let height = 180
    static let framesPerSecond = 30
    /// Where a 12 px clock and its box fall at 320x180: about 140 px wide, 20 rows high.
    static let textRows = 0..<24
    static let textColumns = 0..<160
    /// Below the text: the same picture with or without the overlay.
    static let elsewhereRows = 40..<height

    /// The stream's pictures, one gray byte a pixel, as decoded by ffmpeg (every frame, none repeated).
    struct GrayPictures {
        let width: Int
        let height: Int
        let bytes: [UInt8]

        init(stream: URL, width: Int, height: Int) throws {
            let raw = stream.appendingPathComponent("decoded.gray")
            let decode = try ExternalTools.run("ffmpeg", [
                "-v", "error", "-i", stream.appendingPathComponent("playlist.m3u8").path, "-fps_mode", "passthrough",
                "-f", "rawvideo", "-pix_fmt", "gray", "-y", raw.path])
            try #require(decode.succeeded, "\(decode.stderr)")
            self.width = width
            self.height = height
            bytes = [UInt8](try Data(contentsOf: raw))
        }

        var count: Int { bytes.count / (width * height) }

        func pixels(_ frame: Int, rows: Range<Int>, columns: Range<Int>) -> [UInt8] {
            rows.flatMap { row in
                let start = (frame * height + row) * width
                return bytes[(start + columns.lowerBound)..<(start + columns.upperBound)]
            }
        }

        func textRegion(_ frame: Int) -> [UInt8] { pixels(frame, rows: LiveOverlayTests.textRows,
                                                          columns: LiveOverlayTests.textColumns) }
    }

    static func run(_ stream: URL, _ extra: [String]) throws {
        let run = try ExternalTools.runHlscap(["live", "--video", "test", "--audio", "test", "--size",
                                               "\(width)x\(height)", "--fps", String(framesPerSecond), "--no-realtime",
                                               "--duration", "4", "--out", stream.path, "--quiet"] + extra)
        try #require(run.succeeded && run.stderr.isEmpty, "\(run.stderr)")
        try ExternalTools.validateStream(stream)
    }

    /// Glyph pixels: white text stays bright, while everything under the box is at most half as bright.
    static func glyphs(_ region: [UInt8]) -> [Bool] { region.map { $0 > 180 } }

    /// The test source flashes white once a second, bright behind the text: only the box shows there.
    static func isWhite(_ pictures: GrayPictures, _ frame: Int) -> Bool {
        let below = pictures.pixels(frame, rows: elsewhereRows, columns: 0..<width)
        return below.reduce(0) { $0 + Int($1) } / below.count > 220
    }

    @Test func theCaptureTimeIsBurntIntoEveryPicture() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plainStream = directory.appendingPathComponent("plain")
        let overlaidStream = directory.appendingPathComponent("overlaid")
        try Self.run(plainStream, [])
        try Self.run(overlaidStream, ["--overlay", "clock"])
        let plain = try GrayPictures(stream: plainStream, width: Self.width, height: Self.height)
        let overlaid = try GrayPictures(stream: overlaidStream, width: Self.width, height: Self.height)
        try #require(plain.count == overlaid.count && plain.count >= 4 * Self.framesPerSecond - 1,
                     "\(plain.count) and \(overlaid.count) frames")

        // A white flash: plain white at the top left, a half-dark box with bright glyphs with the overlay.
        let flash = try #require((0..<Self.framesPerSecond * 2).first { Self.isWhite(plain, $0) })
        let flashPlain = plain.textRegion(flash), flashOverlaid = overlaid.textRegion(flash)
        #expect(flashPlain.filter { $0 < 200 }.count < 20)
        #expect(flashOverlaid.filter { (90...160).contains($0) }.count > flashOverlaid.count / 3)
        #expect(flashOverlaid.filter { $0 > 200 }.count > 150)

        // Away from the text the pictures agree (both encoded, so not exactly).
        for frame in (flash + 1)..<(flash + Self.framesPerSecond) {
            let below = zip(plain.pixels(frame, rows: Self.elsewhereRows, columns: 0..<Self.width),
                            overlaid.pixels(frame, rows: Self.elsewhereRows, columns: 0..<Self.width))
            let meanDifference = Double(below.reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) })
                / Double(Self.width * Self.elsewhereRows.count)
            #expect(meanDifference < 2, "frame \(frame): \(meanDifference)")
        }
    }

    /// On a still gray picture only the text changes: from one frame to the next exactly when a second
    /// of capture time begins, once a second, and always between frames a second apart. A file's H.264,
    /// which would be copied, is encoded for it.
    @Test func theSecondsTickWithTheFramesCaptureTimes() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let still = directory.appendingPathComponent("still.mp4")
        try SyncClip.ffmpeg(["-nostdin", "-v", "error", "-f", "lavfi", "-i",
                             "color=c=gray:s=\(Self.width)x\(Self.height):r=\(Self.framesPerSecond)", "-t", "4",
                             "-c:v", "libx264", "-pix_fmt", "yuv420p", "-y", still.path])
        let stream = directory.appendingPathComponent("stream")
        let run = try ExternalTools.runHlscap(["live", "--video", still.path, "--audio", "none", "--no-realtime",
                                               "--overlay", "clock", "--out", stream.path, "--quiet"])
        try #require(run.succeeded && run.stderr.isEmpty && !run.stdout.contains("copied"), "\(run.stdout)\(run.stderr)")
        try ExternalTools.validateStream(stream)
        let pictures = try GrayPictures(stream: stream, width: Self.width, height: Self.height)
        try #require(pictures.count == 4 * Self.framesPerSecond, "\(pictures.count) frames")
        #expect(Self.glyphs(pictures.textRegion(0)).filter { $0 }.count > 150)
        func changed(_ one: Int, _ other: Int) -> Int {
            zip(pictures.textRegion(one), pictures.textRegion(other)).filter { abs(Int($0) - Int($1)) > 64 }.count
        }
        let ticks = (0..<(pictures.count - 1)).filter { changed($0, $0 + 1) > 5 }
        let unchanged = (0..<(pictures.count - 1)).filter { changed($0, $0 + 1) == 0 }
        // Four seconds of frames start 3 or 4 seconds, a whole second apart.
        #expect((3...4).contains(ticks.count) && zip(ticks, ticks.dropFirst()).allSatisfy { $1 - $0 == Self.framesPerSecond },
                "text changed after frames \(ticks)")
        #expect(unchanged.count == pictures.count - 1 - ticks.count, "\(unchanged.count) of \(pictures.count - 1)")
        let secondApart = (0..<(pictures.count - Self.framesPerSecond)).map { changed($0, $0 + Self.framesPerSecond) }
        #expect(secondApart.allSatisfy { $0 > 5 }, "\(secondApart)")
    }

    /// Drawn once on the captured picture and scaled with it: the box on the 180p rung is half as wide
    /// as on the 360p rung (drawn on each rung, it would be 12 px text at 180p, not 7.5).
    @Test func everyRungShowsTheTimeDrawnOnce() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let run = try ExternalTools.runHlscap(["live", "--video", "test", "--audio", "none", "--size", "640x360",
                                               "--ladder", "360p,180p", "--no-realtime", "--duration", "2",
                                               "--overlay", "clock", "--out", stream.path, "--quiet"])
        try #require(run.succeeded && run.stderr.isEmpty, "\(run.stderr)")
        try ExternalTools.validateStream(stream)
        // The right end of the box on the test source's first white flash.
        func boxWidth(_ rung: String, width: Int, height: Int) throws -> Int {
            let pictures = try GrayPictures(stream: stream.appendingPathComponent(rung), width: width, height: height)
            let flash = try #require((0..<Self.framesPerSecond).first { Self.isWhite(pictures, $0) })
            let top = pictures.pixels(flash, rows: 0..<(height / 8), columns: 0..<width)
            return (0..<width).last { column in stride(from: column, to: top.count, by: width).contains { top[$0] < 200 } }
                .map { $0 + 1 } ?? 0
        }
        let full = try boxWidth("360p", width: 640, height: 360)
        let half = try boxWidth("180p", width: 320, height: 180)
        #expect(full > 150 && abs(2 * half - full) <= 8, "\(full) and \(half) pixels wide")
    }

    @Test(arguments: [
        ("", "the time format is empty"),
        ("camera 1", "'camera 1' has no strftime placeholder"),
    ])
    func aFormatWithoutATimeIsAUsageError(format: String, said: String) throws {
        let run = try ExternalTools.runHlscap(["live", "--video", "test", "--overlay", format, "--out", "/nonexistent/x"])
        #expect(run.exitStatus == 64, "\(run.stderr)")
        let lines = run.stderr.split(separator: "\n")
        #expect(lines.first?.hasPrefix("hlscap: --overlay: \(said)") == true, "\(run.stderr)")
        #expect(lines.count == 2 && lines[1].contains("--help"), "\(run.stderr)")
    }

    @Test func aMissingFontIsUnavailable() throws {
        let run = try ExternalTools.runHlscap(["live", "--video", "test", "--overlay", "clock", "--overlay-font",
                                               "/nonexistent/font.ttf", "--out", "/nonexistent/x"])
        #expect(run.exitStatus == 69, "\(run.stderr)")
        #expect(run.stderr == "hlscap: --overlay: the font /nonexistent/font.ttf cannot be read; "
                + "give a TrueType or OpenType font file that exists\n")
    }

    /// A camera's H.264 would be copied; with the overlay it is decoded and encoded, the time on it.
    @Test func anRTSPCameraIsEncodedWithTheOverlay() throws {
        let camera = try RTSPCamera.start()
        defer { camera.stop() }
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let copied = directory.appendingPathComponent("copied")
        let overlaid = directory.appendingPathComponent("overlaid")
        let copy = try ExternalTools.runHlscap(["live", "--video", camera.url("h264-aac"), "--duration", "4",
                                                "--out", copied.path, "--quiet"], timeoutSeconds: 60)
        try #require(copy.succeeded && copy.stdout.contains("video copied"), "\(copy.stdout)\(copy.stderr)")
        let run = try ExternalTools.runHlscap(["live", "--video", camera.url("h264-aac"), "--duration", "2",
                                               "--overlay", "%H:%M:%S", "--out", overlaid.path, "--quiet"],
                                              timeoutSeconds: 60)
        #expect(run.succeeded && run.stderr.isEmpty && !run.stdout.contains("copied"), "\(run.stdout)\(run.stderr)")
        try ExternalTools.validateStream(overlaid)
        let size = try ExternalTools.ffprobeVideoSize(path: overlaid.appendingPathComponent("playlist.m3u8").path)
        // The camera's picture is dark at the top left: only the overlay's glyphs are bright there.
        let rows = 0..<(size.height / 12), columns = 0..<(size.width / 3)
        let bright = { (stream: URL) -> Int in
            try GrayPictures(stream: stream, width: size.width, height: size.height)
                .pixels(0, rows: rows, columns: columns).filter { $0 > 180 }.count
        }
        #expect(try bright(copied) < 10)
        #expect(try bright(overlaid) > 100)
    }
}
