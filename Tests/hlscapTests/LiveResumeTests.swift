import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `hlscap live` on a directory that already holds a stream: refused unless --resume or --overwrite;
/// --resume continues the numbering after a stop or a `kill -9`.
@Suite(.serialized) struct LiveResumeTests {
    /// Three segments of 2, 2 and 1 s.
    static let shortRun = ["--duration", "5", "--quiet"]
    static let smallSize = "320x180"

    func live(_ stream: URL, _ arguments: [String], size: String = "640x360") throws -> ProcessResult {
        try ExternalTools.runHlscap(["live", "--video", "test", "--audio", "test", "--size", size,
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
        #expect(PackagedStream.files(below: stream) == before)
        #expect(try Data(contentsOf: stream.appendingPathComponent("playlist.m3u8")) == playlistBefore)

        let overwritten = try live(stream, Self.shortRun + ["--overwrite"])
        #expect(overwritten.exitStatus == 0, "\(overwritten.stderr)")
        let playlist = try LiveStream.playlist(in: stream)
        try ExternalTools.validateStream(stream)
        #expect(numbers(playlist) == [1, 2, 3], "a new stream: \(playlist.render())")
        #expect(playlist.segments.allSatisfy { !$0.discontinuity })
    }

    @Test func resumeContinuesTheNumbersAfterADiscontinuityThatIsCountedWhenItLeaves() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        #expect(try live(stream, Self.shortRun + ["--window", "3"]).exitStatus == 0)
        // Four more segments (2, 2, 2 and 1 s): the first, after the discontinuity, leaves the window.
        let resumed = try live(stream, ["--duration", "7", "--quiet", "--window", "3", "--resume"])
        #expect(resumed.exitStatus == 0, "\(resumed.stderr)")

        let playlist = try LiveStream.playlist(in: stream)
        try ExternalTools.validateStream(stream)
        #expect(numbers(playlist) == [5, 6, 7], "\(playlist.render())")
        #expect(playlist.mediaSequence == 5)
        #expect(playlist.discontinuitySequence == 1, "the discontinuity before segment 4 left the window")
        #expect(playlist.segments.allSatisfy { !$0.discontinuity && $0.mapURI == "init.mp4" })
        #expect(playlist.endList)
        #expect(!FileManager.default.fileExists(atPath: stream.appendingPathComponent("init-2.mp4").path),
                "the same parameters keep the init section")
        let errors = try ExternalTools.ffmpegDecodeErrors(path: stream.appendingPathComponent("playlist.m3u8").path)
        #expect(errors.isEmpty, "\(errors)")
    }

    @Test func resumeWithAnotherSizeWritesASecondInitSection() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        #expect(try live(stream, Self.shortRun).exitStatus == 0)
        let resumed = try live(stream, Self.shortRun + ["--resume"], size: Self.smallSize)
        #expect(resumed.exitStatus == 0, "\(resumed.stderr)")

        let playlist = try LiveStream.playlist(in: stream)
        // The master playlist is written again, its CODECS listing the formats from before and after.
        try ExternalTools.validateStream(stream)
        let master = try String(contentsOf: stream.appendingPathComponent("master.m3u8"), encoding: .utf8)
        #expect(master.components(separatedBy: "avc1.").count - 1 >= 4, "two formats in the variant and I-frame stream: \(master)")
        #expect(numbers(playlist) == [1, 2, 3, 4, 5, 6], "\(playlist.render())")
        #expect(playlist.segments.map(\.mapURI) == Array(repeating: "init.mp4", count: 3) + Array(repeating: "init-2.mp4", count: 3))
        #expect(playlist.segments.map(\.discontinuity) == [false, false, false, true, false, false])
        // Each part decodes at its own size from its own init section.
        for (initName, uri, width) in [("init.mp4", "seg/000003.m4s", 640), ("init-2.mp4", "seg/000004.m4s", 320)] {
            let joined = directory.appendingPathComponent("\(initName)-\(width).mp4")
            try Data(try Data(contentsOf: stream.appendingPathComponent(initName))
                     + Data(contentsOf: stream.appendingPathComponent(uri))).write(to: joined)
            let probe = try ExternalTools.run("ffprobe", ["-v", "error", "-select_streams", "v:0",
                                                          "-show_entries", "stream=width", "-of", "csv=p=0", joined.path])
            #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == String(width), "\(uri): \(probe.stderr)")
        }
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
