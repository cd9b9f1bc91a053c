import Foundation
import HLSTestSupport
import Testing

/// Damaged or unusual inputs on the transcoding path: a damaged packet is skipped with a warning; what
/// cannot be transcoded gets one clear `hlscap:` line, exit 65 and no stream; odd inputs still package.
@Suite struct TranscodeBadInputTests {
    static var directory: URL { TranscodeWorkspace.shared.directory }

    /// Runs `hlscap file INPUT --out <fresh dir> extra…`.
    static func package(_ input: URL, _ extraArguments: [String] = []) throws -> PackagedStream {
        let output = directory.appendingPathComponent("bad-\(UUID().uuidString)", isDirectory: true)
        let result = try ExternalTools.runHlscap(["file", input.path, "--out", output.path, "--quiet"] + extraArguments,
                                                 timeoutSeconds: 120)
        if result.succeeded { try ExternalTools.validateStream(output) }
        return PackagedStream(directory: output, result: result)
    }

    static func ffmpegToFile(_ name: String, _ arguments: [String]) throws -> URL {
        let file = directory.appendingPathComponent(name)
        try SyncClip.ffmpeg(["-nostdin", "-v", "error", "-y"] + arguments + [file.path])
        return file
    }

    /// A 3 s 320x240 H.264/AAC clip in Matroska (its packets are easy to find and damage).
    static func matroskaClip() throws -> URL {
        try TranscodeWorkspace.shared.input(SyncClip(
            name: "plain.mkv", seconds: 3, video: TranscodeInputs.video(320, 240, 25), audio: TranscodeInputs.stereo48k,
            encoding: TranscodeInputs.x264 + TranscodeInputs.aac))
    }

