import Foundation
import HLSTestSupport
import Testing

/// Bad input gets one clear line naming the file, a sysexits code, and never a stream that looks valid.
@Suite struct BadInputTests {
    struct Outcome {
        var result: ProcessResult
        var output: PackagedStream
    }

    /// Runs `hlscap file INPUT --out <fresh dir> extra…`.
    func package(input: String, extraArguments: [String] = []) throws -> Outcome {
        let output = try PackagedStream.temporaryDirectory()
        let result = try ExternalTools.runHlscap(["file", input, "--out", output.path] + extraArguments,
                                                 timeoutSeconds: 60)
        return Outcome(result: result, output: PackagedStream(directory: output, result: result))
    }

    func writeTemporaryFile(_ name: String, _ bytes: [UInt8]) throws -> URL {
        let url = try PackagedStream.temporaryDirectory().appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }

    func expectFailure(_ outcome: Outcome, exitStatus: Int32, mentioning words: [String],
                       sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(outcome.result.exitStatus == exitStatus, "stderr: \(outcome.result.stderr)",
                sourceLocation: sourceLocation)
        #expect(!outcome.result.timedOut, sourceLocation: sourceLocation)
        let message = outcome.result.stderr
        #expect(message.hasPrefix("hlscap: "), sourceLocation: sourceLocation)
        for word in words {
            #expect(message.contains(word), "\"\(message)\" should mention \(word)", sourceLocation: sourceLocation)
        }
        #expect(!message.contains("Fatal error"), sourceLocation: sourceLocation)
        #expect(!FileManager.default.fileExists(atPath: outcome.output.playlistURL.path),
                "a failed run left a playlist", sourceLocation: sourceLocation)
    }

    /// The fixture with one byte of its `avcC` changed: `payloadOffset` counts from the box's payload
    /// (4 is lengthSizeMinusOne, 7 the first SPS's length).
    func damagedConfiguration(payloadOffset: Int, value: UInt8) throws -> URL {
        var bytes = Array(try Data(contentsOf: ExternalTools.fixturesDirectory.appendingPathComponent("h264-aac.mp4")))
        let type = Array("avcC".utf8)
        let box = try #require(bytes.indices.first { Array(bytes[$0..<min($0 + 4, bytes.count)]) == type })
        bytes[box + 4 + payloadOffset] = value
        return try writeTemporaryFile("damaged-avcC-\(payloadOffset).mp4", bytes)
    }

    @Test(arguments: [(4, UInt8(0xFE)), (7, UInt8(0xFF))], [[], ["--transcode"]])
    func damagedH264ConfigurationIsBadDataNamingTheFile(damage: (Int, UInt8), mode: [String]) throws {
        let input = try damagedConfiguration(payloadOffset: damage.0, value: damage.1)
        let outcome = try package(input: input.path, extraArguments: mode)
        defer { outcome.output.remove() }
        expectFailure(outcome, exitStatus: 65, mentioning: [input.path, "h264"])
        #expect(outcome.result.stderr.split(separator: "\n").count == 1, "\(outcome.result.stderr)")
    }

    /// The fixture's AudioSpecificConfig (in `esds`, after the DecoderSpecificInfo tag 5 and its
    /// length) declaring sampling frequency index 13, which does not exist.
    @Test(arguments: ["audio-only.m4a", "flash-beep.mp4"], [[], ["--copy"], ["--transcode"]])
    func damagedAACConfigurationIsBadDataNamingTheFile(fixture: String, mode: [String]) throws {
        var bytes = Array(try Data(contentsOf: ExternalTools.fixturesDirectory.appendingPathComponent(fixture)))
        let esds = try #require(bytes.indices.first { Array(bytes[$0..<min($0 + 4, bytes.count)]) == Array("esds".utf8) })
        let tag = try #require(bytes[esds...].indices.first { bytes[$0] == 0x05 })
        let config = try #require(bytes[(tag + 1)...].indices.first { bytes[$0] & 0x80 == 0 }) + 1
        bytes[config] = 0x16  // AAC LC (2), then the first bits of index 13
        bytes[config + 1] = 0x90  // the rest of index 13, two channels
        let input = try writeTemporaryFile("damaged-esds-\(fixture)", bytes)
        let outcome = try package(input: input.path, extraArguments: mode)
        defer { outcome.output.remove() }
        expectFailure(outcome, exitStatus: 65, mentioning: [input.path])
        #expect(outcome.result.stderr.split(separator: "\n").count == 1, "\(outcome.result.stderr)")
    }

    @Test(arguments: ["missing", "damaged"])
    func aFailedRunLeavesNoOutputDirectory(input kind: String) throws {
        let input = kind == "missing" ? "/nonexistent/recording.mp4"
            : try damagedConfiguration(payloadOffset: 4, value: 0xFE).path
        let parent = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let output = parent.appendingPathComponent("new/stream")
        let result = try ExternalTools.runHlscap(["file", input, "--out", output.path, "--quiet"])
        #expect([65, 66].contains(result.exitStatus), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent.path) == [],
                "the run created \(output.path) and left it")
    }

    @Test func missingFile() throws {
        let outcome = try package(input: "/nonexistent/recording.mp4")
        defer { outcome.output.remove() }
        expectFailure(outcome, exitStatus: 66, mentioning: ["/nonexistent/recording.mp4"])
    }

    @Test func directoryInsteadOfFile() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let outcome = try package(input: directory.path)
        defer { outcome.output.remove() }
        expectFailure(outcome, exitStatus: 66, mentioning: [directory.path])
    }

    @Test func textFileIsNotMedia() throws {
        let text = try writeTemporaryFile("notes.mp4", Array("these are not frames\n".utf8))
        let outcome = try package(input: text.path)
        defer { outcome.output.remove() }
        expectFailure(outcome, exitStatus: 65, mentioning: [text.path])
    }

    @Test func emptyFile() throws {
        let empty = try writeTemporaryFile("empty.mp4", [])
        let outcome = try package(input: empty.path)
        defer { outcome.output.remove() }
        expectFailure(outcome, exitStatus: 65, mentioning: [empty.path])
    }

    @Test(arguments: ["h264-aac.mp4", "h264-aac.mkv", "h264-aac.ts"])
    func truncatedFileIsRefusedAndLeavesNoStream(fixture: String) throws {
        let whole = Array(try Data(contentsOf: ExternalTools.fixturesDirectory.appendingPathComponent(fixture)))
        let truncated = try writeTemporaryFile("cut-" + fixture, Array(whole.prefix(whole.count * 6 / 10)))
        let outcome = try package(input: truncated.path)
        defer { outcome.output.remove() }
        expectFailure(outcome, exitStatus: 65, mentioning: [truncated.path])
        #expect(outcome.output.files().isEmpty, "left behind: \(outcome.output.files())")
    }

    @Test func subtitlesOnlyHaveNeitherVideoNorAudio() throws {
        let srt = try writeTemporaryFile("captions.srt", Array("1\n00:00:00,000 --> 00:00:01,000\nhello\n\n".utf8))
        let outcome = try package(input: srt.path)
        defer { outcome.output.remove() }
        expectFailure(outcome, exitStatus: 65, mentioning: [srt.path])
    }

    @Test func codecThatCopyModeCannotCarry() throws {
        let input = ExternalTools.fixturesDirectory.appendingPathComponent("mpeg4-mp3.avi").path
        let outcome = try package(input: input, extraArguments: ["--copy"])
        defer { outcome.output.remove() }
        expectFailure(outcome, exitStatus: 65, mentioning: ["mpeg4-mp3.avi", "transcoding"])
    }

    @Test func unwritableOutputDirectory() throws {
        let input = ExternalTools.fixturesDirectory.appendingPathComponent("h264-aac.mp4").path
        let result = try ExternalTools.runHlscap(["file", input, "--out", "/proc/hlscap-out"])
        #expect(result.exitStatus == 73, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("/proc/hlscap-out"))
    }

    @Test func outputHoldingAStreamIsRefusedUnlessOverwriting() throws {
        let first = try PackagedStream.package("h264-aac.mp4")
        defer { first.remove() }
        let before = try first.bytes("playlist.m3u8")
        let input = ExternalTools.fixturesDirectory.appendingPathComponent("video-only.mp4").path
        let refused = try ExternalTools.runHlscap(["file", input, "--out", first.directory.path])
        #expect(refused.exitStatus == 73)
        #expect(refused.stderr.contains("--overwrite"))
        #expect(try first.bytes("playlist.m3u8") == before)

        let replaced = try ExternalTools.runHlscap(["file", input, "--out", first.directory.path, "--overwrite"])
        #expect(replaced.exitStatus == 0, "stderr: \(replaced.stderr)")
        let playlist = try first.playlist()
        #expect(first.files() == ["iframes.m3u8", "init.mp4", "master.m3u8", "playlist.m3u8"] + playlist.segments.map(\.uri))
        #expect(try ExternalTools.ffmpegDecodeErrors(path: first.playlistURL.path) == "")
        try ExternalTools.validateStream(first.directory)
    }

    @Test(arguments: [
        ["file"],
        ["file", "Fixtures/h264-aac.mp4"],
        ["file", "--out", "/tmp/x"],
        ["file", "Fixtures/h264-aac.mp4", "--out"],
        ["file", "Fixtures/h264-aac.mp4", "--out", "/tmp/x", "--bogus"],
        ["file", "Fixtures/h264-aac.mp4", "--out", "/tmp/x", "--segment-duration", "two"],
        ["file", "Fixtures/h264-aac.mp4", "--out", "/tmp/x", "--segment-duration", "0.1"],
        ["file", "Fixtures/h264-aac.mp4", "--out", "/tmp/x", "--copy", "--size", "640x360"],
        ["file", "Fixtures/h264-aac.mp4", "--out", "/tmp/x", "--copy", "--transcode"],
        ["file", "Fixtures/h264-aac.mp4", "--out", "/tmp/x", "--size", "huge"],
        ["file", "Fixtures/h264-aac.mp4", "--out", "/tmp/x", "--size", "9000x720"],
        ["file", "Fixtures/h264-aac.mp4", "--out", "/tmp/x", "--fps", "0"],
        ["file", "Fixtures/h264-aac.mp4", "--out", "/tmp/x", "--video-bitrate", "fast"],
        ["file", "Fixtures/h264-aac.mp4", "--out", "/tmp/x", "--audio-channels", "7"],
        ["live", "--video", "test", "--audio", "test", "--out", "/tmp/x", "--window", "2"],
        ["live", "--video", "none", "--audio", "none", "--out", "/tmp/x"],
        ["live", "--video", "test", "--audio", "test", "--out", "/tmp/x", "--resume", "--overwrite"],
        ["live", "--video", "test", "--audio", "test", "--out", "/tmp/x", "--size", "641x360"],
        ["live", "--video", "test", "--audio", "test"],
        ["nonsense"],
        [],
    ])
    func usageErrorsExit64(arguments: [String]) throws {
        let result = try ExternalTools.runHlscap(arguments)
        #expect(result.exitStatus == 64, "stderr: \(result.stderr)")
        #expect(result.stderr.hasPrefix("hlscap: "))
    }

    @Test func helpAndVersion() throws {
        let help = try ExternalTools.runHlscap(["--help"])
        #expect(help.exitStatus == 0)
        #expect(help.stdout.contains("file"))
        let fileHelp = try ExternalTools.runHlscap(["file", "--help"])
        #expect(fileHelp.exitStatus == 0)
        #expect(fileHelp.stdout.contains("--segment-duration"))
        let version = try ExternalTools.runHlscap(["--version"])
        #expect(version.exitStatus == 0)
        #expect(version.stdout.hasPrefix("hlscap "))
    }
}
