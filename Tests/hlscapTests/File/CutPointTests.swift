import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// Segments that start where they are asked to: `--cut-at`, an input's chapters (MP4 and Matroska) and,
/// live, SIGUSR1.
@Suite struct CutPointTests {
    static let frameSeconds = 1.0 / 25
    /// A chapter starts here in both chapter inputs.
    static let chapterSeconds = 4.7

    /// 8 s at 25 fps with a keyframe every second exactly, AAC, and two chapters (0 s and 4.7 s):
    /// `chapters.mp4`, and the same streams copied into `chapters.mkv`.
    static let inputs: Result<(mp4: URL, mkv: URL, soundOnly: URL), any Error> = Result {
        let directory = TranscodeWorkspace.shared.directory
        let metadata = directory.appendingPathComponent("chapters.txt")
        try """
            ;FFMETADATA1
            [CHAPTER]
            TIMEBASE=1/1000
            START=0
            END=4700
            title=One
            [CHAPTER]
            TIMEBASE=1/1000
            START=4700
            END=8000
            title=Two

            """.write(to: metadata, atomically: true, encoding: .utf8)
        let mp4 = directory.appendingPathComponent("chapters.mp4")
        let mkv = directory.appendingPathComponent("chapters.mkv")
        try SyncClip.ffmpeg(["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
                             "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-i", metadata.path,
                             "-map", "0:v", "-map", "1:a", "-map_chapters", "2", "-t", "8"]
                            + TranscodeInputs.x264 + ["-g", "25", "-keyint_min", "25", "-sc_threshold", "0"]
                            + TranscodeInputs.aac + [mp4.path])
        try SyncClip.ffmpeg(["-nostdin", "-v", "error", "-y", "-i", mp4.path, "-c", "copy", mkv.path])
        let soundOnly = directory.appendingPathComponent("chapters-sound.mkv")
        try SyncClip.ffmpeg(["-nostdin", "-v", "error", "-y", "-i", mp4.path, "-vn", "-c:a", "flac", soundOnly.path])
        return (mp4, mkv, soundOnly)
    }

    /// Packages `input` into a fresh directory with `arguments`; the stream must validate.
    static func package(_ input: URL, _ arguments: [String]) throws -> PackagedStream {
        let directory = try PackagedStream.temporaryDirectory()
        let result = try ExternalTools.runHlscap(["file", input.path, "--out", directory.path, "--quiet"] + arguments,
                                                 timeoutSeconds: 300)
        guard result.succeeded else { throw ExternalToolError.failed(command: "hlscap file \(input.path)", result: result) }
        try ExternalTools.validateStream(directory)
        return PackagedStream(directory: directory, result: result)
    }

