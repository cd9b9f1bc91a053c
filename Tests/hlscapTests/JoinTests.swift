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

    @Test func copiedInputsWithDifferentParametersGetTheirOwnInitSection() throws {
        let stream = try TranscodeWorkspace.shared.stream(Self.copyJoin)
        #expect(stream.result.stdout.contains("mode copy (--copy)"), "\(stream.result.stdout)")
        let playlist = try stream.playlist()
        let firstOfSecond = try #require(playlist.segments.firstIndex { $0.mapURI == "init-2.mp4" })
        #expect(firstOfSecond > 0)
        #expect(playlist.segments[..<firstOfSecond].allSatisfy { $0.mapURI == "init.mp4" && !$0.discontinuity })
        #expect(playlist.segments[firstOfSecond].discontinuity)
        #expect(playlist.segments[firstOfSecond...].allSatisfy { $0.mapURI == "init-2.mp4" })
        #expect(stream.files() == ["iframes.m3u8", "init-2.mp4", "init.mp4", "master.m3u8", "playlist.m3u8"]
                + playlist.segments.map(\.uri))
        let problems = try stream.segmentProblems()
        #expect(problems.isEmpty, "\(problems)")
        try ExternalTools.validateStream(stream.directory)
        let master = try String(contentsOf: stream.directory.appendingPathComponent("master.m3u8"), encoding: .utf8)
        #expect(master.components(separatedBy: "avc1.").count == 2 + 2 + 1, "CODECS and the I-frame stream name both inputs' H.264: \(master)")
        // FFmpeg 5.1's HLS demuxer keeps the first init section's decoder setup after a new EXT-X-MAP, so
        // it cannot read the playlist; each section, init and segments end to end, is a plain fMP4 file.
        let inputFrames = try Self.copyJoin.clips.map {
            try ExternalTools.ffprobeFrameCount(path: TranscodeWorkspace.shared.input($0).path)
        }
        let sections = [Array(playlist.segments[..<firstOfSecond]), Array(playlist.segments[firstOfSecond...])]
        for (section, frames) in zip(sections, inputFrames) {
            let file = TranscodeWorkspace.shared.directory.appendingPathComponent("section-\(UUID().uuidString).mp4")
            defer { try? FileManager.default.removeItem(at: file) }
            let parts = try [stream.bytes(section[0].mapURI ?? "")] + section.map { try stream.bytes($0.uri) }
            try Data(parts.joined()).write(to: file)
            #expect(try ExternalTools.ffmpegDecodeErrors(path: file.path) == "", "\(section[0].uri)")
            #expect(try ExternalTools.ffprobeFrameCount(path: file.path) == frames, "\(section[0].uri)")
        }
        let decoded = try ExternalTools.gstreamerDecode(directory: stream.directory)
        #expect(decoded.ok, "\(decoded.report)")
        #expect(decoded.videoFrames == inputFrames.reduce(0, +), "\(decoded.report)")
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
