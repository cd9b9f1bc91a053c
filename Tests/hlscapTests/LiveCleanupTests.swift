import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// What a live stream leaves on disk: after a clean stop and after `--resume`, only the files the
/// final playlist lists (segments that left the window wait out their retention time first). The runs
/// are made as fast as they encode: only the retention wait is in real time.
@Suite(.serialized) struct LiveCleanupTests {
    func live(_ stream: URL, _ arguments: [String]) throws -> ProcessResult {
        try ExternalTools.runHlscap(["live", "--video", "test", "--audio", "test", "--size", "320x180", "--quiet",
                                     "--no-realtime", "--window", "3", "--out", stream.path] + arguments,
                                    timeoutSeconds: LiveStream.stopSeconds + 30)
    }

    /// The files the playlist needs, the playlists (media, I-frame, master) included.
    func listedFiles(in stream: URL) throws -> Set<String> {
        let playlist = try LiveStream.playlist(in: stream)
        return Set(playlist.segments.flatMap { [$0.uri] + ($0.mapURI.map { [$0] } ?? []) }
                   + ["playlist.m3u8", "iframes.m3u8", "master.m3u8"])
    }

    @Test func aStoppedOrResumedStreamKeepsOnlyWhatItsPlaylistLists() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")

        // 12 s in 2 s segments through a window of 3: segments 1 to 3 leave it.
        let started = Date()
        #expect(try live(stream, ["--duration", "12"]).exitStatus == 0)
        #expect(Set(PackagedStream.files(below: stream)) == (try listedFiles(in: stream)))
        try ExternalTools.validateStream(stream)
        #expect(Date().timeIntervalSince(started) < 12 + 8 + 10, "the wait is the retention time, no longer")

        // A crash leaves what left the window on disk; --resume deletes it, and a new init section
        // (another size) makes the old one go once no listed segment needs it.
        try Data([0]).write(to: stream.appendingPathComponent("seg/000099.m4s"))
        let resumed = try ExternalTools.runHlscap([
            "live", "--video", "test", "--audio", "test", "--size", "640x360", "--quiet", "--window", "3",
            "--no-realtime", "--duration", "10", "--resume", "--out", stream.path], timeoutSeconds: LiveStream.stopSeconds + 30)
        #expect(resumed.exitStatus == 0, "\(resumed.stderr)")
        let files = Set(PackagedStream.files(below: stream))
        #expect(files == (try listedFiles(in: stream)))
        try ExternalTools.validateStream(stream)
        #expect(!files.contains("init.mp4"), "the first init section left with the last segment using it")
        #expect(!files.contains("seg/000099.m4s"))
    }
}
