import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `hlscap live --video URL|FILE`: an IP camera (GStreamer's RTSP server) and a file played as a live
/// source, validated and played; inputs that cannot be read refused with one line and a sysexits code.
@Suite(.serialized) struct NetworkInputTests {
    /// An RTSP camera's H.264 and AAC become a live stream without decoding: valid, both tracks, about
    /// the time it ran, the camera's own pictures, and it plays in Chromium.
    @Test func anRTSPCameraBecomesALiveStream() throws {
        let camera = try RTSPCamera.start()
        defer { camera.stop() }
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let run = try ExternalTools.runHlscap(["live", "--video", camera.url("h264-aac"), "--duration", "10",
                                               "--out", stream.path, "--quiet"], timeoutSeconds: 60)
        #expect(run.succeeded && run.stderr.isEmpty, "\(run.stderr)")
        #expect(run.stdout.contains("video copied"), "\(run.stdout)")
        try ExternalTools.validateStream(stream)
        let playlist = try LiveStream.playlist(in: stream)
        #expect(playlist.endList && playlist.segments.count >= 4 && playlist.targetDurationSeconds == 2, "\(playlist.render())")
        // The camera's keyframes every 2 s cut the segments.
        #expect(playlist.segments.dropLast().allSatisfy { abs($0.durationSeconds - 2) < 0.05 }, "\(playlist.render())")
        let entry = stream.appendingPathComponent("playlist.m3u8").path
        // The camera's own size and rate are kept when --size and --fps are not given.
        let size = try ExternalTools.ffprobeVideoSize(path: entry)
        #expect(size.width == 640 && size.height == 360, "\(size)")
        let seconds = try ExternalTools.presentationSpanSeconds(path: entry, stream: "v:0")
        // Copied video starts at the camera's first keyframe, and the duration counts from there.
        #expect(seconds > 9.5 && seconds < 10.5, "\(seconds) s of video for a 10 s run")
        let audioSeconds = try ExternalTools.presentationSpanSeconds(path: entry, stream: "a:0")
        #expect(abs(audioSeconds - seconds) < 0.5, "\(audioSeconds) s of audio beside \(seconds) s of video")
        let frames = try ExternalTools.ffprobeFrameCount(path: entry)
        #expect(abs(frames - Int(seconds * 30)) <= 15, "\(frames) frames in \(seconds) s at 30 fps")
        let errors = try ExternalTools.ffmpegDecodeErrors(path: entry)
        #expect(errors.isEmpty, "\(errors)")
        let playback = try ExternalTools.chromiumPlays(directory: stream)
        #expect(playback.ok, "\(playback.report)")
    }

    /// A camera that sends a flash and a beep each second (the fixture served as it is): copied, every
    /// flash keeps its beep, as a camera's own clock put them. Every picture is there, the first keyframe
    /// too, which FFmpeg hands on without a timestamp.
    @Test func aCopiedCameraKeepsPictureAndSoundTogether() throws {
        let clip = ExternalTools.repositoryRoot.appendingPathComponent("Fixtures/flash-beep.mp4").path
        let camera = try RTSPCamera.start(["--file", clip])
        defer { camera.stop() }
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let run = try ExternalTools.runHlscap(["live", "--video", camera.url("file"), "--window", "0", "--out", stream.path,
                                               "--quiet"], timeoutSeconds: 60)
        // The file's end is the camera closing the stream.
        #expect(run.exitStatus == 74 && run.stdout.contains("video copied"), "\(run.stdout)\(run.stderr)")
        try ExternalTools.validateStream(stream)
        let sync = try ExternalTools.avSync(path: stream.appendingPathComponent("playlist.m3u8").path,
                                            maxOffsetMilliseconds: 10, minimumPairs: 4)
        #expect(sync.ok, "\(sync.report)")
        // 150 pictures, a keyframe every 25: without the first, a copy would begin at the 26th.
        let frames = try ExternalTools.ffprobeFrameCount(path: stream.appendingPathComponent("playlist.m3u8").path)
        #expect(frames >= 148, "\(frames) of the file's 150 pictures")
    }

    /// `--record` beside a copied camera records the camera's own pictures, as they came: the recording's
    /// video packets are the stream's, no second encoding; split by time, each file plays alone.
    @Test func aCopiedCameraIsRecordedAsItCame() throws {
        let camera = try RTSPCamera.start()
        defer { camera.stop() }
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let folder = directory.appendingPathComponent("rec")
        let run = try ExternalTools.runHlscap(["live", "--video", camera.url("h264-aac"), "--duration", "10",
                                               "--window", "0", "--out", stream.path, "--quiet",
                                               "--record", folder.path + "/%H-%M-%S.mp4", "--record-every", "4s"],
                                              timeoutSeconds: 60)
        #expect(run.succeeded && run.stdout.contains("video copied"), "\(run.stdout)\(run.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".mp4") }.sorted()
        #expect(files.count >= 2, "\(files)")
        var recorded: [String] = []
        for file in files {
            let path = folder.appendingPathComponent(file).path
            #expect(try ExternalTools.ffmpegDecodeErrors(path: path).isEmpty, "\(file)")
            recorded += try ExternalTools.videoPacketDigests(path: path)
        }
        let streamed = try ExternalTools.videoPacketDigests(path: stream.appendingPathComponent("playlist.m3u8").path)
        #expect(!streamed.isEmpty && recorded == streamed, "\(recorded.count) packets recorded, \(streamed.count) streamed")
    }

    /// A copied camera's stream runs where the camera is, not its read-ahead behind it: hlscap reads
    /// ahead to the camera's second keyframe before it starts, and the pictures read meanwhile are dated
    /// when they came, not when the read-ahead ended. With a keyframe every 4 s, the first segment's
    /// PROGRAM-DATE-TIME is within about one interval of hlscap's start (its first usable keyframe, and
    /// the set-up), where a stream held back by its read-ahead is dated two intervals and more after it.
    @Test func aCopiedCameraIsNotHeldBackByTheReadAhead() throws {
        let camera = try RTSPCamera.start(["--key-seconds", "4"])
        defer { camera.stop() }
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let started = Date()
        let run = try ExternalTools.runHlscap(["live", "--video", camera.url("h264-aac"), "--duration", "9", "--window", "0",
                                               "--out", stream.path, "--quiet"], timeoutSeconds: 60)
        #expect(run.succeeded && run.stdout.contains("video copied"), "\(run.stdout)\(run.stderr)")
        let first = try #require(try LiveStream.playlist(in: stream).segments.first?.programDateTime)
        let lag = first.timeIntervalSince(started)
        #expect(lag > 0 && lag < 7, "the first picture is dated \(lag) s after hlscap started")
    }

    /// `--ladder source,480p,360p` on a 720p camera: the top rung is the camera's own stream (its packets
    /// are those a plain copy of the same camera gets at the same time), the rungs below are encoded from
    /// its decoded pictures with IDRs at its keyframes, so segment N of every rung starts at the same
    /// time; the ladder validates, every rung decodes, and Chromium plays the master playlist.
    @Test func aLadderOnACopiedCameraCopiesTheTopRungAndEncodesTheRest() throws {
        let camera = try RTSPCamera.start(["--size", "1280x720"])
        defer { camera.stop() }
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let plain = directory.appendingPathComponent("plain")
        let copying = try ExternalTools.startHlscap(["live", "--video", camera.url("h264-aac"), "--duration", "12",
                                                     "--window", "0", "--out", plain.path, "--quiet"])
        let run = try ExternalTools.runHlscap(["live", "--video", camera.url("h264-aac"), "--ladder", "source,480p,360p",
                                               "--duration", "12", "--window", "0", "--out", stream.path, "--quiet"],
                                              timeoutSeconds: 90)
        let copied = copying.finish(timeoutSeconds: 60)
        #expect(run.succeeded && run.stderr.isEmpty && run.stdout.contains("video copied"), "\(run.stdout)\(run.stderr)")
        #expect(copied.exitStatus == 0, "\(copied.stderr)")
        let names = try FileManager.default.contentsOfDirectory(atPath: stream.path).sorted()
        #expect(names == ["360p", "480p", "720p", "audio", "master.m3u8"], "\(names)")
        try ExternalTools.validateStream(stream)
        let ladder = LadderStream(directory: stream, rungs: ["720p", "480p", "360p"])
        let problems = try ladder.problems(checkingEveryIFrame: true)
        #expect(problems.isEmpty, "\(problems)")
        // The camera's keyframes every 2 s cut every rung.
        let playlist = try ladder.rendition("360p").playlist()
        #expect(playlist.segments.count >= 4 && playlist.segments.dropLast().allSatisfy { abs($0.durationSeconds - 2) < 0.05 },
                "\(playlist.render())")
        let top = try ExternalTools.videoPacketDigests(path: stream.appendingPathComponent("720p/playlist.m3u8").path)
        let reference = try ExternalTools.videoPacketDigests(path: plain.appendingPathComponent("playlist.m3u8").path)
        // Whichever connected first may have the camera's first keyframe, which the other never got.
        let overlap = max(Self.commonRun(top, reference), Self.commonRun(reference, top))
        #expect(overlap >= 240, "\(overlap) of \(top.count) top-rung packets follow the plain copy's \(reference.count) in order")
        for rung in ["480p", "360p"] {
            let path = stream.appendingPathComponent(rung + "/playlist.m3u8").path
            #expect(try ExternalTools.ffprobeFrameCount(path: path) == top.count, "\(rung) holds every picture of the source")
            let size = try ExternalTools.ffprobeVideoSize(path: path)
            #expect(size.height == Int(rung.dropLast()), "\(rung): \(size)")
        }
        let decodeProblems = try Ladder.decodeEveryRendition(ladder)
        #expect(decodeProblems.isEmpty, "\(decodeProblems)")
        let playback = try ExternalTools.chromiumPlays(directory: stream, playlist: "master.m3u8")
        #expect(playback.ok, "\(playback.report)")
        // A rung as tall as the camera would be a worse copy of it.
        let refused = directory.appendingPathComponent("refused")
        let tall = try ExternalTools.runHlscap(["live", "--video", camera.url("h264-aac"), "--ladder", "source,720p",
                                                "--duration", "4", "--out", refused.path, "--quiet"], timeoutSeconds: 60)
        #expect(tall.exitStatus == 64 && tall.stderr.contains("720p rung is not below the 720-line source"), "\(tall.stderr)")
        #expect(!FileManager.default.fileExists(atPath: refused.appendingPathComponent("master.m3u8").path))
    }

    /// A camera that sends keyframes inside segments (every 0.8 s, as GStreamer's x264 camera does when set
    /// so): every I-frame entry of the copied rung decodes to exactly one picture (those keyframes are not
    /// listed), and the master playlist's AVERAGE-BANDWIDTH is within 10 % of what the stream measures,
    /// declared again as the measure settles rather than left at the first segment's.
    @Test func aCameraWithKeyframesInsideSegmentsListsOnePictureAnIFrame() throws {
        let camera = try RTSPCamera.start(["--key-seconds", "0.8"])
        defer { camera.stop() }
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let run = try ExternalTools.runHlscap(["live", "--video", camera.url("h264-aac"), "--ladder", "source,180p",
                                               "--duration", "10", "--window", "0", "--out", stream.path, "--quiet"],
                                              timeoutSeconds: 60)
        #expect(run.succeeded && run.stdout.contains("video copied"), "\(run.stdout)\(run.stderr)")
        try ExternalTools.validateStream(stream)
        let ladder = LadderStream(directory: stream, rungs: ["360p", "180p"])
        let problems = try ladder.problems(checkingEveryIFrame: true)
        #expect(problems.isEmpty, "\(problems)")
    }

    /// How many packets of `first`, from its first, follow one another in `second` from where that first
    /// packet is; 0 when it is not there.
    static func commonRun(_ first: [String], _ second: [String]) -> Int {
        guard let start = first.first.flatMap({ second.firstIndex(of: $0) }) else { return 0 }
        return zip(first, second[start...]).prefix { $0 == $1 }.count
    }

    /// A camera whose keyframes come every 3 s: copied segments are 3 s, the target duration says so, and
    /// one line says how to fix it at the camera. `--transcode` encodes instead, on the 2 s grid.
    @Test func aCameraWithALongKeyframeIntervalIsSaidAndCanBeEncoded() throws {
        let camera = try RTSPCamera.start(["--key-seconds", "3"])
        defer { camera.stop() }
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let copied = directory.appendingPathComponent("copied")
        let run = try ExternalTools.runHlscap(["live", "--video", camera.url("h264-aac"), "--duration", "10",
                                               "--out", copied.path, "--quiet"], timeoutSeconds: 60)
        #expect(run.succeeded, "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1 && run.stderr.contains("keyframe every 3.00 s"), "\(run.stderr)")
        try ExternalTools.validateStream(copied)
        let playlist = try LiveStream.playlist(in: copied)
        #expect(playlist.targetDurationSeconds == 3 && playlist.segments.dropLast().allSatisfy { abs($0.durationSeconds - 3) < 0.05 },
                "\(playlist.render())")

        let encoded = directory.appendingPathComponent("encoded")
        let transcoded = try ExternalTools.runHlscap(["live", "--video", camera.url("h264-aac"), "--transcode",
                                                      "--duration", "6", "--out", encoded.path, "--quiet"],
                                                     timeoutSeconds: 60)
        #expect(transcoded.succeeded && transcoded.stderr.isEmpty && !transcoded.stdout.contains("copied"),
                "\(transcoded.stdout)\(transcoded.stderr)")
        try ExternalTools.validateStream(encoded)
        let grid = try LiveStream.playlist(in: encoded)
        #expect(grid.targetDurationSeconds == 2 && grid.segments.dropLast().allSatisfy { abs($0.durationSeconds - 2) < 0.05 },
                "\(grid.render())")
    }

    /// G.711 µ-law, which fMP4 HLS cannot carry, arrives as AAC beside the camera's video, copied.
    @Test func aCameraWithMuLawSoundGetsAAC() throws {
        let camera = try RTSPCamera.start()
        defer { camera.stop() }
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let run = try ExternalTools.runHlscap(["live", "--video", camera.url("h264-pcmu"), "--duration", "6",
                                               "--out", stream.path, "--quiet"], timeoutSeconds: 60)
        #expect(run.succeeded && run.stdout.contains("video copied"), "\(run.stdout)\(run.stderr)")
        try ExternalTools.validateStream(stream)
        let probe = try ExternalTools.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0",
                                                      stream.appendingPathComponent("playlist.m3u8").path])
        #expect(Set(probe.stdout.split(separator: "\n")) == ["aac", "h264"], "\(probe.stdout)")
        let audioSeconds = try ExternalTools.presentationSpanSeconds(path: stream.appendingPathComponent("playlist.m3u8").path,
                                                                     stream: "a:0")
        #expect(audioSeconds > 4.5, "\(audioSeconds) s of audio")
    }

    /// A file played as a live source, repeated: the stream runs on across the repetitions without a
    /// discontinuity, every flash keeps its beep, and it plays in Chromium.
    @Test func aLoopedFileIsALiveSourceThatKeepsItsTiming() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let clip = ExternalTools.repositoryRoot.appendingPathComponent("Fixtures/flash-beep.mp4").path
        let run = try ExternalTools.runHlscap(["live", "--video", clip, "--loop", "--no-realtime", "--duration", "15", "--window", "0",
                                               "--out", stream.path, "--quiet"], timeoutSeconds: 120)
        #expect(run.succeeded, "\(run.stderr)")
        try ExternalTools.validateStream(stream)
        let text = try String(contentsOf: stream.appendingPathComponent("playlist.m3u8"), encoding: .utf8)
        #expect(!text.contains("#EXT-X-DISCONTINUITY"), "\(text)")
        let entry = stream.appendingPathComponent("playlist.m3u8").path
        let frames = try ExternalTools.ffprobeFrameCount(path: entry)
        #expect(frames == 15 * 25, "\(frames) frames for 15 s of a 25 fps file")
        // The 6 s file played two and a half times: a flash and a beep at every whole second.
        let sync = try ExternalTools.avSync(path: entry, maxOffsetMilliseconds: 10, minimumPairs: 14)
        #expect(sync.ok, "\(sync.report)")
        let playback = try ExternalTools.chromiumPlays(directory: stream)
        #expect(playback.ok, "\(playback.report)")
    }

    /// A subtitle (or data) track of the input is left out with one line; the picture and sound go on.
    @Test func otherTracksAreLeftOutWithALine() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let subtitles = directory.appendingPathComponent("notes.srt")
        try Data("1\n00:00:00,500 --> 00:00:02,000\nA note\n".utf8).write(to: subtitles)
        let clip = directory.appendingPathComponent("with-subtitles.mkv")
        let made = try ExternalTools.run("ffmpeg", ["-v", "error", "-y", "-i",
                                                    ExternalTools.repositoryRoot.appendingPathComponent("Fixtures/h264-aac.mp4").path,
                                                    "-i", subtitles.path, "-map", "0", "-map", "1", "-c", "copy", clip.path])
        #expect(made.succeeded, "\(made.stderr)")
        let stream = directory.appendingPathComponent("stream")
        let run = try ExternalTools.runHlscap(["live", "--video", clip.path, "--no-realtime", "--out", stream.path, "--quiet"],
                                             timeoutSeconds: 60)
        #expect(run.succeeded, "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1 && run.stderr.contains("subrip subtitle stream is left out"),
                "\(run.stderr)")
        try ExternalTools.validateStream(stream)
    }

    /// What encoders and relays send, each from Debian's ffmpeg publishing the flash-and-beep file as it is
    /// (MPEG-TS over UDP, MPEG-TS over SRT with ffmpeg listening, FLV over RTMP with ffmpeg serving it):
    /// copied, valid, and every flash within 10 ms of its beep.
    @Test(arguments: ["udp", "srt", "rtmp"])
    func aPublishedStreamIsCopiedInSync(scheme: String) throws {
        let port = try SilentListener.freePort()
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let clip = ExternalTools.repositoryRoot.appendingPathComponent("Fixtures/flash-beep.mp4").path
        let (url, output): (String, [String]) = switch scheme {
        case "udp": ("udp://127.0.0.1:\(port)", ["-f", "mpegts", "udp://127.0.0.1:\(port)?pkt_size=1316"])
        case "srt": ("srt://127.0.0.1:\(port)", ["-f", "mpegts", "srt://127.0.0.1:\(port)?mode=listener"])
        default: ("rtmp://127.0.0.1:\(port)/live/cam", ["-f", "flv", "-listen", "1", "rtmp://127.0.0.1:\(port)/live/cam"])
        }
        // UDP has no connection: hlscap listens first. SRT and RTMP: ffmpeg listens first.
        var hlscap: BackgroundProcess?
        if scheme == "udp" {
            hlscap = try ExternalTools.startHlscap(["live", "--video", url, "--duration", "5", "--window", "0",
                                                    "--out", stream.path, "--quiet"])
            Thread.sleep(forTimeInterval: 1)
        }
        let publisher = try BackgroundProcess("ffmpeg", ["-nostdin", "-v", "error", "-re", "-i", clip, "-c", "copy"] + output)
        defer { publisher.send(SIGKILL) }
        if hlscap == nil {
            Thread.sleep(forTimeInterval: 1)
            hlscap = try ExternalTools.startHlscap(["live", "--video", url, "--duration", "4", "--window", "0",
                                                    "--out", stream.path, "--quiet"])
        }
        let result = try #require(hlscap).finish(timeoutSeconds: 60)
        #expect(result.exitStatus == 0 && result.stdout.contains("video copied"), "\(result.stdout)\(result.stderr)")
        try ExternalTools.validateStream(stream)
        let sync = try ExternalTools.avSync(path: stream.appendingPathComponent("playlist.m3u8").path,
                                            maxOffsetMilliseconds: 10, minimumPairs: 2)
        #expect(sync.ok, "\(sync.report)")
    }

    /// Without --no-realtime a file is read at its own pace, like ffmpeg's -re.
    @Test func aFileIsReadAtItsOwnPace() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clip = ExternalTools.repositoryRoot.appendingPathComponent("Fixtures/h264-aac.mp4").path
        let started = Date()
        let run = try ExternalTools.runHlscap(["live", "--video", clip, "--out", directory.appendingPathComponent("s").path,
                                               "--quiet"], timeoutSeconds: 60)
        let seconds = Date().timeIntervalSince(started)
        #expect(run.succeeded, "\(run.stderr)")
        #expect(seconds >= 3.5, "a 4 s file took \(seconds) s")
        let playlist = try LiveStream.playlist(in: directory.appendingPathComponent("s"))
        #expect(playlist.endList, "the file's end ends the stream")
    }

    /// A URL nobody answers, one that answers nothing, a missing mount, a missing file and a file that
    /// is not media: one line naming the input, a sysexits code, and no stream left behind.
    @Test func inputsThatCannotBeReadAreRefused() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let camera = try RTSPCamera.start()
        defer { camera.stop() }
        let silent = try SilentListener()
        defer { silent.close() }
        let notMedia = directory.appendingPathComponent("notes.txt")
        try Data("not a video\n".utf8).write(to: notMedia)
        let refusedPort = try SilentListener.freePort()
        let cases: [(input: String, extra: [String], status: Int32, says: String)] = [
            ("rtsp://127.0.0.1:\(refusedPort)/cam", [], 69, "rtsp://127.0.0.1:\(refusedPort)/cam"),
            ("rtsp://127.0.0.1:\(silent.port)/cam", ["--stall-timeout", "1"], 69, "nothing received for 1 s"),
            (camera.url("no-such-mount"), [], 69, "no-such-mount"),
            ("rtsp://viewer:secret@127.0.0.1:\(refusedPort)/cam", [], 69, "rtsp://viewer@127.0.0.1"),
            (directory.appendingPathComponent("missing.mp4").path, [], 66, "missing.mp4"),
            (notMedia.path, [], 66, "notes.txt"),
        ]
        for (index, item) in cases.enumerated() {
            let out = directory.appendingPathComponent("out-\(index)")
            let started = Date()
            let run = try ExternalTools.runHlscap(["live", "--video", item.input, "--out", out.path, "--quiet"] + item.extra,
                                                   timeoutSeconds: 60)
            let lines = run.stderr.split(separator: "\n")
            #expect(run.exitStatus == item.status && lines.count == 1 && run.stderr.contains(item.says),
                    "\(item.input): \(run.exitStatus) \(run.stderr)")
            #expect(!run.stderr.contains("secret"), "a password never reaches a message: \(run.stderr)")
            #expect(Date().timeIntervalSince(started) < 20, "\(item.input) took \(Date().timeIntervalSince(started)) s")
            #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("playlist.m3u8").path))
        }
        let loopURL = try ExternalTools.runHlscap(["live", "--video", camera.url("h264"), "--loop", "--out",
                                                   directory.appendingPathComponent("l").path])
        #expect(loopURL.exitStatus == 64 && loopURL.stderr.contains("--loop"), "\(loopURL.stderr)")
        let transport = try ExternalTools.runHlscap(["live", "--video", camera.url("h264"), "--rtsp-transport", "sctp",
                                                     "--out", directory.appendingPathComponent("t").path])
        #expect(transport.exitStatus == 64 && transport.stderr.contains("--rtsp-transport"), "\(transport.stderr)")
    }

    /// A camera that goes away mid-stream ends the stream with one line and 74, so that a service
    /// manager restarts it; what was captured stays a valid stream with EXT-X-ENDLIST.
    @Test func aCameraThatGoesAwayEndsTheStreamCleanly() throws {
        let camera = try RTSPCamera.start(["--stop-after", "5"])
        defer { camera.stop() }
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let started = Date()
        let run = try ExternalTools.runHlscap(["live", "--video", camera.url("h264-aac"), "--stall-timeout", "2",
                                               "--out", stream.path, "--quiet"], timeoutSeconds: 60)
        #expect(Date().timeIntervalSince(started) < 20)
        #expect(run.exitStatus == 74 && run.stderr.split(separator: "\n").count == 1
                && run.stderr.contains("h264-aac: the input ended"), "\(run.exitStatus) \(run.stderr)")
        try ExternalTools.validateStream(stream)
        let playlist = try LiveStream.playlist(in: stream)
        #expect(playlist.endList && playlist.segments.count >= 2, "\(playlist.render())")
    }

    /// With --reconnect, a camera that goes away is waited for: a dark picture and silence stand in, and
    /// when it is back the stream goes on after EXT-X-DISCONTINUITY, valid and decodable throughout.
    @Test func aCameraThatComesBackIsWaitedFor() throws {
        let port = try SilentListener.freePort()
        let first = try RTSPCamera.start(["--port", String(port), "--stop-after", "4"])
        defer { first.stop() }
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let hlscap = try ExternalTools.startHlscap(["live", "--video", first.url("h264-aac"), "--reconnect",
                                                    "--stall-timeout", "2", "--duration", "16", "--window", "0",
                                                    "--out", stream.path, "--quiet"])
        defer { hlscap.send(SIGKILL) }
        #expect(first.process.waitForExit(timeoutSeconds: 20) != nil, "the first camera stops by itself")
        Thread.sleep(forTimeInterval: 3)
        let second = try RTSPCamera.start(["--port", String(port)])
        defer { second.stop() }
        let result = hlscap.finish(timeoutSeconds: 60)
        #expect(result.exitStatus == 0, "\(result.stderr)")
        #expect(result.stderr.contains("h264-aac") && result.stderr.split(separator: "\n").count == 2, "\(result.stderr)")
        #expect(result.stdout.contains("reconnected 1 time"), "\(result.stdout)")
        try ExternalTools.validateStream(stream)
        let text = try String(contentsOf: stream.appendingPathComponent("playlist.m3u8"), encoding: .utf8)
        #expect(text.components(separatedBy: "#EXT-X-DISCONTINUITY\n").count == 2, "\(text)")
        // Every picture decodes, and FFmpeg says nothing: its null output re-times them on a 1/30 s grid,
        // where the camera's last picture and the stand-in's first collided when the stand-in began the
        // moment the camera was found gone, a few milliseconds after its last picture.
        #expect(try ExternalTools.ffmpegDecodeErrors(path: stream.appendingPathComponent("playlist.m3u8").path).isEmpty)
        let decoded = try ExternalTools.run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                                        "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0",
                                                        stream.appendingPathComponent("playlist.m3u8").path])
        #expect(decoded.succeeded && decoded.stderr.isEmpty && (decoded.stdout.split(separator: "\n").first.flatMap { Int($0) } ?? 0) > 400,
                "\(decoded.stdout)\(decoded.stderr)")
    }
}

