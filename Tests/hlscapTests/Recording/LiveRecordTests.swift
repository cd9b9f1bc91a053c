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
        // Out of real time the recorder waits for its encoder, so the frame count below is exact: in real time a
        // 720p HEVC encoder beside the stream's on two cores can fall behind and drop a few frames, as it is meant to.
        let result = try ExternalTools.runHlscap(["live"] + LiveStream.testSource + [
            "--no-realtime", "--duration", "6", "--out", stream.path, "--record", recording, "--record-size", "1280x720",
            "--quiet"])
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
        #expect(boxes.filter { $0 == "moof" }.count == 3, "one fragment per segment: \(boxes)")
        let span = try ExternalTools.presentationSpanSeconds(path: recording, stream: "a:0")
        #expect(abs(span - 6) < 0.2, "the stream's audio is in the recording: \(span) s")
        try ExternalTools.validateStream(stream)

        let again = try ExternalTools.runHlscap(["live"] + LiveStream.testSource + [
            "--no-realtime", "--duration", "2", "--out", stream.path, "--record", recording, "--quiet", "--resume"])
        #expect(again.succeeded, "\(again.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("rec-2.mp4").path),
                "a resumed stream records into a new file")
        let refused = try ExternalTools.runHlscap(["live"] + LiveStream.testSource + [
            "--duration", "2", "--out", directory.appendingPathComponent("other").path, "--record", recording])
        #expect(refused.exitStatus == 73 && refused.stderr.contains(recording), "\(refused.stderr)")
    }

    /// The recording's files below `folder`, by path, in order of name.
    static func files(below folder: URL) -> [String] {
        let names = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
        return names.filter { $0.hasSuffix(".mp4") }.sorted().map { folder.appendingPathComponent($0).path }
    }

    /// `--record-every`: a file at each boundary of the period on the clock, named by the pattern; each
    /// one starts with a keyframe and decodes alone, and together they hold every frame the stream has.
    @Test func aRecordingSplitByTimeStartsAFileAtEachBoundary() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("rec")
        let result = try ExternalTools.runHlscap(["live", "--video", "test", "--audio", "test", "--size", "320x180",
                                                  "--no-realtime", "--duration", "16", "--out",
                                                  directory.appendingPathComponent("stream").path, "--quiet",
                                                  "--record", folder.path + "/%Y-%m-%d/%H-%M-%S.mp4",
                                                  "--record-every", "5s", "--record-codec", "h264"], timeoutSeconds: 180)
        #expect(result.succeeded, "\(result.stderr)")
        let files = Self.files(below: folder)
        #expect((4...5).contains(files.count), "\(files)")
        #expect(result.stdout.contains("recorded \(files.count) files"), "\(result.stdout)")
        var frames = 0
        for (index, file) in files.enumerated() {
            let name = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
            let second = try #require(Int(name.split(separator: "-").last ?? ""))
            // Every file but the first starts at a boundary: its first frame within a frame of it.
            if index > 0 { #expect(second % 5 == 0, "\(file)") }
            #expect(result.stderr.contains("recording into \(file)") && result.stderr.contains("recorded \(file) ("),
                    "\(result.stderr)")
            let first = try ExternalTools.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-read_intervals", "%+#1",
                                                          "-show_entries", "frame=key_frame,pict_type", "-of", "csv=p=0", file])
            #expect(first.stdout.hasPrefix("1,I"), "\(file) starts with a keyframe: \(first.stdout)")
            #expect(try ExternalTools.ffmpegDecodeErrors(path: file).isEmpty, "\(file)")
            #expect(try Self.topLevelBoxes(file).last == "mfra", "\(file) is finished whole")
            frames += try Self.recordedFrames(file)
            // Each file's times start near zero, as a file of its own.
            let start = try ExternalTools.run("ffprobe", ["-v", "error", "-show_entries", "format=start_time",
                                                          "-of", "csv=p=0", file])
            #expect((Double(start.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 99) < 1.1, "\(file): \(start.stdout)")
        }
        #expect(frames == 16 * 30, "every frame, none lost to the recording's encoder out of real time")

        // The timeline, from the files' own boxes: one file after another with no gap, 16 s in all, and
        // every fragment where the listing says, starting at its moof (after the prft that dates it).
        let listed = try ExternalTools.runHlscap(["recordings", folder.path, "--json"])
        #expect(listed.succeeded, "\(listed.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
        let timeline = try #require(document["files"] as? [[String: Any]])
        #expect(timeline.count == files.count && (document["gaps"] as? [Any])?.isEmpty == true, "\(listed.stdout)")
        #expect(abs((document["totalSeconds"] as? Double ?? 0) - 16) < 0.05, "\(listed.stdout)")
        let dates = timeline.map { ($0["start"] as? String ?? "", $0["end"] as? String ?? "") }
        for (earlier, later) in zip(dates, dates.dropFirst()) { #expect(earlier.1 == later.0, "\(dates)") }
        for (entry, file) in zip(timeline, files) {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
            #expect(entry["bytes"] as? Int == bytes.count)
            for fragment in entry["fragments"] as? [[String: Any]] ?? [] {
                let offset = try #require(fragment["offset"] as? Int)
                #expect(String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self) == "moof")
                #expect(String(decoding: bytes[(offset - 28)..<(offset - 24)], as: UTF8.self) == "prft")
            }
        }
        let text = try ExternalTools.runHlscap(["recordings", folder.path])
        #expect(text.stdout.contains("\(files.count) files, 16.0 s recorded, 0 gaps"), "\(text.stdout)")
    }

    /// kill -9 while a split recording with retention runs (rotating and deleting every 2 s): every file
    /// there decodes, the last up to its last fragment, and the next run's retention takes every file the
    /// killed one left, so nothing is orphaned.
    @Test func aKilledSplitRecordingLeavesEveryFileDecodable() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("rec")
        let hlscap = try ExternalTools.startHlscap(["live", "--video", "test", "--audio", "test", "--size", "320x180",
                                                    "--out", directory.appendingPathComponent("stream").path, "--quiet",
                                                    "--record", folder.path + "/%H-%M-%S.mp4", "--record-every", "2s",
                                                    "--keep", "6s", "--record-codec", "h264"])
        try #require(LiveStream.waitForSegments(1, in: directory.appendingPathComponent("stream"), of: hlscap))
        Thread.sleep(forTimeInterval: Double.random(in: 5...8))
        hlscap.send(SIGKILL)
        _ = hlscap.finish(timeoutSeconds: 10)
        let files = Self.files(below: folder)
        #expect(files.count >= 3, "\(files)")
        for file in files.dropLast() {
            #expect(try ExternalTools.ffmpegDecodeErrors(path: file).isEmpty, "\(file)")
            #expect(try Self.recordedFrames(file) > 0, "\(file)")
        }
        // The file being written when the process died holds its init section and whole fragments: the
        // timeline reads every file, that one up to its last whole fragment.
        let last = try #require(files.last)
        #expect(try Self.topLevelBoxes(last).prefix(2) == ["ftyp", "moov"])
        let listed = try ExternalTools.runHlscap(["recordings", folder.path])
        #expect(listed.succeeded && listed.stdout.contains("\(files.count) files"), "\(listed.stdout)\(listed.stderr)")
        // 8 s later a new run keeping 2 s finds the killed run's files at its start and deletes every one.
        Thread.sleep(forTimeInterval: 8)
        let next = try ExternalTools.runHlscap(["live", "--video", "test", "--audio", "test", "--size", "320x180",
                                                "--no-realtime", "--duration", "4", "--out",
                                                directory.appendingPathComponent("stream2").path, "--quiet",
                                                "--record", folder.path + "/%H-%M-%S.mp4", "--record-every", "2s",
                                                "--keep", "2s", "--record-codec", "h264"], timeoutSeconds: 120)
        #expect(next.succeeded, "\(next.stderr)")
        let left = Set(Self.files(below: folder)).intersection(files)
        #expect(left.isEmpty, "left by the killed run and not deleted: \(left)")
    }

    /// `--keep`: files older than it go as new ones start, oldest first, with a line each; files of an
    /// earlier run found at start count too, and the folders they leave empty are removed.
    @Test func retentionDeletesTheOldestFilesAndTheFoldersTheyLeave() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("rec")
        let old = folder.appendingPathComponent("2020-01-01/00-00-00.mp4")
        try FileManager.default.createDirectory(at: old.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("old".utf8).write(to: old)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_577_836_800)],
                                              ofItemAtPath: old.path)
        let result = try ExternalTools.runHlscap(["live", "--video", "test", "--audio", "test", "--size", "320x180",
                                                  "--no-realtime", "--duration", "16", "--out",
                                                  directory.appendingPathComponent("stream").path, "--quiet",
                                                  "--record", folder.path + "/%Y-%m-%d/%H-%M-%S.mp4",
                                                  "--record-every", "2s", "--keep", "5s", "--record-codec", "h264"],
                                                 timeoutSeconds: 180)
        #expect(result.succeeded, "\(result.stderr)")
        #expect(result.stderr.contains("deleted \(old.path): older than --keep"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: old.deletingLastPathComponent().path), "its empty folder went too")
        let deleted = result.stderr.split(separator: "\n").filter { $0.contains("deleted ") && $0.contains("older than --keep") }
        let kept = Self.files(below: folder)
        // 16 s of 2 s files: those that ended more than 5 s before the last rotation are gone.
        #expect((3...5).contains(kept.count), "\(kept)")
        #expect(deleted.count >= 3, "\(result.stderr)")
        for file in kept { #expect(try ExternalTools.ffmpegDecodeErrors(path: file).isEmpty, "\(file)") }
        // The newest file, being written when retention ran, is always there.
        #expect(result.stdout.contains("the last \(try #require(kept.last))"), "\(result.stdout)")
    }

    /// What retention deleted, and why, is counted in `/metrics` while the stream runs, by rule, files and
    /// bytes.
    @Test func retentionIsCountedInTheMetrics() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("rec")
        let served = try ServedStream.start(["live"] + LiveStream.testSource + [
            "--serve", "127.0.0.1:0", "--duration", "30",
            "--out", directory.appendingPathComponent("stream").path,
            "--record", folder.path + "/%H-%M-%S.mp4", "--record-every", "2s", "--keep", "3s", "--record-codec", "h264"])
        defer { served.process.send(SIGKILL) }
        var samples: [String: Double] = [:]
        let deadline = Date(timeIntervalSinceNow: 25)
        while Date() < deadline, (samples["hlscap_recording_files_deleted_total{reason=keep}"] ?? 0) < 2 {
            Thread.sleep(forTimeInterval: 1)
            samples = try served.metrics()
        }
        let files = samples["hlscap_recording_files_deleted_total{reason=keep}"] ?? 0
        let bytes = samples["hlscap_recording_bytes_deleted_total{reason=keep}"] ?? 0
        #expect(files >= 2 && bytes > files * 1000, "\(samples)")
        // The count is the files deleted: each has its line.
        let lines = served.process.stderr.split(separator: "\n").filter { $0.contains("older than --keep") }
        #expect(lines.count >= Int(files), "\(served.process.stderr)")
    }

    @Test func splittingThatWouldCollideOrCannotBeReadIsRefused() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("s").path
        func run(_ arguments: [String]) throws -> ProcessResult {
            try ExternalTools.runHlscap(["live", "--video", "test", "--audio", "test", "--out", out] + arguments)
        }
        let fixed = try run(["--record", directory.path + "/rec.mp4", "--record-every", "1h"])
        #expect(fixed.exitStatus == 64 && fixed.stderr.contains("--record-every needs a time"), "\(fixed.stderr)")
        let daily = try run(["--record", directory.path + "/%Y-%m-%d.mp4", "--record-every", "1h"])
        #expect(daily.exitStatus == 64 && daily.stderr.contains("would collide"), "\(daily.stderr)")
        let alone = try run(["--record-every", "1h"])
        #expect(alone.exitStatus == 64 && alone.stderr.contains("--record-every needs --record"), "\(alone.stderr)")
        let uneven = try run(["--record", directory.path + "/%H-%M.mp4", "--record-every", "7h"])
        #expect(uneven.exitStatus == 64 && uneven.stderr.contains("does not divide a day"), "\(uneven.stderr)")
        let unknown = try run(["--record", directory.path + "/%Q.mp4", "--record-every", "1h"])
        #expect(unknown.exitStatus == 64 && unknown.stderr.contains("%Q"), "\(unknown.stderr)")
        let shortKeep = try run(["--record", directory.path + "/%H-%M.mp4", "--record-every", "1h", "--keep", "30m"])
        #expect(shortKeep.exitStatus == 64 && shortKeep.stderr.contains("shorter than one file"), "\(shortKeep.stderr)")
        let keepAlone = try run(["--record", directory.path + "/rec.mp4", "--keep-size", "50G"])
        #expect(keepAlone.exitStatus == 64 && keepAlone.stderr.contains("split by time"), "\(keepAlone.stderr)")
        let badSize = try run(["--record", directory.path + "/%H-%M.mp4", "--record-every", "1h", "--min-free", "lots"])
        #expect(badSize.exitStatus == 64 && badSize.stderr.contains("--min-free takes a size"), "\(badSize.stderr)")
        let unwritable = try run(["--record", "/proc/rec/%H.mp4", "--record-every", "1h"])
        #expect(unwritable.exitStatus == 73 && unwritable.stderr.contains("/proc"), "\(unwritable.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out + "/playlist.m3u8"), "nothing was streamed")
        for result in [fixed, daily, alone, uneven, unknown, shortKeep, keepAlone, badSize, unwritable] {
            // One line saying what is wrong (a usage error adds where to read the usage).
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1 || (lines.count == 2 && lines[1].contains("--help")), "one line: \(result.stderr)")
        }
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
            "--no-realtime", "--duration", "8", "--out", stream.path, "--record", recording, "--record-bitrate", "6M",
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
