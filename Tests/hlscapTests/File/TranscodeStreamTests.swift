import Foundation
import HLSTestSupport
import Testing

/// Inputs of every kind transcoded by the built binary, then checked with ffmpeg, GStreamer, the sync
/// checker and the box reader. Each case is packaged once and shared by the tests below.
@Suite struct TranscodeStreamTests {
    static let cases = TranscodeInputs.cases
    /// Slack for rounding in ffprobe's printed times and for resampling in the decoders.
    static let timeSlackSeconds = 0.002
    static let maxSyncOffsetMilliseconds = 10.0

    @Test(arguments: cases)
    func summarySaysTranscodeWithAReason(testCase: TranscodeCase) throws {
        let stream = try TranscodeWorkspace.shared.stream(testCase)
        let summary = stream.result.stdout
        #expect(summary.range(of: #"mode transcode \(.+\)\n$"#, options: .regularExpression) != nil, "\(summary)")
        #expect(stream.result.stderr.isEmpty, "\(stream.result.stderr)")
    }

    @Test(arguments: cases)
    func hlscapValidateFindsNoError(testCase: TranscodeCase) throws {
        try ExternalTools.validateStream(try TranscodeWorkspace.shared.stream(testCase).directory)
    }

    @Test(arguments: cases)
    func ffmpegDecodesWithoutError(testCase: TranscodeCase) throws {
        let stream = try TranscodeWorkspace.shared.stream(testCase)
        #expect(try ExternalTools.ffmpegDecodeErrors(path: stream.playlistURL.path) == "")
    }

    @Test(arguments: cases)
    func gstreamerDecodesEveryFrame(testCase: TranscodeCase) throws {
        let stream = try TranscodeWorkspace.shared.stream(testCase)
        let playlist = stream.playlistURL.path
        let decoded = try ExternalTools.gstreamerDecode(directory: stream.directory)
        #expect(decoded.ok, "\(decoded.report)")
        if testCase.hasVideo {
            #expect(try decoded.videoFrames == ExternalTools.ffprobeFrameCount(path: playlist, stream: "v:0"),
                    "\(decoded.report)")
        }
        if testCase.hasAudio {
            let audioSeconds = try ExternalTools.presentationSpanSeconds(path: playlist, stream: "a:0")
            #expect(abs(decoded.audioSeconds - audioSeconds) <= Self.timeSlackSeconds, "\(decoded.report)")
        }
    }

    @Test(arguments: cases)
    func durationMatchesTheInputsWithinOneFrame(testCase: TranscodeCase) throws {
        let stream = try TranscodeWorkspace.shared.stream(testCase)
        let inputs = try testCase.clips.map { try TranscodeWorkspace.shared.input($0).path }
        let track = testCase.hasVideo ? "v:0" : "a:0"
        let inputSeconds = try inputs.reduce(0) { try $0 + ExternalTools.presentationSpanSeconds(path: $1, stream: track) }
        let outputSeconds = try ExternalTools.presentationSpanSeconds(path: stream.playlistURL.path, stream: track)
        let frames = try ExternalTools.ffprobeFrameCount(path: stream.playlistURL.path, stream: track)
        let frameSeconds = outputSeconds / Double(frames)
        // Output AAC also carries the encoder's priming frame before time zero (no edit list hides it).
        let allowedSeconds = (testCase.hasVideo ? frameSeconds : 2 * frameSeconds) + Self.timeSlackSeconds
        #expect(abs(outputSeconds - inputSeconds) <= allowedSeconds,
                "input \(inputSeconds) s, output \(outputSeconds) s, a frame \(frameSeconds) s")
    }

    @Test(arguments: cases.filter { $0.hasVideo && $0.hasAudio })
    func audioAndVideoStayInSync(testCase: TranscodeCase) throws {
        let stream = try TranscodeWorkspace.shared.stream(testCase)
        let sync = try ExternalTools.avSync(path: stream.playlistURL.path,
                                            maxOffsetMilliseconds: Self.maxSyncOffsetMilliseconds,
                                            minimumPairs: testCase.syncPairs)
        #expect(sync.ok, "\(sync.report)")
    }

    @Test(arguments: cases)
    func segmentsStartWithAnIDRAndDecodeTimesAreContinuous(testCase: TranscodeCase) throws {
        let stream = try TranscodeWorkspace.shared.stream(testCase)
        let playlist = try stream.playlist()
        let problems = try stream.segmentProblems()
        #expect(problems.isEmpty, "\(problems)")
        // Transcoding makes one timeline: one init section, no discontinuity, even over joined inputs.
        #expect(playlist.segments.allSatisfy { !$0.discontinuity && $0.mapURI == "init.mp4" })
        let hasVideo = try InitSection(stream.bytes("init.mp4")).videoTrackID != nil
        #expect(stream.files() == (hasVideo ? ["iframes.m3u8"] : []) + ["init.mp4", "master.m3u8", "playlist.m3u8"]
                + playlist.segments.map(\.uri))
    }

    @Test(arguments: cases)
    func pictureSizeIsUpright(testCase: TranscodeCase) throws {
        let stream = try TranscodeWorkspace.shared.stream(testCase)
        let tracks = try InitSection(stream.bytes("init.mp4"))
        guard let expected = testCase.outputSize else {
            #expect(tracks.videoTrackID == nil)
            return
        }
        let size = try ExternalTools.ffprobeVideoSize(path: stream.playlistURL.path)
        #expect(size.width == expected.width && size.height == expected.height, "\(size)")
    }

    @Test func rotatedPictureLooksLikeFFmpegsUprightDecode() throws {
        let testCase = try #require(Self.cases.first { $0.clips.first?.rotationDegrees != nil })
        let stream = try TranscodeWorkspace.shared.stream(testCase)
        let input = try TranscodeWorkspace.shared.input(testCase.clips[0]).path
        // ffmpeg applies the display matrix when decoding; hlscap's output must need no matrix to match it.
        let reference = try Self.thumbnail(path: input)
        let output = try Self.thumbnail(path: stream.playlistURL.path)
        let turned = Array(reference.reversed())
        #expect(Self.meanDifference(reference, output) < Self.sameThumbnailMeanDifference)
        // The measure tells orientations apart: the same picture turned half a turn is far off.
        #expect(Self.meanDifference(turned, output) > Self.sameThumbnailMeanDifference * 2)
    }

    /// Mean luma difference under which two 18x32 thumbnails show the same picture despite encoding.
    static let sameThumbnailMeanDifference = 8.0
    /// A frame between flashes, where the moving pattern shows.
    static let thumbnailFrameIndex = 15

    /// Frame `thumbnailFrameIndex` scaled to 18x32 gray pixels.
    static func thumbnail(path: String) throws -> [UInt8] {
        let file = TranscodeWorkspace.shared.directory.appendingPathComponent("thumbnail-\(UUID().uuidString).gray")
        defer { try? FileManager.default.removeItem(at: file) }
        try SyncClip.ffmpeg(["-nostdin", "-v", "error", "-i", path, "-map", "0:v:0",
                             "-vf", "select=eq(n\\,\(thumbnailFrameIndex)),scale=18:32,format=gray",
                             "-frames:v", "1", "-f", "rawvideo", file.path])
        let pixels = Array(try Data(contentsOf: file))
        guard pixels.count == 18 * 32 else {
            throw ExternalToolError.unexpectedOutput(command: "ffmpeg thumbnail \(path)", output: "\(pixels.count) bytes")
        }
        return pixels
    }

    static func meanDifference(_ first: [UInt8], _ second: [UInt8]) -> Double {
        Double(zip(first, second).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(first.count)
    }
}
