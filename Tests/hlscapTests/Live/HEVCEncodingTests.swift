import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `--video-codec hevc`: libx265 in `hvc1` sample entries, live and from a recording, alone or as rungs.
@Suite(.serialized) struct HEVCEncodingTests {
    static func sampleEntries(_ directory: URL) throws -> [String] {
        let moov = try #require(try MP4Box.parse(Array(Data(contentsOf: directory.appendingPathComponent("init.mp4"))))
            .first("moov"))
        return moov.all("trak").compactMap { $0.first("mdia/minf/stbl/stsd")?.children.first?.type }
    }

    @Test func liveHEVCDecodesInFFmpegAndGStreamer() throws {
        let stream = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: stream) }
        let result = try ExternalTools.runHlscap(["live"] + LiveStream.testSource + [
            "--video-codec", "hevc", "--duration", "6", "--out", stream.path, "--quiet"])
        #expect(result.succeeded, "\(result.stderr)")
        #expect(try Self.sampleEntries(stream) == ["hvc1", "mp4a"])
        let master = try String(contentsOf: stream.appendingPathComponent("master.m3u8"), encoding: .utf8)
        #expect(master.contains("CODECS=\"hvc1.1.6.L"), "\(master)")
        let packaged = PackagedStream(directory: stream, result: result)
        #expect(try packaged.segmentProblems().isEmpty)
        let playlist = stream.appendingPathComponent("playlist.m3u8").path
        #expect(try ExternalTools.ffmpegDecodeErrors(path: playlist).isEmpty)
        let counts = try #require(LiveStream.frameCounts(result.stdout))
        #expect(try ExternalTools.ffprobeFrameCount(path: playlist) == counts.frames)
        let gstreamer = try ExternalTools.gstreamerDecode(directory: stream)
        #expect(gstreamer.ok && gstreamer.videoFrames == counts.frames, "\(gstreamer.report)")
        try ExternalTools.validateStream(stream)
    }

    /// Seconds of `recording`: a rung per codec needs only a few segments of each to show what it is.
    static let recordingSeconds = 6

    /// A 720p30 recording made once: the top rung's own size, so no scaling is paid for before libx265.
    static let recording: Result<URL, any Error> = Result {
        try FileLadderTests.makeRecording(width: 1280, height: 720, seconds: recordingSeconds)
    }

    @Test func aLadderMayMixCodecsPerRung() throws {
        let input = try Self.recording.get()
        let stream = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: stream) }
        let result = try ExternalTools.runHlscap(["file", input.path, "--ladder", "720p:hevc@2000k,360p", "--out",
                                                  stream.path])
        #expect(result.succeeded, "\(result.stderr)")
        #expect(try Self.sampleEntries(stream.appendingPathComponent("720p")) == ["hvc1"])
        #expect(try Self.sampleEntries(stream.appendingPathComponent("360p")) == ["avc1"])
        let ladder = LadderStream(directory: stream, rungs: ["720p", "360p"])
        let problems = try ladder.problems(checkingEveryIFrame: false)
        #expect(problems.isEmpty, "\(problems)")
        let average = try #require(ladder.variantAttributes("720p/playlist.m3u8")["AVERAGE-BANDWIDTH"].flatMap(Int.init))
        #expect(abs(average - 2_000_000 - 128_000) < 300_000, "the rung's rate was asked: \(average)")
        for name in ["720p", "360p"] {
            let frames = try ExternalTools.ffprobeFrameCount(
                path: stream.appendingPathComponent(name).appendingPathComponent("playlist.m3u8").path)
            #expect(frames == Self.recordingSeconds * 30, "\(name)")
        }
        try ExternalTools.validateStream(stream)
        let refused = try ExternalTools.runHlscap(["file", input.path, "--video-codec", "vp9", "--out", "/tmp/unused"])
        #expect(refused.exitStatus == 64 && refused.stderr.contains("--video-codec"), "\(refused.stderr)")
    }
}