    /// The input time of the first video frame, which the stream puts at 10 s.
    static func firstVideoSeconds(_ input: URL) throws -> Double {
        let result = try ExternalTools.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-read_intervals", "%+#1",
                                                       "-show_entries", "packet=pts_time", "-of", "csv=p=0", input.path])
        let line = result.stdout.split(separator: "\n").first.map(String.init) ?? ""
        guard let seconds = Double(line.trimmingCharacters(in: CharacterSet(charactersIn: ","))) else {
            throw ExternalToolError.unexpectedOutput(command: "ffprobe first packet of \(input.path)", output: result.stdout)
        }
        return seconds
    }

    /// Each segment's start in input seconds: the first video sample's presentation time, less 10 s, plus
    /// the input's first frame time.
    static func segmentStarts(_ stream: PackagedStream, firstFrameSeconds: Double) throws -> [Double] {
        try stream.videoSegmentStartSeconds().map { $0 - 10 + firstFrameSeconds }
    }

    /// Whether one of `starts` lies in [point, point + a frame], with a millisecond for rounding.
    static func hasStart(_ starts: [Double], withinAFrameAfter point: Double) -> Bool {
        starts.contains { $0 >= point - 0.001 && $0 <= point + frameSeconds + 0.001 }
    }

    @Test func transcodingStartsSegmentsAtCutAtPointsAndChaptersWithinOneFrame() throws {
        let input = try Self.inputs.get().mp4
        let stream = try Self.package(input, ["--transcode", "--cut-at", "2.5,6.33"])
        defer { stream.remove() }
        let starts = try Self.segmentStarts(stream, firstFrameSeconds: Self.firstVideoSeconds(input))
        for point in [2.5, Self.chapterSeconds, 6.33] {
            #expect(Self.hasStart(starts, withinAFrameAfter: point), "no segment starts at \(point) s: \(starts)")
        }
        // The grid goes on between them.
        for boundary in [2.0, 4.0, 6.0] {
            #expect(Self.hasStart(starts, withinAFrameAfter: boundary), "\(boundary) s: \(starts)")
        }
        let problems = try stream.segmentProblems()
        #expect(problems.isEmpty, "\(problems)")
        let playlist = try stream.playlist()
        #expect(playlist.segments.allSatisfy { Int($0.durationSeconds.rounded()) <= playlist.targetDurationSeconds })
    }

    /// Without video, the chapter cuts at the first AAC frame at or after it.
    @Test func chaptersCutASoundOnlyStream() throws {
        let stream = try Self.package(try Self.inputs.get().soundOnly, [])
        defer { stream.remove() }
        let aacFrameSeconds = 1024.0 / 48_000
        // The stream's first sample, at 10 s, is the encoder's priming frame before the input's start.
        let starts = try stream.segmentStartSeconds(handler: "soun").map { $0 - 10 - aacFrameSeconds }
        #expect(starts.contains { $0 >= Self.chapterSeconds - 0.001 && $0 <= Self.chapterSeconds + aacFrameSeconds },
                "\(starts)")
    }

    @Test func matroskaChaptersStartSegmentsWhenTranscoding() throws {
        let input = try Self.inputs.get().mkv
        let stream = try Self.package(input, ["--transcode"])
        defer { stream.remove() }
        let starts = try Self.segmentStarts(stream, firstFrameSeconds: Self.firstVideoSeconds(input))
        #expect(Self.hasStart(starts, withinAFrameAfter: Self.chapterSeconds), "\(starts)")
        #expect(starts.count == 5, "0, 2, 4, 4.7 and 6 s: \(starts)")
    }

    /// Copying cuts only at keyframes (every second here): 2.5 s and the chapter at 4.7 s move to 3 s and
    /// 5 s, and the summary says so.
    @Test func copyingCutsAtTheNextKeyframeAndSaysHowFarTheCutMoved() throws {
        let input = try Self.inputs.get().mp4
        let stream = try Self.package(input, ["--copy", "--cut-at", "2.5"])
        defer { stream.remove() }
        let starts = try Self.segmentStarts(stream, firstFrameSeconds: Self.firstVideoSeconds(input))
        #expect(starts.map { ($0 * 1000).rounded() / 1000 } == [0, 2, 3, 4, 5, 6], "\(starts)")
        #expect(stream.result.stdout.hasSuffix("mode copy (--copy); cuts moved to the next keyframe: 2.500 s by 0.500 s, "
                                               + "4.700 s by 0.300 s\n"), "\(stream.result.stdout)")
        let problems = try stream.segmentProblems()
        #expect(problems.isEmpty, "\(problems)")
    }

    /// A cut point past the 8 s input, or when copying past its last keyframe (7 s), starts no segment,
    /// and hlscap says so instead of ignoring it.
    @Test func cutPointsNoSegmentCanStartAtAreReported() throws {
        let input = try Self.inputs.get().mp4
        for (mode, ignored) in [("--copy", ["7.500", "9.000"]), ("--transcode", ["9.000"])] {
            let stream = try Self.package(input, [mode, "--cut-at", "2.5,7.5,9"])
            defer { stream.remove() }
            let warnings = stream.result.stderr.split(separator: "\n").filter { $0.contains("warning: --cut-at") }
            #expect(warnings.count == ignored.count, "\(mode): \(stream.result.stderr)")
            for (warning, seconds) in zip(warnings, ignored) {
                #expect(warning.hasPrefix("hlscap: warning: --cut-at \(seconds): no segment starts there"), "\(warning)")
            }
        }
    }

    @Test(arguments: ["2,x", "-1", "0", "", "3,,4", "1.2345"])
    func badCutPointsAreAUsageError(value: String) throws {
        let input = try Self.inputs.get().mp4
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out")
        let result = try ExternalTools.runHlscap(["file", input.path, "--out", output.path, "--cut-at", value])
        #expect(result.exitStatus == 64, "\(result.stderr)")
        let first = result.stderr.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.contains("--cut-at") && first.contains("\"\(value)\""), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }
}

extension PackagedStream {
    /// Each segment's first video sample's presentation time, in seconds of the stream (its first frame at 10 s).
    func videoSegmentStartSeconds() throws -> [Double] {
        try segmentStartSeconds(handler: "vide")
    }

    /// Each segment's first sample's presentation time in the `vide` or `soun` track, in seconds.
    func segmentStartSeconds(handler: String) throws -> [Double] {
        var starts: [Double] = []
        for entry in try playlist().segments {
            let tracks = try InitSection(bytes(entry.mapURI ?? "init.mp4"))
            let trackID = try #require(handler == "vide" ? tracks.videoTrackID : tracks.audioTrackID)
            let timescale = try #require(tracks.timescales[trackID])
            let moof = try #require(try MP4Box.parse(bytes(entry.uri)).first("moof"))
            for traf in moof.all("traf") where try traf.first("tfhd")?.trackFragmentTrackID() == trackID {
                let decodeTime = try #require(try traf.first("tfdt")?.baseDecodeTime())
                let offset = try #require(try traf.first("trun")?.trackRun()).entries.first?.compositionOffset ?? 0
                starts.append(Double(Int64(decodeTime) + Int64(offset)) / Double(timescale))
            }
        }
        return starts
    }
}
