import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// The storage-fault campaign: the output disk fills, turns read-only or loses the stream's
/// directory while `hlscap live` runs. Each time hlscap exits 74 within seconds with one line naming
/// the path, and what is left lists only complete files that decode; with `--publish`, what reached
/// the origin stays there and the origin's playlist lists only what it holds.
@Suite(.serialized) struct StorageFaultTests {
    static let segmentSeconds = 2.0
    static let arguments = LiveStream.testSource + ["--quiet"]
    /// Nothing leaves the stream, so only the fault ends the growth of the disk's use.
    static let keepEverything = ["--window", "0"]
    /// Room for the init section, the playlists and two segments of the test source at 640x360 (about
    /// 105 kB each), not three.
    static let smallDiskKilobytes = 280
    /// Time hlscap gets from the fault to its exit, beyond the segment it is writing when it strikes.
    static let exitSeconds = 3.0
    /// A run that has not failed by then never will.
    static let runTimeoutSeconds = 30.0
    static let removalAttempts = 100

    @Test func aFullDiskStopsTheStreamWithItsCompleteSegments() throws {
        let disk = try SmallDisk(kilobytes: Self.smallDiskKilobytes)
        defer { disk.remove() }
        let stream = disk.mountPoint.appendingPathComponent("stream")
        let hlscap = try ExternalTools.startHlscap(["live"] + Self.arguments + Self.keepEverything
            + ["--out", stream.path])
        let run = Self.watch(hlscap, stream: stream)
        Self.expectStopped(run, since: run.lastSegmentListedAt, naming: [stream.path, "No space left on device", "free space"],
                           case: "full disk", since: "the last segment listed")
        #expect(run.segments >= 2, "the disk filled mid-stream, not at the start")
        let playlist = try LiveStream.playlist(in: stream)
        #expect(playlist.endList, "the failed segment's room lets the stream end as a stopped one does")
        let streamProblems = try CrashConsistencyTests.consistencyProblems(stream)
        #expect(streamProblems.isEmpty, "\(streamProblems)")
        #expect(Self.temporaryFiles(below: stream) == [])
    }

    /// With a window of 3, the first segment has left it and waits out its retention time when the
    /// disk turns read-only: the failed stream does not wait for it, nor try to delete it.
    @Test func aDiskTurnedReadOnlyStopsTheStreamWithItsCompleteSegments() throws {
        let disk = try SmallDisk(kilobytes: SmallDisk.roomyKilobytes)
        defer { disk.remove() }
        let stream = disk.mountPoint.appendingPathComponent("stream")
        let hlscap = try ExternalTools.startHlscap(["live"] + Self.arguments + ["--window", "3", "--out", stream.path])
        try #require(Self.waitForListed(4, in: stream, of: hlscap), "\(hlscap.stderr)")
        try disk.remountReadOnly()
        let faultAt = Date()
        let run = Self.watch(hlscap, stream: stream)
        Self.expectStopped(run, since: faultAt, naming: [stream.path, "Read-only file system"], case: "read-only",
                           since: "the remount")
        let streamProblems = try CrashConsistencyTests.consistencyProblems(stream)
        #expect(streamProblems.isEmpty, "\(streamProblems)")
    }