    func expectRefused(_ outcome: PackagedStream, mentioning words: [String],
                       sourceLocation: SourceLocation = #_sourceLocation) {
        let message = outcome.result.stderr
        #expect(outcome.result.exitStatus == 65, "stderr: \(message)", sourceLocation: sourceLocation)
        #expect(message.contains("hlscap: "), "\(message)", sourceLocation: sourceLocation)
        #expect(!message.contains("Fatal error"), sourceLocation: sourceLocation)
        for word in words {
            #expect(message.contains(word), "\"\(message)\" should mention \(word)", sourceLocation: sourceLocation)
        }
        #expect(!FileManager.default.fileExists(atPath: outcome.playlistURL.path), "a refused input left a playlist",
                sourceLocation: sourceLocation)
    }

    @Test func damagedVideoPacketIsSkippedCountedAndWarnedAbout() throws {
        let clip = try Self.matroskaClip()
        let packets = try ExternalTools.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                        "packet=pos,size", "-of", "csv=p=0", clip.path])
        let rows = packets.stdout.split(separator: "\n").map { $0.split(separator: ",").compactMap { Int($0) } }
        let middle = try #require(rows.dropFirst(rows.count / 2).first { $0.count == 2 })
        // ffprobe's `pos` of a Matroska block points at its 4-byte header (track, timecode, flags); the
        // frame follows. Overwriting it, NAL length fields included, leaves nothing the decoder accepts.
        let (size, blockStart) = (middle[0], middle[1])
        let frameStart = blockStart + Self.matroskaSimpleBlockHeaderBytes
        var bytes = Array(try Data(contentsOf: clip))
        bytes.replaceSubrange(frameStart..<frameStart + size, with: repeatElement(0xFF, count: size))
        let damaged = Self.directory.appendingPathComponent("damaged-packet.mkv")
        try Data(bytes).write(to: damaged)

        let outcome = try Self.package(damaged, ["--transcode"])
        #expect(outcome.result.exitStatus == 0, "stderr: \(outcome.result.stderr)")
        #expect(outcome.result.stderr == "hlscap: warning: skipped 1 corrupt packet(s); the stream is valid but may "
                + "show a glitch there\n")
        #expect(try ExternalTools.ffmpegDecodeErrors(path: outcome.playlistURL.path) == "")
        // The damaged frame is left out; every other frame keeps its time, the one before it lasting two.
        #expect(try ExternalTools.ffprobeFrameCount(path: outcome.playlistURL.path)
                == ExternalTools.ffprobeFrameCount(path: clip.path) - 1)
        let problems = try outcome.segmentProblems()
        #expect(problems.isEmpty, "\(problems)")
    }

    static let matroskaSimpleBlockHeaderBytes = 4

    @Test func fileEndingMidFrameIsRefusedWithOneLine() throws {
        let transportStream = try Self.ffmpegToFile("plain.ts", ["-i", try Self.matroskaClip().path, "-c", "copy"])
        let whole = Array(try Data(contentsOf: transportStream))
        // Not on a 188-byte packet boundary: the file ends inside a frame.
        let cut = Self.directory.appendingPathComponent("cut.ts")
        try Data(whole.prefix(whole.count * 6 / 10 + 100)).write(to: cut)
        let outcome = try Self.package(cut, ["--transcode"])
        expectRefused(outcome, mentioning: [cut.path, "truncated"])
        #expect(outcome.result.stderr.split(separator: "\n").count == 1, "\(outcome.result.stderr)")
        #expect(PackagedStream.files(below: outcome.directory).isEmpty)
    }

    /// A WAV file whose `fmt ` chunk is edited: `field` bytes after the chunk's size, as little-endian.
    static func editedWAV(_ name: String, fieldOffset: Int, value: UInt32, width: Int) throws -> URL {
        let wav = try ffmpegToFile("tone-" + name, ["-f", "lavfi", "-i", "sine=sample_rate=48000", "-t", "1",
                                                "-c:a", "pcm_s16le"])
        var bytes = Array(try Data(contentsOf: wav))
        let chunk = try #require(bytes.indices.dropLast(4).first { Array(bytes[$0..<$0 + 4]) == Array("fmt ".utf8) })
        let field = chunk + 8 + fieldOffset
        for index in 0..<width { bytes[field + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
        let edited = directory.appendingPathComponent(name)
        try Data(bytes).write(to: edited)
        return edited
    }

    /// WAVE `fmt ` fields (after format tag): channels (2 bytes) at 2, sample rate (4 bytes) at 4.
    static let channelsField = 2
    static let sampleRateField = 4

    @Test(arguments: [(3, "3 Hz"), (4_000_000_000, "sample rate")])
    func absurdSampleRateIsRefused(rate: UInt32, words: String) throws {
        let wav = try Self.editedWAV("rate-\(rate).wav", fieldOffset: Self.sampleRateField, value: rate, width: 4)
        expectRefused(try Self.package(wav), mentioning: [words])
    }

    @Test func audioWithNoChannelsIsRefused() throws {
        let wav = try Self.editedWAV("no-channels.wav", fieldOffset: Self.channelsField, value: 0, width: 2)
        expectRefused(try Self.package(wav), mentioning: [wav.path])
    }

    @Test func oddDimensionsAreMadeEven() throws {
        let odd = try Self.ffmpegToFile("odd-321x241.mkv", ["-f", "lavfi", "-i", "testsrc2=size=321x241:rate=25",
                                                            "-t", "1", "-c:v", "ffv1"])
        let outcome = try Self.package(odd)
        #expect(outcome.result.exitStatus == 0, "stderr: \(outcome.result.stderr)")
        let size = try ExternalTools.ffprobeVideoSize(path: outcome.playlistURL.path)
        #expect(size.width == 320 && size.height == 240, "\(size)")
        #expect(try ExternalTools.ffmpegDecodeErrors(path: outcome.playlistURL.path) == "")
        let decoded = try ExternalTools.gstreamerDecode(directory: outcome.directory)
        #expect(decoded.ok && decoded.videoFrames == 25, "\(decoded.report)")
    }

    /// A Matroska track whose codec ID FFmpeg does not know: demuxed as a video stream it cannot decode.
    @Test func aStreamWithoutADecoderIsRefusedNamingTheFile() throws {
        let vp8 = try Self.ffmpegToFile("vp8-for-unknown-codec.mkv", ["-f", "lavfi", "-i",
                                                                    "testsrc2=size=160x120:rate=25", "-t", "1",
                                                                    "-c:v", "libvpx"])
        let bytes = try Data(contentsOf: vp8)
        let codecID = Data("V_VP8".utf8)
        let position = try #require(bytes.range(of: codecID))
        var unknown = bytes
        unknown.replaceSubrange(position, with: Data("V_ZZ8".utf8))
        let input = vp8.deletingLastPathComponent().appendingPathComponent("unknown-codec.mkv")
        try unknown.write(to: input)
        expectRefused(try Self.package(input), mentioning: [input.path, "no decoder"])
    }

    @Test func picturesWiderThan8192PixelsAreRefused() throws {
        let huge = try Self.ffmpegToFile("huge-9000x16.mkv", ["-f", "lavfi", "-i", "color=size=9000x16:rate=25",
                                                              "-t", "1", "-c:v", "ffv1"])
        expectRefused(try Self.package(huge), mentioning: [huge.path, "9000x16", "8192"])
    }

    /// Copying needs timestamps: automatic mode transcodes such an input, and says why.
    @Test(arguments: [[], ["--transcode"]])
    func rawH264WithoutTimestampsStillPackages(modeArguments: [String]) throws {
        let raw = try Self.ffmpegToFile("no-timestamps-\(modeArguments.count).h264", ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
                                                               "-t", "2"] + TranscodeInputs.x264)
        let outcome = try Self.package(raw, modeArguments)
        #expect(outcome.result.exitStatus == 0, "stderr: \(outcome.result.stderr)")
        #expect(outcome.result.stdout.contains("mode transcode ("))
        #expect(try ExternalTools.ffprobeFrameCount(path: outcome.playlistURL.path) == 50)
        #expect(try ExternalTools.ffmpegDecodeErrors(path: outcome.playlistURL.path) == "")
        let problems = try outcome.segmentProblems()
        #expect(problems.isEmpty, "\(problems)")
    }
}