/// Tests/Tools/rtsp_server.py: GStreamer's RTSP server with live test streams, as an IP camera.
struct RTSPCamera {
    let process: BackgroundProcess
    let base: String

    /// Debian's python3, whose gi module the GStreamer RTSP server's introspection data belongs to.
    static let python = "/usr/bin/python3"

    static func start(_ arguments: [String] = []) throws -> RTSPCamera {
        let process = try BackgroundProcess(python, [ExternalTools.toolsDirectory.appendingPathComponent("rtsp_server.py").path]
                                            + arguments)
        let deadline = Date(timeIntervalSinceNow: 15)
        while Date() < deadline, process.isRunning {
            if let line = process.stdout.split(separator: "\n").first(where: { $0.hasPrefix("serving ") }) {
                return RTSPCamera(process: process, base: String(line.dropFirst("serving ".count)))
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        process.send(SIGKILL)
        throw ExternalToolError.failed(command: "rtsp_server.py", result: process.finish(timeoutSeconds: 1))
    }

    func url(_ mount: String) -> String { base + "/" + mount }

    func stop() {
        process.send(SIGTERM)
        _ = process.finish(timeoutSeconds: 5)
    }
}

/// A TCP port that accepts connections and never says a word: a camera that hangs.
final class SilentListener {
    let descriptor: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { _ = Glibc.close(descriptor) }

    /// A port nothing listens on: bound, read and released.
    static func freePort() throws -> Int {
        let listener = try SilentListener()
        defer { listener.close() }
        return listener.port
    }
}