    @Test func aDeletedDirectoryStopsTheStreamAndIsNotMadeAgain() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let hlscap = try ExternalTools.startHlscap(["live"] + Self.arguments + Self.keepEverything
            + ["--out", stream.path])
        try #require(Self.waitForListed(2, in: stream, of: hlscap), "\(hlscap.stderr)")
        // `rm -rf`: a file hlscap adds meanwhile makes the last rmdir fail, so remove until it is gone.
        for _ in 0..<Self.removalAttempts where FileManager.default.fileExists(atPath: stream.path) {
            try? FileManager.default.removeItem(at: stream)
        }
        try #require(!FileManager.default.fileExists(atPath: stream.path), "\(stream.path) cannot be removed")
        let faultAt = Date()
        let run = Self.watch(hlscap, stream: stream)
        Self.expectStopped(run, since: faultAt, naming: [stream.path, "removed"], case: "deleted", since: "the removal")
        #expect(!FileManager.default.fileExists(atPath: stream.path),
                "no half stream made again: \(PackagedStream.files(below: stream))")
    }

    @Test func aFullLocalDiskKeepsWhatReachedTheOrigin() throws {
        let origin = try OriginFixture()
        defer { origin.stop() }
        let originStream = origin.directory.appendingPathComponent("root/live")
        let disk = try SmallDisk(kilobytes: Self.smallDiskKilobytes)
        defer { disk.remove() }
        let stream = disk.mountPoint.appendingPathComponent("stream")
        let hlscap = try ExternalTools.startHlscap(["live"] + Self.arguments + Self.keepEverything + [
            "--out", stream.path, "--publish", origin.url + "live/"])
        let run = Self.watch(hlscap, stream: stream)
        Self.expectStopped(run, since: run.lastSegmentListedAt, naming: [stream.path, "No space left on device"],
                           case: "full disk, publishing", since: "the last segment listed")
        #expect(run.segments >= 2, "the disk filled mid-stream, not at the start")

        let local = try LiveStream.playlist(in: stream)
        let published = try origin.storedPlaylist("live/playlist.m3u8")
        #expect(published.segments == local.segments, "the origin ends with every segment stored locally")
        #expect(published.endList)
        for path in ["init.mp4"] + local.segments.map(\.uri) {
            let localBytes = try Data(contentsOf: stream.appendingPathComponent(path))
            #expect(origin.stored("live/" + path) == localBytes, "\(path) on the origin")
        }
        let originStreamProblems = try CrashConsistencyTests.consistencyProblems(originStream)
        #expect(originStreamProblems.isEmpty, "\(originStreamProblems)")
        let streamProblems = try CrashConsistencyTests.consistencyProblems(stream)
        #expect(streamProblems.isEmpty, "\(streamProblems)")
    }

    // MARK: Helpers

    struct Run {
        var result: ProcessResult
        var exitedAt: Date
        var lastSegmentListedAt: Date
        var segments: Int
    }

    /// Segments the playlist in `directory` has listed, those that left its window included.
    static func listed(in directory: URL) -> Int? {
        (try? LiveStream.playlist(in: directory)).map { $0.mediaSequence - 1 + $0.segments.count }
    }

    /// Waits until the playlist in `directory` has listed `count` segments; false when `hlscap` exits
    /// or the startup time passes first.
    static func waitForListed(_ count: Int, in directory: URL, of hlscap: BackgroundProcess) -> Bool {
        let deadline = Date(timeIntervalSinceNow: LiveStream.startupSeconds)
        while Date() < deadline && hlscap.isRunning {
            if let listed = listed(in: directory), listed >= count { return true }
            Thread.sleep(forTimeInterval: LiveStream.pollSeconds)
        }
        return false
    }

    /// Waits for `hlscap` to exit (killing it after `runTimeoutSeconds`), noting when its playlist last
    /// grew.
    static func watch(_ hlscap: BackgroundProcess, stream: URL) -> Run {
        let deadline = Date(timeIntervalSinceNow: runTimeoutSeconds)
        var segments = listed(in: stream) ?? 0
        var lastSegmentListedAt = Date()
        while hlscap.isRunning && Date() < deadline {
            let count = listed(in: stream) ?? segments
            if count > segments {
                segments = count
                lastSegmentListedAt = Date()
            }
            Thread.sleep(forTimeInterval: LiveStream.pollSeconds)
        }
        let result = hlscap.finish(timeoutSeconds: 1)
        return Run(result: result, exitedAt: Date(), lastSegmentListedAt: lastSegmentListedAt, segments: segments)
    }

    /// The run exited 74 within a segment and `exitSeconds` of `start`, its one error line holding every
    /// string of `naming`; prints how long it took.
    static func expectStopped(_ run: Run, since start: Date, naming: [String], case name: String, since event: String) {
        let result = run.result
        #expect(result.exitStatus == 74 && !result.timedOut, "\(result.stderr)")
        let line = errorLine(result)
        #expect(naming.allSatisfy { line.contains($0) }, "\(result.stderr)")
        let secondsToFail = run.exitedAt.timeIntervalSince(start)
        print("\(name): exit \(result.exitStatus) \(String(format: "%.1f", secondsToFail)) s after \(event), "
              + "\(run.segments) segments: \(line)")
        #expect(secondsToFail <= segmentSeconds + exitSeconds)
    }

    /// hlscap's one error line; empty, and an issue recorded, when there is not exactly one.
    static func errorLine(_ result: ProcessResult) -> String {
        let lines = result.stderr.split(separator: "\n").filter { $0.hasPrefix("hlscap: ") }
        #expect(lines.count == 1, "one line says what failed: \(result.stderr)")
        return lines.count == 1 ? String(lines[0]) : ""
    }

    static func temporaryFiles(below directory: URL) -> [String] {
        PackagedStream.files(below: directory).filter { $0.split(separator: "/").last?.contains(".tmp.") == true }
    }
}

/// A tmpfs of a given size mounted on a new temporary directory: a disk that fills, or is made
/// read-only, while a stream is written to it. Mounting needs root, which CI has.
struct SmallDisk {
    /// Room for far more than a test run writes.
    static let roomyKilobytes = 65536
    /// A remount read-only fails while a file is open for writing: hlscap holds one only briefly.
    static let remountAttempts = 100

    let directory: URL
    let mountPoint: URL

    init(kilobytes: Int) throws {
        try #require(geteuid() == 0, "the storage-fault tests mount a small tmpfs and must run as root, as CI does")
        directory = try PackagedStream.temporaryDirectory()
        mountPoint = directory.appendingPathComponent("disk")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        let mounted = try ExternalTools.run("mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs",
                                                      mountPoint.path])
        if !mounted.succeeded { try? FileManager.default.removeItem(at: directory) }
        try #require(mounted.succeeded, "cannot mount a tmpfs on \(mountPoint.path): \(mounted.stderr)")
    }

    func remountReadOnly() throws {
        var result: ProcessResult?
        for _ in 0..<Self.remountAttempts {
            result = try ExternalTools.run("mount", ["-o", "remount,ro", mountPoint.path])
            if result?.succeeded == true { return }
            Thread.sleep(forTimeInterval: 0.01)
        }
        Issue.record("cannot remount \(mountPoint.path) read-only: \(result?.stderr ?? "")")
    }

    func remove() {
        _ = try? ExternalTools.run("umount", [mountPoint.path])
        try? FileManager.default.removeItem(at: directory)
    }
}
