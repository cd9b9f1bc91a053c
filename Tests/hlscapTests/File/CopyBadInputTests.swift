import Foundation
import HLSTestSupport
import Testing

/// Damaged H.264 parameter sets in an MPEG-TS recording on the copy path: an impossible picture is
/// refused as the transcoding path refuses it, and a damaged first SPS costs no more frames than
/// it costs ffmpeg's decoder.
@Suite struct CopyBadInputTests {
    /// The fixture's video with the SPS rewritten by `h264_sps_edit.py` (`editArguments`), back in
    /// MPEG-TS with the fixture's audio.
    static func transportStream(named name: String, editArguments: [String]) throws -> URL {
        let directory = try PackagedStream.temporaryDirectory()
        let fixture = ExternalTools.fixturesDirectory.appendingPathComponent("h264-aac.ts").path
        let original = directory.appendingPathComponent("original.h264").path
        let edited = directory.appendingPathComponent("edited.h264").path
        let output = directory.appendingPathComponent(name)
        let steps: [(String, [String])] = [
            ("ffmpeg", ["-nostdin", "-v", "error", "-i", fixture, "-map", "0:v", "-c", "copy", "-f", "h264", original]),
            ("python3", [ExternalTools.toolsDirectory.appendingPathComponent("h264_sps_edit.py").path,
                         original, edited] + editArguments),
            ("ffmpeg", ["-nostdin", "-v", "error", "-framerate", "25", "-f", "h264", "-i", edited, "-i", fixture,
                        "-map", "0:v", "-map", "1:a", "-c", "copy", output.path]),
        ]
        for (tool, arguments) in steps {
            let result = try ExternalTools.run(tool, arguments)
            guard result.succeeded else { throw ExternalToolError.failed(command: tool, result: result) }
        }
        return output
    }

    static func package(_ input: URL, _ extraArguments: [String]) throws -> PackagedStream {
        let output = try PackagedStream.temporaryDirectory()
        let result = try ExternalTools.runHlscap(["file", input.path, "--out", output.path, "--quiet"] + extraArguments)
        return PackagedStream(directory: output, result: result)
    }

    /// 12000x2000 is a picture FFmpeg decodes and hlscap does not take; 20000x20000 one FFmpeg does not
    /// allocate (it drops the SPS), so nothing in the input can be decoded.
    @Test func anImpossiblePictureIsRefusedInCopyMode() throws {
        let input = try Self.transportStream(named: "huge.ts", editArguments: ["--size", "12000x2000"])
        let copied = try Self.package(input, ["--copy"])
        defer { copied.remove() }
        #expect(copied.result.exitStatus == 65, "\(copied.result.stderr)")
        #expect(copied.result.stderr == "hlscap: \(input.path): the video is 12000x2000; hlscap takes pictures up "
                + "to 8192 pixels a side\n")
        #expect(!FileManager.default.fileExists(atPath: copied.playlistURL.path))

        let automatic = try Self.package(input, [])
        defer { automatic.remove() }
        #expect(automatic.result.exitStatus == 65, "\(automatic.result.stderr)")

