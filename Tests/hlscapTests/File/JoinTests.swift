import Foundation
import HLSTestSupport
import Testing

/// Several inputs into one stream: transcoding letterboxes them onto one timeline; copying keeps each
/// input's encoding in its own discontinuity section.
@Suite struct JoinTests {
    /// Two H.264/AAC clips whose parameters differ (size, frame rate, audio rate and channels).
    static let copyJoin = TranscodeCase(
        name: "copy-joined", clips: [TranscodeInputs.joinFirst, smallerH264], arguments: ["--copy"],
        outputSize: (320, 240))
    static let smallerH264 = SyncClip(
        name: "join-smaller.mp4", seconds: 3,
        video: SyncClip.Video(width: 256, height: 144, frameRate: "30", framesPerFlash: 30),
        audio: SyncClip.Audio(sampleRate: 44_100, layout: "mono"), encoding: TranscodeInputs.x264 + TranscodeInputs.aac)

    /// Copied inputs whose parameters differ would need a second init section after a discontinuity:
    /// hls.js stops at it and FFmpeg decodes 300 of 360 frames of a 720p and a 540p clip with the
    /// first one's parameters. A forced copy is refused, naming the input where they change, and
    /// nothing is left behind.
    @Test(arguments: [
        (copyJoin, "join-smaller.mp4", "join-first.mp4", "H.264 320x240 to H.264 256x144, AAC 48000 Hz 2 ch to AAC 44100 Hz 1 ch"),
        (TranscodeCase(name: "copy-joined-720p-540p", clips: [hd720, qhd540], arguments: ["--copy"]),
         "join-540p.mp4", "join-720p.mp4", "H.264 1280x720 to H.264 960x540"),
    ])
    func aForcedCopyOfInputsWithDifferentParametersIsRefused(join: TranscodeCase, changing: String, before: String,
                                                            change: String) throws {
        let paths = try join.clips.map { try TranscodeWorkspace.shared.input($0).path }
        let output = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: output) }
        let result = try ExternalTools.runHlscap(["file"] + paths + ["--out", output.path] + join.arguments,
                                                 timeoutSeconds: 300)
        #expect(result.exitStatus == 65, "\(result.stdout)\(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        let changed = try #require(paths.first { $0.hasSuffix("/" + changing) })
        let first = try #require(paths.first { $0.hasSuffix("/" + before) })
        #expect(lines == ["hlscap: \(changed): its encoding parameters differ from \(first)'s (\(change)), and copied "
                          + "inputs share one init section; leave out --copy and transcoding will handle it"],
                "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: output.path).isEmpty)
    }

    /// A 720p and a 540p H.264/AAC clip, each copyable on its own, joined in automatic mode.
    static let mixedSizes = TranscodeCase(name: "joined-720p-540p", clips: [hd720, qhd540], outputSize: (1280, 720))
    static let hd720 = joinable(name: "join-720p.mp4", width: 1280, height: 720)
    static let qhd540 = joinable(name: "join-540p.mp4", width: 960, height: 540)

    /// 6 s at 30 fps with a keyframe every second: copying would take it.
    static func joinable(name: String, width: Int, height: Int) -> SyncClip {
        SyncClip(name: name, seconds: 6,
                 video: SyncClip.Video(width: width, height: height, frameRate: "30", framesPerFlash: 30),
                 audio: TranscodeInputs.stereo48k, encoding: TranscodeInputs.x264 + ["-g", "30"] + TranscodeInputs.aac)
    }

    /// Inputs that cannot share one init section are transcoded into one timeline in automatic mode, since
    /// FFmpeg's HLS reader and older hls.js keep the first init section: every frame, no frame added, and
    /// audio without a gap or a cut.
    @Test func automaticModeTranscodesInputsThatCannotShareAnInitSection() throws {
        let stream = try TranscodeWorkspace.shared.stream(Self.mixedSizes)
        #expect(stream.result.stdout.contains("join-540p.mp4 and "), "\(stream.result.stdout)")
        #expect(stream.result.stdout.contains("join-720p.mp4 differ in their encoding parameters"),
                "\(stream.result.stdout)")
        let playlist = try stream.playlist()
        #expect(playlist.segments.allSatisfy { !$0.discontinuity && $0.mapURI == "init.mp4" })
        #expect(!stream.files().contains("init-2.mp4"))
        try ExternalTools.validateStream(stream.directory)
        let path = stream.playlistURL.path
        let inputFrames = try Self.mixedSizes.clips.reduce(0) {
            try $0 + ExternalTools.ffprobeFrameCount(path: TranscodeWorkspace.shared.input($1).path)
        }
        #expect(inputFrames == 360)
        #expect(try ExternalTools.ffprobeFrameCount(path: path) == inputFrames)
        #expect(try ExternalTools.ffmpegDecodeErrors(path: path) == "")
        let decoded = try ExternalTools.gstreamerDecode(directory: stream.directory)
        #expect(decoded.ok, "\(decoded.report)")
        #expect(decoded.videoFrames == inputFrames, "\(decoded.report)")
        let gaps = try Self.audioGapsSeconds(path: path)
        #expect(gaps.isEmpty, "audio breaks at \(gaps)")
        let audioSeconds = try ExternalTools.presentationSpanSeconds(path: path, stream: "a:0")
        #expect(abs(decoded.audioSeconds - audioSeconds) <= 0.002, "\(decoded.report)")
        let sync = try ExternalTools.avSync(path: path, maxOffsetMilliseconds: 10, minimumPairs: 11)
        #expect(sync.ok, "\(sync.report)")
        // hls.js in Chromium plays it through (Chromium's native player is checked with the transcodes).
        let served = try ServedStream.start(["serve", stream.directory.path, "--listen", "127.0.0.1:0"])
        defer { served.process.send(SIGTERM) }
        let hlsjs = try ExternalTools.runJSONTool("latency_probe.py", [served.base.absoluteString + "playlist.m3u8",
                                                                "--hlsjs", HLSJS.path, "--vod", "--seconds", "11.5"],
                                          timeoutSeconds: 120)
        #expect(hlsjs.ok, "\(hlsjs.text)")
    }

    /// Where an audio packet does not start within a millisecond of the previous one's end.
    static func audioGapsSeconds(path: String) throws -> [Double] {
        let result = try ExternalTools.run("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries",
                                                       "packet=pts_time,duration_time", "-of", "csv=p=0", path])
        guard result.succeeded else { throw ExternalToolError.failed(command: "ffprobe \(path)", result: result) }
        let packets = result.stdout.split(separator: "\n").compactMap { line -> (start: Double, duration: Double)? in
            let fields = line.split(separator: ",").compactMap { Double($0) }
            return fields.count >= 2 ? (fields[0], fields[1]) : nil
        }.sorted { $0.start < $1.start }
        return zip(packets, packets.dropFirst()).compactMap { previous, next in
            abs(next.start - previous.start - previous.duration) > 0.001 ? next.start : nil
        }
    }

    /// Luma below which a letterbox bar counts as black, and above which a flash counts as white.
    static let blackLuma = 40.0
    static let whiteLuma = 200.0

    @Test func transcodedSecondInputIsLetterboxedIntoTheFirstInputsSize() throws {
        let testCase = try #require(TranscodeInputs.cases.first { $0.name == "joined-sizes" })
        let stream = try TranscodeWorkspace.shared.stream(testCase)
        let first = testCase.clips[0]
        let wide = try #require(testCase.clips[1].video)
        let output = try #require(testCase.outputSize)
        // The second input's second flash: the brightest of the frames around one second into it.
        let secondFlash = Int(first.seconds + 1) * wide.framesPerFlash
        let candidates = try (secondFlash - 2...secondFlash + 2)
            .map { try Self.grayFrame(path: stream.playlistURL.path, index: $0, width: output.width, height: output.height) }
        let picture = try #require(candidates.max { $0.reduce(0) { $0 + Int($1) } < $1.reduce(0) { $0 + Int($1) } })
        let barRows = (output.height - wide.height * output.width / wide.width) / 2
        func meanLuma(rows: Range<Int>) -> Double {
            let pixels = picture[rows.lowerBound * output.width..<rows.upperBound * output.width]
            return Double(pixels.reduce(0) { $0 + Int($1) }) / Double(pixels.count)
        }
        // A row of margin on each side of the bars' edges, where scaling blends them.
        #expect(meanLuma(rows: 0..<barRows - 1) < Self.blackLuma)
        #expect(meanLuma(rows: output.height - barRows + 1..<output.height) < Self.blackLuma)
        #expect(meanLuma(rows: barRows + 1..<output.height - barRows - 1) > Self.whiteLuma)
    }

    /// Frame `index` of the first video stream as 8-bit gray pixels, row by row.
    static func grayFrame(path: String, index: Int, width: Int, height: Int) throws -> [UInt8] {
        let file = TranscodeWorkspace.shared.directory.appendingPathComponent("frame-\(UUID().uuidString).gray")
        defer { try? FileManager.default.removeItem(at: file) }
        try SyncClip.ffmpeg(["-nostdin", "-v", "error", "-i", path, "-map", "0:v:0",
                             "-vf", "select=eq(n\\,\(index)),format=gray", "-frames:v", "1", "-f", "rawvideo", file.path])
        let pixels = Array(try Data(contentsOf: file))
        guard pixels.count == width * height else {
            throw ExternalToolError.unexpectedOutput(command: "ffmpeg frame \(index) of \(path)", output: "\(pixels.count) bytes")
        }
        return pixels
    }
}
