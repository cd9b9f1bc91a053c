import Foundation
import HLSTestSupport
import Testing

/// A phone's variable frame rate: one second at 60 fps, the next at 20 fps, and so on, with a flash and
/// a beep at every whole second. Transcoding keeps every frame at its own time; `--fps` converts to a
/// constant rate without showing any frame more than half a frame away from its time.
@Suite struct VariableFrameRateTests {
    /// Every third frame of the odd seconds is kept: 60 + 20 frames every two seconds, 400 in 10 s.
    static let alternating = SyncClip(
        name: "alternating-60-20.mp4", seconds: 10,
        video: SyncClip.Video(width: 320, height: 240, frameRate: "60", framesPerFlash: 60,
                              extraFilters: ["select='if(mod(floor(t)\\,2)\\,not(mod(n\\,3))\\,1)'"]),
        audio: TranscodeInputs.stereo48k, encoding: TranscodeInputs.x264 + TranscodeInputs.aac + ["-fps_mode", "vfr"])
    static let kept = TranscodeCase(name: "alternating-kept", clips: [alternating], arguments: ["--transcode"],
                                    outputSize: (320, 240))
    static let converted = TranscodeCase(name: "alternating-30fps", clips: [alternating], arguments: ["--fps", "30"],
                                         outputSize: (320, 240))
    static let toleranceSeconds = 0.001

    /// Presentation times of the video packets, ascending.
    static func videoTimes(_ path: String) throws -> [Double] {
        let result = try ExternalTools.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                       "packet=pts_time", "-of", "csv=p=0", path])
        guard result.succeeded else { throw ExternalToolError.failed(command: "ffprobe \(path)", result: result) }
        return result.stdout.split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: CharacterSet(charactersIn: ","))) }
            .sorted()
    }

    /// The sync checker's flash-to-beep offsets, in milliseconds.
    static func syncOffsets(_ path: String) throws -> [Double] {
        let report = try ExternalTools.avSync(path: path, maxOffsetMilliseconds: 1000, minimumPairs: 1).report
        let json = try JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any]
        return try #require(json?["offsets_ms"] as? [Double], "\(report)")
    }

    @Test func everyFrameKeepsItsOwnTime() throws {
        let input = try TranscodeWorkspace.shared.input(Self.alternating).path
        let stream = try TranscodeWorkspace.shared.stream(Self.kept)
        let inputTimes = try Self.videoTimes(input)
        let outputTimes = try Self.videoTimes(stream.playlistURL.path)
        #expect(inputTimes.count == 400)
        #expect(outputTimes.count == inputTimes.count, "\(outputTimes.count) frames out of \(inputTimes.count)")
        #expect(try ExternalTools.ffprobeFrameCount(path: stream.playlistURL.path) == inputTimes.count)
        // The stream puts the first frame at 10 s.
        let moved = zip(inputTimes, outputTimes).map { abs($1 - 10 - ($0 - inputTimes[0])) }
        #expect(moved.allSatisfy { $0 <= Self.toleranceSeconds }, "a frame moved \(moved.max() ?? 0) s")
        try ExternalTools.validateStream(stream.directory)
        #expect(try ExternalTools.ffmpegDecodeErrors(path: stream.playlistURL.path) == "")
        let decoded = try ExternalTools.gstreamerDecode(directory: stream.directory)
        #expect(decoded.ok, "\(decoded.report)")
        #expect(decoded.videoFrames == inputTimes.count, "\(decoded.report)")
    }

    @Test func flashToBeepOffsetsStayTheInputs() throws {
        let input = try TranscodeWorkspace.shared.input(Self.alternating).path
        let stream = try TranscodeWorkspace.shared.stream(Self.kept)
        let inputOffsets = try Self.syncOffsets(input)
        let outputOffsets = try Self.syncOffsets(stream.playlistURL.path)
        #expect(inputOffsets.count >= 8)
        #expect(outputOffsets.count == inputOffsets.count, "\(outputOffsets) for \(inputOffsets)")
        for (output, input) in zip(outputOffsets, inputOffsets) {
            #expect(abs(output - input) <= Self.toleranceSeconds * 1000, "\(outputOffsets) for \(inputOffsets)")
        }
    }

    @Test func frameRateInTheMasterPlaylistIsThePeak() throws {
        let stream = try TranscodeWorkspace.shared.stream(Self.kept)
        let master = try String(contentsOf: stream.directory.appendingPathComponent("master.m3u8"), encoding: .utf8)
        #expect(master.contains("FRAME-RATE=60.000"), "\(master)")
    }

    /// At 30 fps the 60 fps seconds lose every other frame and the 20 fps seconds repeat frames; a repeat
    /// holds the frame before, so each flash shows once, in the slot nearest its time.
    @Test func aConstantRateMovesNoFrameMoreThanHalfAFrame() throws {
        let input = try TranscodeWorkspace.shared.input(Self.alternating).path
        let stream = try TranscodeWorkspace.shared.stream(Self.converted)
        let outputTimes = try Self.videoTimes(stream.playlistURL.path)
        #expect(outputTimes.count == 300, "\(outputTimes.count) frames")
        let inputFlashes = try Self.flashTimes(input)
        let outputFlashes = try Self.flashTimes(stream.playlistURL.path).map { $0 - 10 }
        #expect(inputFlashes.count == 10)
        #expect(outputFlashes.count == inputFlashes.count, "\(outputFlashes) for \(inputFlashes)")
        for (output, input) in zip(outputFlashes, inputFlashes) {
            #expect(abs(output - input) <= 1.0 / 60 + Self.toleranceSeconds, "\(outputFlashes) for \(inputFlashes)")
        }
        let master = try String(contentsOf: stream.directory.appendingPathComponent("master.m3u8"), encoding: .utf8)
        #expect(master.contains("FRAME-RATE=30.000"), "\(master)")
    }

    /// Times of the white frames.
    static func flashTimes(_ path: String) throws -> [Double] {
        let result = try ExternalTools.run("ffmpeg", ["-nostdin", "-v", "error", "-copyts", "-i", path, "-map", "0:v:0",
                                                      "-vf", "signalstats,metadata=print:file=-", "-f", "null", "-"])
        guard result.succeeded else { throw ExternalToolError.failed(command: "ffmpeg signalstats \(path)", result: result) }
        var times: [Double] = []
        var current: Double?
        for line in result.stdout.split(separator: "\n") {
            if let range = line.range(of: "pts_time:") {
                current = Double(line[range.upperBound...].prefix { !$0.isWhitespace })
            } else if line.hasPrefix("lavfi.signalstats.YAVG="), let time = current,
                      let luma = Double(line.dropFirst("lavfi.signalstats.YAVG=".count)), luma > 128 {
                times.append(time)
            }
        }
        return times
    }
}