        let undecodable = try Self.transportStream(named: "undecodable.ts", editArguments: ["--size", "20000x20000"])
        let undecodableCopy = try Self.package(undecodable, ["--copy"])
        defer { undecodableCopy.remove() }
        #expect(undecodableCopy.result.exitStatus == 65, "\(undecodableCopy.result.stderr)")
        #expect(undecodableCopy.result.stderr == "hlscap: \(undecodable.path): no H.264 parameter sets (SPS/PPS) found; "
                + "the video cannot be decoded\n")
        let undecodableAutomatic = try Self.package(undecodable, [])
        defer { undecodableAutomatic.remove() }
        #expect(undecodableAutomatic.result.exitStatus == 65, "\(undecodableAutomatic.result.stderr)")
    }

    @Test func aDamagedFirstParameterSetCostsNoMoreFramesThanItCostsADecoder() throws {
        let input = try Self.transportStream(named: "first-sps-damaged.ts",
                                             editArguments: ["--size", "20000x20000", "--first-only"])
        let decodable = try ExternalTools.ffprobeFrameCount(path: input.path)
        #expect(decodable == 75, "ffmpeg loses the first of the fixture's four GOPs")

        let copied = try Self.package(input, ["--copy"])
        defer { copied.remove() }
        #expect(copied.result.exitStatus == 0, "\(copied.result.stderr)")
        #expect(try ExternalTools.ffprobeFrameCount(path: copied.playlistURL.path) == decodable)
        #expect(try ExternalTools.ffmpegDecodeErrors(path: copied.playlistURL.path) == "")
        try ExternalTools.validateStream(copied.directory)
    }

    /// The first SPS has an id a decoder refuses (it takes 0 to 31): ffmpeg loses the first GOP and decodes
    /// the rest; a copy that kept that SPS in its init section decoded nothing.
    @Test func aFirstSPSADecoderRefusesIsLeftOutAsADecoderLeavesIt() throws {
        let input = try Self.transportStream(named: "first-sps-id-40.ts", editArguments: ["--sps-id", "40", "--only", "1"])
        let decodable = try ExternalTools.ffprobeFrameCount(path: input.path)
        #expect(decodable == 75, "ffmpeg loses the first of the fixture's four GOPs")
        let packaged = try Self.package(input, [])
        defer { packaged.remove() }
        #expect(packaged.result.exitStatus == 0, "\(packaged.result.stderr)")
        #expect(try ExternalTools.ffprobeFrameCount(path: packaged.playlistURL.path) == decodable)
        try ExternalTools.validateStream(packaged.directory)
    }

    /// The third GOP's SPS has a reserved aspect ratio, which a decoder refuses: copied, that SPS would
    /// travel in the samples. Automatic mode transcodes instead, --copy refuses with one line, and a
    /// stream another packager copied from it is invalid.
    @Test func samplesCarryingAnSPSADecoderRefusesAreNotCopied() throws {
        let input = try Self.transportStream(named: "third-sps-reserved-ratio.ts",
                                             editArguments: ["--aspect-ratio-idc", "100", "--only", "3"])
        let decodable = try ExternalTools.ffprobeFrameCount(path: input.path)

        let automatic = try Self.package(input, [])
        defer { automatic.remove() }
        #expect(automatic.result.exitStatus == 0, "\(automatic.result.stderr)")
        #expect(automatic.result.stdout.contains("mode transcode (\(input.path): an H.264 sequence parameter set in "
            + "the samples cannot be read"), "\(automatic.result.stdout)")
        #expect(try ExternalTools.ffprobeFrameCount(path: automatic.playlistURL.path) == decodable)
        try ExternalTools.validateStream(automatic.directory)

        let copied = try Self.package(input, ["--copy"])
        defer { copied.remove() }
        #expect(copied.result.exitStatus == 65, "\(copied.result.stderr)")
        let lines = copied.result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("hlscap: \(input.path): an H.264 sequence parameter set in the "
            + "samples cannot be read") && lines[0].hasSuffix("; leave out --copy and transcoding will handle it"),
                "\(copied.result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: copied.playlistURL.path))

        // ffmpeg's HLS muxer copies the samples as they are: the validator names what hlscap refused.
        let other = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: other) }
        let muxed = try ExternalTools.run("ffmpeg", [
            "-nostdin", "-v", "error", "-i", input.path, "-c", "copy", "-bsf:a", "aac_adtstoasc", "-f", "hls",
            "-hls_segment_type", "fmp4",
            "-hls_time", "1", "-hls_playlist_type", "vod", other.appendingPathComponent("playlist.m3u8").path])
        #expect(muxed.succeeded, "\(muxed.stderr)")
        let report = try ExternalTools.runHlscap(["validate", other.path])
        #expect(report.exitStatus == 65, "\(report.stdout)\(report.stderr)")
        #expect(report.stdout.contains("[parameter-sets, "), "\(report.stdout)")
    }

    /// Video PES packets hold one frame, audio ones about eleven AAC frames: one far frame, or a run.
    /// Transcoding would otherwise fill the 3216 s gap with repeated frames and silence.
    @Test(arguments: [("video", 50), ("audio", 8)], [["--copy"], ["--transcode"]])
    func timestampsFarFromTheirNeighboursAreRestampedBetweenThem(damage: (stream: String, index: Int),
                                                                 mode: [String]) throws {
        let (stream, index) = damage
        let directory = try PackagedStream.temporaryDirectory()
        let input = directory.appendingPathComponent("one-far-\(stream).ts")
        let restamp = try ExternalTools.run("python3", [
            ExternalTools.toolsDirectory.appendingPathComponent("ts_restamp.py").path,
            ExternalTools.fixturesDirectory.appendingPathComponent("h264-aac.ts").path, input.path,
            "--stream", stream, "--index", String(index), "--seconds", "3219.9"])
        #expect(restamp.succeeded, "\(restamp.stderr)")

        let started = Date()
        let copied = try Self.package(input, mode)
        defer { copied.remove() }
        #expect(copied.result.exitStatus == 0, "\(copied.result.stderr)")
        #expect(Date().timeIntervalSince(started) < 30)
        let playlist = try copied.playlist()
        #expect(playlist.targetDurationSeconds == 2, "no segment stretched to the far time")
        #expect(abs(playlist.segments.reduce(0) { $0 + $1.durationSeconds } - 4) < 0.1)
        #expect(try ExternalTools.ffprobeFrameCount(path: copied.playlistURL.path) == 100)
        try ExternalTools.validateStream(copied.directory)
    }
}
