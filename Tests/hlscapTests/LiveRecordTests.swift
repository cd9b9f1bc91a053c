import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `hlscap live --record`: the full-quality recording beside the stream, one fragmented MP4 file that
/// plays at every moment.
@Suite(.serialized) struct LiveRecordTests {
    static func recordedFrames(_ path: String) throws -> Int {
        try ExternalTools.ffprobeFrameCount(path: path)
    }

    /// The boxes at the top of the file, in order.
    static func topLevelBoxes(_ path: String) throws -> [String] {
        try MP4Box.parse(Array(Data(contentsOf: URL(fileURLWithPath: path)))).map(\.type)
    }

    @Test func aRecordingBesideTheStreamHasItsOwnSizeAndCodecAndBothDecodeWhole() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let recording = directory.appendingPathComponent("rec.mp4").path
        let result = try ExternalTools.runHlscap(["live"] + LiveStream.testSource + [
            "--duration", "12", "--out", stream.path, "--record", recording, "--record-size", "1280x720", "--quiet"])
        #expect(result.succeeded, "\(result.stderr)")
        #expect(result.stdout.contains("recorded \(recording): "), "\(result.stdout)")
        let counts = try #require(LiveStream.frameCounts(result.stdout))
        #expect(try Self.recordedFrames(recording) == counts.frames, "every frame the stream has, the recording has")
        #expect(try ExternalTools.ffprobeVideoSize(path: recording) == (1280, 720))
        let codecs = try ExternalTools.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name",
                                                      "-of", "csv=p=0", recording])
        #expect(codecs.stdout.split(separator: "\n") == ["hevc", "aac"], "\(codecs.stdout)")
        #expect(try ExternalTools.ffmpegDecodeErrors(path: recording).isEmpty)
        let boxes = try Self.topLevelBoxes(recording)
        #expect(boxes.prefix(2) == ["ftyp", "moov"] && boxes.last == "mfra", "\(boxes)")
        #expect(boxes.filter { $0 == "moof" }.count == 6, "one fragment per segment: \(boxes)")
        let span = try ExternalTools.presentationSpanSeconds(path: recording, stream: "a:0")
        #expect(abs(span - 12) < 0.2, "the stream's audio is in the recording: \(span) s")
        try ExternalTools.validateStream(stream)

        let again = try ExternalTools.runHlscap(["live"] + LiveStream.testSource + [
            "--duration", "2", "--out", stream.path, "--record", recording, "--quiet", "--resume"])
        #expect(again.succeeded, "\(again.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("rec-2.mp4").path),
                "a resumed stream records into a new file")
        let refused = try ExternalTools.runHlscap(["live"] + LiveStream.testSource + [
            "--duration", "2", "--out", directory.appendingPathComponent("other").path, "--record", recording])
        #expect(refused.exitStatus == 73 && refused.stderr.contains(recording), "\(refused.stderr)")
    }

    /// kill -9 at a random moment: the file plays up to its last complete fragment.
    @Test func aKilledRecordingPlaysUpToItsLastFragment() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recording = directory.appendingPathComponent("rec.mp4").path
        let hlscap = try ExternalTools.startHlscap(["live"] + LiveStream.testSource + [
            "--out", directory.appendingPathComponent("stream").path, "--record", recording,
            "--record-codec", "h264", "--quiet"])
        try #require(LiveStream.waitForSegments(1, in: directory.appendingPathComponent("stream"), of: hlscap))
        let started = Date()
        let killAfter = Double.random(in: 5...10)
        Thread.sleep(forTimeInterval: killAfter)
        hlscap.send(SIGKILL)
        _ = hlscap.finish(timeoutSeconds: 10)
        let seconds = Date().timeIntervalSince(started) + 2
        let frames = try Self.recordedFrames(recording)
        // The last fragment (2 s) may be lost, and what the encoder still held.
        #expect(Double(frames) >= (seconds - 2 - 2) * 30, "\(frames) frames after \(seconds) s")
        #expect(Double(frames) <= (seconds + 1) * 30)
        #expect(try ExternalTools.ffmpegDecodeErrors(path: recording).isEmpty || frames > 0)
        #expect(try !Self.topLevelBoxes(recording).contains("mfra"), "no index without a clean stop")
    }

    /// A recording that runs out of room stops with a warning; the stream goes on and ends cleanly, and
    /// the exit status says the recording failed.
    @Test func aFullDiskStopsOnlyTheRecording() throws {
        let directory = try PackagedStream.temporaryDirectory()
        let small = directory.appendingPathComponent("small")
        try FileManager.default.createDirectory(at: small, withIntermediateDirectories: true)
        let mounted = try ExternalTools.run("mount", ["-t", "tmpfs", "-o", "size=96k", "tmpfs", small.path])
        try #require(mounted.succeeded, "a small tmpfs is needed (root): \(mounted.stderr)")
        defer {
            _ = try? ExternalTools.run("umount", [small.path])
            try? FileManager.default.removeItem(at: directory)
        }
        let stream = directory.appendingPathComponent("stream")
        let recording = small.appendingPathComponent("rec.mp4").path
        let result = try ExternalTools.runHlscap(["live"] + LiveStream.testSource + [
            "--duration", "8", "--out", stream.path, "--record", recording, "--record-bitrate", "6M",
            "--record-codec", "h264", "--quiet"])
        #expect(result.exitStatus == 74, "\(result.stderr)")
        #expect(result.stderr.contains("warning: the recording \(recording) stopped"), "\(result.stderr)")
        #expect(result.stderr.contains("No space left on device"), "\(result.stderr)")
        let playlist = try LiveStream.playlist(in: stream)
        #expect(playlist.endList && playlist.segments.count == 4, "the stream went on to its end")
        try ExternalTools.validateStream(stream)
        #expect(try Self.recordedFrames(recording) > 0, "the recording plays up to where the disk filled")
    }
}
