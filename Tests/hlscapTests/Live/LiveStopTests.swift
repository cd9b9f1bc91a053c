import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// How `hlscap live` ends: --duration, SIGTERM and SIGINT stop cleanly; a second SIGINT leaves at once;
/// a device that cannot be opened leaves no stream behind.
@Suite(.serialized) struct LiveStopTests {
    /// Stops after two whole segments and half of a third.
    static let durationSeconds = 5.0
    static let segmentSeconds = 2.0
    /// Long enough that a second interrupt, not the drain timeout, must end the run.
    static let drainTimeoutSeconds = 600
    /// Nothing listens there: uploads fail until the drain timeout.
    static let unreachableOrigin = "http://127.0.0.1:1/live/"

    /// The stream in `directory` is finished and safe to serve: ENDLIST, every listed file complete.
    func expectConsistentFinishedStream(_ directory: URL) throws -> LivePollerReport {
        let copy = directory.deletingLastPathComponent().appendingPathComponent("check-\(UUID().uuidString)")
        let report = try ExternalTools.checkFinishedLiveStream(directory: directory, copyDirectory: copy)
        #expect(report.endList)
        #expect(report.violations.isEmpty, "\(report.violations)")
        #expect(report.segments > 0)
        return report
    }

    @Test func durationStopsCleanlyWithAShortButNotEmptyLastSegment() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let result = try ExternalTools.runHlscap(["live"] + LiveStream.testSource + [
            "--duration", String(Self.durationSeconds), "--out", stream.path, "--quiet"])
        #expect(result.exitStatus == 0, "\(result.stderr)")
        _ = try expectConsistentFinishedStream(stream)
        let playlist = try LiveStream.playlist(in: stream)
        let last = try #require(playlist.segments.last)
        #expect(last.durationSeconds > 0 && last.durationSeconds < Self.segmentSeconds, "\(playlist.render())")
        #expect(playlist.segments.dropLast().allSatisfy { abs($0.durationSeconds - Self.segmentSeconds) < 0.05 })
        let total = playlist.segments.reduce(0) { $0 + $1.durationSeconds }
        #expect(abs(total - Self.durationSeconds) < 0.1, "\(total) s listed for --duration \(Self.durationSeconds)")
        let lastSegment = try MP4Box.parse(Array(Data(contentsOf: stream.appendingPathComponent(last.uri))))
        let samples = lastSegment.first { $0.type == "moof" }?.all("traf/trun") ?? []
        #expect(samples.count == 2, "video and audio in the last segment")
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalStopsCleanly(signal: Int32) throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let hlscap = try ExternalTools.startHlscap(["live"] + LiveStream.testSource + ["--out", stream.path, "--quiet"])
        try #require(LiveStream.waitForSegments(2, in: stream, of: hlscap), "\(hlscap.stderr)")
        hlscap.send(signal)
        let result = hlscap.finish(timeoutSeconds: LiveStream.stopSeconds)
        #expect(result.exitStatus == 0 && !result.timedOut, "\(result.stderr)")
        #expect(result.stdout.contains("/playlist.m3u8: "), "the summary line: \(result.stdout)")
        let report = try expectConsistentFinishedStream(stream)
        #expect(report.segments >= 3, "the partial segment at the stop is written too")
    }

    @Test func aSecondInterruptExitsAtOnceWithAConsistentPlaylist() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        // The first interrupt ends the local playlist, then waits for uploads that cannot succeed.
        let hlscap = try ExternalTools.startHlscap(["live"] + LiveStream.testSource + [
            "--out", stream.path, "--quiet", "--publish", Self.unreachableOrigin,
            "--publish-drain-timeout", String(Self.drainTimeoutSeconds)])
        try #require(LiveStream.waitForSegments(2, in: stream, of: hlscap), "\(hlscap.stderr)")
        hlscap.send(SIGINT)
        let deadline = Date(timeIntervalSinceNow: LiveStream.stopSeconds)
        while (try? LiveStream.playlist(in: stream))?.endList != true && Date() < deadline {
            Thread.sleep(forTimeInterval: LiveStream.pollSeconds)
        }
        #expect(hlscap.isRunning, "still draining uploads: \(hlscap.stdout)\(hlscap.stderr)")
        hlscap.send(SIGINT)
        let result = hlscap.finish(timeoutSeconds: LiveStream.stopSeconds)
        #expect(result.exitStatus == 130 && !result.timedOut, "\(result.stderr)")
        _ = try expectConsistentFinishedStream(stream)
    }

    @Test(arguments: [
        (["--video", "/dev/video9", "--audio", "test"], "/dev/video9"),
        (["--video", "test", "--audio", "hlscap-no-such-pcm"], "hlscap-no-such-pcm"),
    ])
    func aMissingDeviceIsNamedAndLeavesNoStream(sources: [String], device: String) throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let result = try ExternalTools.runHlscap(["live"] + sources + ["--out", stream.path, "--quiet"],
                                                 timeoutSeconds: LiveStream.stopSeconds)
        #expect(result.exitStatus == 66, "\(result.stderr)")
        // libasound prints its own "ALSA lib …" line for an unknown PCM; hlscap says one thing.
        let lines = result.stderr.split(separator: "\n").filter { $0.hasPrefix("hlscap: ") }
        #expect(lines.count == 1 && lines[0].hasPrefix("hlscap: \(device): "), "\(result.stderr)")
        #expect(result.stdout.isEmpty, "no summary of a stream that never started: \(result.stdout)")
        #expect(PackagedStream.files(below: stream).isEmpty, "\(PackagedStream.files(below: stream))")
    }

    /// The first interrupt ends the playlist at once and says on one line what it still waits for (the
    /// retention time of what left the window); a second one exits then, leaving those files listed for
    /// `--resume`, which deletes them once their time has passed.
    @Test func aStopThatWaitsSaysSoAndASecondInterruptLeavesTheFilesForResume() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let arguments = ["live"] + LiveStream.testSource + ["--window", "3", "--segment-duration", "1", "--quiet",
                                                            "--out", stream.path]
        let hlscap = try ExternalTools.startHlscap(arguments)
        // A window of 3: segments 1 to 3 have left it once segment 6 is listed.
        let started = Date()
        while (try? LiveStream.playlist(in: stream))?.mediaSequence ?? 0 < 4, hlscap.isRunning,
              Date().timeIntervalSince(started) < LiveStream.startupSeconds {
            Thread.sleep(forTimeInterval: LiveStream.pollSeconds)
        }
        try #require((try? LiveStream.playlist(in: stream))?.mediaSequence ?? 0 >= 4, "\(hlscap.stderr)")
        hlscap.send(SIGINT)
        let stopped = Date()
        while !hlscap.stderr.contains("deleted in"), Date().timeIntervalSince(stopped) < 5 {
            Thread.sleep(forTimeInterval: LiveStream.pollSeconds)
        }
        #expect(Date().timeIntervalSince(stopped) < 2, "the wait is announced at once: \(hlscap.stderr)")
        #expect(try LiveStream.playlist(in: stream).endList)
        let line = hlscap.stderr.split(separator: "\n").first { $0.contains("deleted in") } ?? ""
        #expect(line.hasPrefix("hlscap: the stream has ended; ") && line.contains("Ctrl-C again"), "\(line)")
        hlscap.send(SIGINT)
        let result = hlscap.finish(timeoutSeconds: LiveStream.stopSeconds)
        #expect(result.exitStatus == 130 && !result.timedOut, "\(result.stderr)")
        #expect(Date().timeIntervalSince(stopped) < 4, "the second interrupt did not wait")
        let left = RetiredFiles.parseManifest(try String(contentsOf: stream.appendingPathComponent(".retired"),
                                                         encoding: .utf8))
        #expect(!left.isEmpty && left.allSatisfy { FileManager.default.fileExists(
            atPath: stream.appendingPathComponent($0.path).path) }, "\(left)")
        _ = try expectConsistentFinishedStream(stream)

        // Long enough after their time: the resumed run deletes them and keeps only what it lists.
        Thread.sleep(forTimeInterval: max(0, (left.map(\.removableAt).max() ?? Date()).timeIntervalSinceNow))
        let resumed = try ExternalTools.runHlscap(arguments + ["--resume", "--no-realtime", "--duration", "2"],
                                                  timeoutSeconds: LiveStream.stopSeconds + 30)
        #expect(resumed.exitStatus == 0, "\(resumed.stderr)")
        for file in left { #expect(!FileManager.default.fileExists(atPath: stream.appendingPathComponent(file.path).path)) }
        #expect(!FileManager.default.fileExists(atPath: stream.appendingPathComponent(".retired").path))
    }

    /// Without --out the stream is spooled in a temporary directory: a second interrupt removes it too.
    @Test func aSecondInterruptRemovesTheUploadSpool() throws {
        let temporary = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: temporary) }
        let hlscap = try ExternalTools.startHlscap(
            ["live"] + LiveStream.testSource + ["--quiet", "--publish", Self.unreachableOrigin,
                                                "--publish-drain-timeout", String(Self.drainTimeoutSeconds)],
            environment: ["TMPDIR": temporary.path])
        let deadline = Date(timeIntervalSinceNow: LiveStream.stopSeconds)
        var spool: [String] = []
        while spool.isEmpty, Date() < deadline {
            Thread.sleep(forTimeInterval: LiveStream.pollSeconds)
            spool = PackagedStream.files(below: temporary).filter { $0.hasSuffix(".m4s") }
        }
        try #require(!spool.isEmpty, "segments wait in the spool: \(hlscap.stderr)")
        hlscap.send(SIGINT)
        Thread.sleep(forTimeInterval: 1)
        hlscap.send(SIGINT)
        let result = hlscap.finish(timeoutSeconds: LiveStream.stopSeconds)
        #expect(result.exitStatus == 130 && !result.timedOut, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path).isEmpty,
                "\(PackagedStream.files(below: temporary))")
    }
}
