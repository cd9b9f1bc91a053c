import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `hlscap file RECORDINGS --from … --to … (-o clip.mp4 | --out DIR)`: a time range of split recordings
/// exported without encoding, across a file change and a gap.
@Suite(.serialized) struct RecordingClipTests {
    /// 40 s of the flash-and-beep clip recorded into 10 s files; the third file goes, leaving a gap.
    private struct Recordings {
        let directory: URL
        let folder: URL
        /// Per file left: its path below the folder, start and end.
        let files: [(path: String, start: Date, end: Date)]

        static func make() throws -> Recordings {
            let directory = try PackagedStream.temporaryDirectory()
            let folder = directory.appendingPathComponent("rec")
            let clip = ExternalTools.repositoryRoot.appendingPathComponent("Fixtures/flash-beep.mp4").path
            let made = try ExternalTools.runHlscap(["live", "--video", clip, "--loop", "--no-realtime", "--duration", "40",
                                                    "--window", "0", "--out", directory.appendingPathComponent("stream").path,
                                                    "--quiet", "--record", folder.path + "/%H-%M-%S.mp4",
                                                    "--record-every", "10s", "--record-codec", "h264"], timeoutSeconds: 180)
            #expect(made.succeeded, "\(made.stderr)")
            let listed = try ExternalTools.runHlscap(["recordings", folder.path, "--json"])
            let document = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
            let entries = try #require(document["files"] as? [[String: Any]])
            try #require(entries.count >= 4, "\(listed.stdout)")
            let date = { (text: Any?) throws -> Date in try #require(ProgramDateTime.parse(Substring(text as? String ?? ""))) }
            var files = try entries.map { (path: try #require($0["path"] as? String), start: try date($0["start"]),
                                           end: try date($0["end"])) }
            try FileManager.default.removeItem(at: folder.appendingPathComponent(files[2].path))
            files.remove(at: 2)
            return Recordings(directory: directory, folder: folder, files: files)
        }
    }

    @Test func aRangeAcrossAFileChangeAndAGapIsCopiedIntoOneFileAndAStream() throws {
        let recordings = try Recordings.make()
        defer { try? FileManager.default.removeItem(at: recordings.directory) }
        // From 3 s before the second file's end to 5 s into the file after the gap.
        let from = recordings.files[1].end.addingTimeInterval(-3)
        let to = recordings.files[2].start.addingTimeInterval(5)
        let range = ["--from", ProgramDateTime.format(from), "--to", ProgramDateTime.format(to)]
        let clip = recordings.directory.appendingPathComponent("clip.mp4").path
        let file = try ExternalTools.runHlscap(["file", recordings.folder.path] + range + ["-o", clip])
        #expect(file.succeeded && file.stderr.isEmpty, "\(file.stderr)")
        // The copy starts at the keyframe at or before --from (the recording's IDRs are 2 s apart), and says so
        // unless that keyframe is at --from itself (the files' boundaries and their keyframes fall where the
        // recording's clock put them, so now and then one is within half a millisecond of it).
        #expect(file.stdout.contains("copied from 2 recordings") && file.stdout.contains("1 gap closed"), "\(file.stdout)")
        let moved = file.stdout.firstMatch(of: /starts (\d+\.\d+) s before --from/).flatMap { Double($0.1) } ?? 0
        #expect(moved < 2.1, "\(file.stdout)")
        let seconds = try ExternalTools.presentationSpanSeconds(path: clip, stream: "v:0")
        // Within a frame at each of the three cuts and the recording's media clock against its capture times.
        #expect(abs(seconds - (8 + moved)) < 0.2, "\(seconds) s for 8 s asked and \(moved) s moved")
        let errors = try ExternalTools.ffmpegDecodeErrors(path: clip)
        #expect(errors.isEmpty, "\(errors)")
        // Pictures and sound stay together across the join (within half an AAC frame, which is how far the
        // sound after it may move to follow on without a gap).
        let sync = try ExternalTools.avSync(path: clip, maxOffsetMilliseconds: 11, minimumPairs: 6)
        #expect(sync.ok, "\(sync.report)")
        // Copied, not encoded: the clip's pictures are a run of the second file's packets that ends with
        // it, then the file after the gap's from its first.
        let packets = try ExternalTools.videoPacketDigests(path: clip)
        let second = try ExternalTools.videoPacketDigests(path: recordings.folder.appendingPathComponent(recordings.files[1].path).path)
        let fourth = try ExternalTools.videoPacketDigests(path: recordings.folder.appendingPathComponent(recordings.files[2].path).path)
        let join = (1..<packets.count).first { split in
            second.count >= split && Array(second.suffix(split)) == Array(packets.prefix(split))
                && Array(fourth.prefix(packets.count - split)) == Array(packets.dropFirst(split))
        }
        #expect(join != nil, "the clip's \(packets.count) packets are not the files' own")

        // The same range as a stream: valid, every segment from a keyframe, the same pictures.
        let stream = recordings.directory.appendingPathComponent("clipstream")
        let packaged = try ExternalTools.runHlscap(["file", recordings.folder.path] + range + ["--out", stream.path])
        #expect(packaged.succeeded && packaged.stdout.contains("copied from 2 recordings"), "\(packaged.stdout)\(packaged.stderr)")
        try ExternalTools.validateStream(stream)
        #expect(try ExternalTools.videoPacketDigests(path: stream.appendingPathComponent("playlist.m3u8").path) == packets)
        let playback = try ExternalTools.chromiumPlays(directory: stream)
        #expect(playback.ok, "\(playback.report)")
    }

    @Test func rangesAndOptionsThatCannotMakeAClipAreRefused() throws {
        let recordings = try Recordings.make()
        defer { try? FileManager.default.removeItem(at: recordings.directory) }
        let folder = recordings.folder.path
        let inside = ProgramDateTime.format(recordings.files[1].start.addingTimeInterval(1))
        let clip = recordings.directory.appendingPathComponent("clip.mp4").path
        let cases: [([String], Int32, String)] = [
            (["--from", "2020-01-01T00:00:00Z", "--duration", "60", "-o", clip], 66, "no recording between"),
            (["--from", inside, "--to", "2020-01-01T00:00:00Z", "-o", clip], 64, "is not after --from"),
            (["--from", "yesterday", "--duration", "60", "-o", clip], 64, "is not a date-time"),
            (["--from", inside, "-o", clip], 64, "--to TIME or --duration SPAN is missing"),
            (["--from", inside, "--duration", "10", "--size", "320x", "-o", clip], 64, "leave out --size"),
            (["--from", inside, "--duration", "10", "-o", recordings.directory.appendingPathComponent("clip.mov").path],
             64, "ends in .mp4"),
            (["--out", recordings.directory.appendingPathComponent("x").path], 66, "is a folder, not a media file"),
        ]
        for (arguments, status, message) in cases {
            let run = try ExternalTools.runHlscap(["file", folder] + arguments)
            #expect(run.exitStatus == status && run.stderr.contains(message), "\(arguments): \(run.exitStatus) \(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: clip), "\(arguments) left \(clip)")
        }
        let made = try ExternalTools.runHlscap(["file", folder, "--from", inside, "--duration", "4", "-o", clip])
        #expect(made.succeeded, "\(made.stderr)")
        let again = try ExternalTools.runHlscap(["file", folder, "--from", inside, "--duration", "4", "-o", clip])
        #expect(again.exitStatus == 73 && again.stderr.contains("--overwrite"), "\(again.stderr)")
    }
}
