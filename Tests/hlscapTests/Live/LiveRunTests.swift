import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// What the Live*Tests suites share: the test source's arguments and reading a stream while it grows.
enum LiveStream {
    static let testSource = ["--video", "test", "--audio", "test", "--size", "640x360"]
    /// Time a stream may take to list its first segments (the test source starts at once).
    static let startupSeconds = 30.0
    static let pollSeconds = 0.05
    /// Time hlscap gets to stop after a signal: drain, last segment, ENDLIST.
    static let stopSeconds = 60.0

    static func playlist(in directory: URL) throws -> MediaPlaylist {
        try MediaPlaylist.parse(String(contentsOf: directory.appendingPathComponent("playlist.m3u8"), encoding: .utf8))
    }

    /// Waits until the playlist in `directory` lists `count` segments; false when `hlscap` exits
    /// or `startupSeconds` pass first.
    static func waitForSegments(_ count: Int, in directory: URL, of hlscap: BackgroundProcess) -> Bool {
        let deadline = Date(timeIntervalSinceNow: startupSeconds)
        while Date() < deadline && hlscap.isRunning {
            if let playlist = try? playlist(in: directory), playlist.segments.count >= count { return true }
            Thread.sleep(forTimeInterval: pollSeconds)
        }
        return false
    }

    /// The publish latencies `--verbose` logged: "listed N ms after its last frame".
    static func publishLatenciesMilliseconds(_ stderr: String) -> [Int] {
        stderr.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "listed ") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
    }

    /// "N frames, M dropped" from hlscap's summary line.
    static func frameCounts(_ stdout: String) -> (frames: Int, dropped: Int)? {
        let words = stdout.split(whereSeparator: { $0 == " " || $0 == "," })
        guard let framesIndex = words.firstIndex(of: "frames"), framesIndex > 0,
              let droppedIndex = words.firstIndex(of: "dropped"), droppedIndex > 0,
              let frames = Int(words[framesIndex - 1]), let dropped = Int(words[droppedIndex - 1]) else { return nil }
        return (frames, dropped)
    }
}

/// The main check: a 36 s live run on the test source (long enough for Chromium's 20 s of it and a window
/// that rolls three times over), read every 50 ms while it grows,
/// played by Chromium while it grows, stopped with SIGINT, then decoded and measured for A/V sync.
@Suite(.serialized) struct LiveRunTests {
    static let runSeconds = 36.0
    static let framesPerSecond = 30
    static let window = 6
    /// Chromium's native HLS refuses a live playlist of fewer segments (DEMUXER_ERROR_COULD_NOT_PARSE).
    static let segmentsChromiumNeeds = 3
    static let chromiumLiveSeconds = 20.0
    /// The test source flashes and beeps once a second; a few at the edges may lack a partner.
    static let minimumSyncPairs = Int(runSeconds) - 5

    @Test func aLiveRunStaysSafeForViewersPlaysWhileGrowingAndKeepsSync() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let copy = directory.appendingPathComponent("copy")
        let started = Date()
        let hlscap = try ExternalTools.startHlscap(["live"] + LiveStream.testSource + [
            "--window", String(Self.window), "--out", stream.path, "--verbose", "--quiet"])
        let poller = try ExternalTools.startLivePoller(directory: stream, copyDirectory: copy,
                                                       timeoutSeconds: Self.runSeconds * 5)

        try #require(LiveStream.waitForSegments(Self.segmentsChromiumNeeds, in: stream, of: hlscap),
                     "no playlist with \(Self.segmentsChromiumNeeds) segments: \(hlscap.stderr)")
        let playback = try ExternalTools.chromiumPlaysLive(directory: stream, liveSeconds: Self.chromiumLiveSeconds,
                                                           timeoutSeconds: Self.chromiumLiveSeconds * 2)
        #expect(playback.ok, "Chromium did not follow the growing playlist: \(playback.report)")

        Thread.sleep(until: started.addingTimeInterval(Self.runSeconds))
        hlscap.send(SIGINT)
        let result = hlscap.finish(timeoutSeconds: LiveStream.stopSeconds)
        #expect(result.exitStatus == 0 && !result.timedOut, "\(result.stderr)")
        let pollerResult = poller.finish(timeoutSeconds: LiveStream.stopSeconds)
        let report = try ExternalTools.livePollerReport(copyDirectory: copy)
        #expect(report.violations.isEmpty, "\(report.violations)")
        #expect(pollerResult.exitStatus == 0, "\(pollerResult.stdout)")

        let playlist = try LiveStream.playlist(in: stream)
        try ExternalTools.validateStream(stream)
        #expect(playlist.endList)
        #expect(playlist.segments.count == Self.window)
        #expect(report.firstSequence == 1)
        #expect(report.lastSequence == playlist.mediaSequence + playlist.segments.count - 1)
        #expect(report.removals.count == report.segments - Self.window, "every segment that left was seen leaving")

        let concatenated = try #require(report.concatenated)
        let errors = try ExternalTools.ffmpegDecodeErrors(path: concatenated)
        #expect(errors.isEmpty, "\(errors)")
        let counts = try #require(LiveStream.frameCounts(result.stdout), "\(result.stdout)")
        let decoded = try ExternalTools.ffprobeFrameCount(path: concatenated)
        #expect(decoded == counts.frames, "the copy holds every frame hlscap encoded")
        let expectedFrames = Int(Self.runSeconds) * Self.framesPerSecond
        #expect(abs(counts.frames + counts.dropped - expectedFrames) <= expectedFrames / 20,
                "\(counts.frames) frames and \(counts.dropped) dropped for \(Self.runSeconds) s at \(Self.framesPerSecond) fps")

        let sync = try ExternalTools.avSync(path: concatenated, maxOffsetMilliseconds: 10,
                                            minimumPairs: Self.minimumSyncPairs)
        #expect(sync.ok, "\(sync.report)")

        let latencies = LiveStream.publishLatenciesMilliseconds(result.stderr).sorted()
        #expect(latencies.count == report.segments, "a --verbose line per segment")
        print("""
            live run: \(report.segments) segments, \(counts.frames) frames, \(counts.dropped) dropped; \
            publish latency ms p50 \(latencies.isEmpty ? 0 : latencies[latencies.count / 2]) \
            max \(latencies.last ?? 0); poller \(report.polls) polls, \(report.versions) versions; \
            sync \(sync.report); chromium \(playback.report)
            """)
    }
}
