import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `hlscap live` on a directory that already holds a stream: refused unless --resume or --overwrite;
/// --resume continues the numbering after a `kill -9`. How a resumed stream numbers on, and one resumed at
/// another size, are the engine's: LiveEngineResumeTests, in process.
@Suite(.serialized) struct LiveResumeTests {
    /// Three segments of 2, 2 and 1 s, made as fast as they encode: nothing here waits on the camera.
    static let shortRun = ["--no-realtime", "--duration", "5", "--quiet"]

    func live(_ stream: URL, _ arguments: [String]) throws -> ProcessResult {
        try ExternalTools.runHlscap(["live", "--video", "test", "--audio", "test", "--size", "640x360",
                                     "--out", stream.path] + arguments, timeoutSeconds: LiveStream.stopSeconds)
    }

    func numbers(_ playlist: MediaPlaylist) -> [Int] {
        playlist.segments.compactMap { Int($0.uri.dropFirst("seg/".count).prefix { $0.isNumber }) }
    }

    @Test func aDirectoryHoldingAStreamIsRefusedUnlessResumeOrOverwrite() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        #expect(try live(stream, Self.shortRun).exitStatus == 0)
        let before = PackagedStream.files(below: stream)
        let playlistBefore = try Data(contentsOf: stream.appendingPathComponent("playlist.m3u8"))

        let refused = try live(stream, Self.shortRun)
        #expect(refused.exitStatus == 73)
        #expect(refused.stderr.contains("already holds a stream") && refused.stderr.contains("--resume")
                && refused.stderr.contains("--overwrite"), "\(refused.stderr)")
        // Nothing of the command line's touches the folder before the engine refuses it.
        #expect(PackagedStream.files(below: stream) == before)
        #expect(try Data(contentsOf: stream.appendingPathComponent("playlist.m3u8")) == playlistBefore)

        let overwritten = try live(stream, Self.shortRun + ["--overwrite"])
        #expect(overwritten.exitStatus == 0, "\(overwritten.stderr)")
    }

    @Test func resumeAfterKillNineNeverReusesANumberAndThePlaylistPlays() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let hlscap = try ExternalTools.startHlscap(["live"] + LiveStream.testSource + ["--out", stream.path, "--quiet"])
        try #require(LiveStream.waitForSegments(3, in: stream, of: hlscap), "\(hlscap.stderr)")
        hlscap.send(SIGKILL)
        _ = hlscap.finish(timeoutSeconds: LiveStream.stopSeconds)

        let crashed = try LiveStream.playlist(in: stream)
        #expect(!crashed.endList)
        let stored = PackagedStream.files(below: stream.appendingPathComponent("seg"))
            .compactMap { Int($0.prefix { $0.isNumber }) }
        let highestStored = try #require(stored.max())

        let resumed = try live(stream, Self.shortRun + ["--resume"])
        #expect(resumed.exitStatus == 0, "\(resumed.stderr)")
        let playlist = try LiveStream.playlist(in: stream)
        try ExternalTools.validateStream(stream)
        let listed = numbers(playlist)
        let firstNew = crashed.segments.count
        #expect(Array(listed.prefix(firstNew)) == numbers(crashed), "the crashed run's segments stay listed")
        #expect(listed.dropFirst(firstNew).allSatisfy { $0 > highestStored }, "\(listed), \(highestStored) stored")
        #expect(listed == listed.sorted() && Set(listed).count == listed.count)
        #expect(playlist.segments[firstNew].discontinuity)
        #expect(playlist.endList)
        let errors = try ExternalTools.ffmpegDecodeErrors(path: stream.appendingPathComponent("playlist.m3u8").path)
        #expect(errors.isEmpty, "\(errors)")
        let frames = try ExternalTools.ffprobeFrameCount(path: stream.appendingPathComponent("playlist.m3u8").path)
        #expect(frames > 0)
    }
}
