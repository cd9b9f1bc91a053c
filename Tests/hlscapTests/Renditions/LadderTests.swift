import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// Several renditions from one source (`--ladder`): aligned segments, honest master playlists, I-frame
/// playlists, and players that start, switch down when the network is slow, and keep playing.
enum Ladder {
    static let rungs = ["720p", "480p", "360p"]
    static let argument = "720p,480p,360p"
    /// Throttled to this, Chromium must leave the 720p rung (about 3 Mb/s) for a lower one.
    static let throttleKilobitsPerSecond = 1000
    /// Media seconds a player must keep playing after its last switch.
    static let secondsAfterSwitch = 3.0

    static func decodeEveryRendition(_ ladder: LadderStream) throws -> [String] {
        var problems: [String] = []
        for name in ladder.rungs + ladder.audioDirectories {
            let playlist = ladder.directory.appendingPathComponent(name).appendingPathComponent("playlist.m3u8").path
            let errors = try ExternalTools.ffmpegDecodeErrors(path: playlist)
            if !errors.isEmpty { problems.append("ffmpeg on \(name): \(errors)") }
            let gstreamer = try ExternalTools.gstreamerDecode(directory: ladder.directory.appendingPathComponent(name))
            if !gstreamer.ok { problems.append("GStreamer on \(name): \(gstreamer.report)") }
        }
        return problems
    }

    /// Chromium switched to a lower rung than 720p and kept playing after its last switch.
    static func switchedDown(_ report: String) -> Bool {
        let sizes = ExternalTools.playedSizes(report)
        return (sizes.heights.last ?? 720) < 720 && sizes.secondsAfterLastSwitch >= secondsAfterSwitch
    }
}

@Suite(.serialized) struct LiveLadderTests {
    static let runSeconds = 60.0
    static let chromiumLiveSeconds = 16.0

    @Test func sixtySecondsOfThreeRungsStayAlignedPlayAndSwitchDown() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let started = Date()
        let hlscap = try ExternalTools.startHlscap(["live", "--video", "test", "--audio", "test", "--ladder",
                                                    Ladder.argument, "--window", "6", "--out", stream.path, "--quiet"])
        var pollers: [(String, BackgroundProcess, URL)] = []
        for name in Ladder.rungs + ["audio"] {
            let copy = directory.appendingPathComponent("copy-" + name)
            pollers.append((name, try ExternalTools.startLivePoller(directory: stream.appendingPathComponent(name),
                                                                    copyDirectory: copy,
                                                                    timeoutSeconds: Self.runSeconds * 5), copy))
        }
        try #require(LiveStream.waitForSegments(3, in: stream.appendingPathComponent("360p"), of: hlscap),
                     "no rung playlist with 3 segments: \(hlscap.stderr)")
        #expect(FileManager.default.fileExists(atPath: stream.appendingPathComponent("master.m3u8").path))

        let playback = try ExternalTools.chromiumPlaysLive(directory: stream, playlist: "master.m3u8",
                                                           liveSeconds: Self.chromiumLiveSeconds,
                                                           timeoutSeconds: Self.chromiumLiveSeconds * 2)
        #expect(playback.ok, "Chromium did not play the growing ladder: \(playback.report)")
        let throttled = try ExternalTools.chromiumPlaysLive(
            directory: stream, playlist: "master.m3u8", liveSeconds: Self.chromiumLiveSeconds,
            throttleKilobitsPerSecond: Ladder.throttleKilobitsPerSecond, timeoutSeconds: Self.chromiumLiveSeconds * 2)
        #expect(throttled.ok && Ladder.switchedDown(throttled.report),
                "at \(Ladder.throttleKilobitsPerSecond) kb/s Chromium did not settle on a lower rung: \(throttled.report)")

        Thread.sleep(until: started.addingTimeInterval(Self.runSeconds))
        hlscap.send(SIGINT)
        let result = hlscap.finish(timeoutSeconds: LiveStream.stopSeconds)
        #expect(result.exitStatus == 0 && !result.timedOut, "\(result.stderr)")
        let counts = try #require(LiveStream.frameCounts(result.stdout), "\(result.stdout)")
        var segmentCounts: [Int] = []
        for (name, poller, copy) in pollers {
            let pollerResult = poller.finish(timeoutSeconds: LiveStream.stopSeconds)
            let report = try ExternalTools.livePollerReport(copyDirectory: copy)
            #expect(report.violations.isEmpty, "\(name): \(report.violations)")
            #expect(pollerResult.exitStatus == 0, "\(name): \(pollerResult.stdout)")
            segmentCounts.append(report.segments)
            // Every segment the poller saw, joined: what a viewer of the whole run would have received.
            let concatenated = try #require(report.concatenated)
            #expect(try ExternalTools.ffmpegDecodeErrors(path: concatenated).isEmpty, "\(name)")
            if name != "audio" {
                #expect(try ExternalTools.ffprobeFrameCount(path: concatenated) == counts.frames,
                        "\(name) holds every frame captured and not dropped")
            }
        }
        #expect(Set(segmentCounts).count == 1, "renditions hold \(segmentCounts) segments")
        // Every rung drops the same frames; a constant-rate encoder loses rate with every one, so the
        // master playlist's AVERAGE-BANDWIDTH holds only while the ladder keeps up.
        #expect(counts.dropped * 50 <= counts.frames + counts.dropped,
                "the ladder fell behind the camera: \(counts.dropped) frames dropped")

        let ladder = LadderStream(directory: stream, rungs: Ladder.rungs)
        try ExternalTools.validateStream(stream)
        let problems = try ladder.problems(checkingEveryIFrame: false)
        #expect(problems.isEmpty, "\(problems)")
        let decodeProblems = try Ladder.decodeEveryRendition(ladder)
        #expect(decodeProblems.isEmpty, "\(decodeProblems)")
        print("live ladder: \(counts.frames) frames, \(counts.dropped) dropped; \(try ladder.master())")
    }
}

@Suite(.serialized) struct SourceRungTests {
    /// `source` on a camera that is encoded anyway (the test source): the top rung is encoded at the
    /// capture size, said in one line, and the ladder is whole.
    @Test func aSourceRungThatCannotBeCopiedIsEncodedAtTheCaptureSize() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let result = try ExternalTools.runHlscap(["live", "--video", "test", "--audio", "test", "--size", "640x360",
                                                  "--ladder", "source,180p", "--no-realtime", "--duration", "5", "--out", stream.path,
                                                  "--quiet"], timeoutSeconds: 60)
        #expect(result.succeeded && result.stderr.contains("source rung is encoded at 640x360"), "\(result.stderr)")
        try ExternalTools.validateStream(stream)
        let ladder = LadderStream(directory: stream, rungs: ["360p", "180p"])
        let problems = try ladder.problems(checkingEveryIFrame: true)
        #expect(problems.isEmpty, "\(problems)")
    }
}

@Suite(.serialized) struct FileLadderTests {
    static let seconds = 20

    /// A 1080p30 recording, made once.
    static let recording: Result<URL, any Error> = Result { try makeRecording(width: 1920, height: 1080, seconds: seconds) }

    /// A `width`x`height` 30 fps H.264 recording of FFmpeg's test pattern with a tone, keyframes 2 s apart.
    static func makeRecording(width: Int, height: Int, seconds: Int) throws -> URL {
        let path = try PackagedStream.temporaryDirectory().appendingPathComponent("\(height)p.mp4")
        let result = try ExternalTools.run("ffmpeg", [
            "-hide_banner", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=\(width)x\(height):rate=30",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", String(seconds),
            "-c:v", "libx264", "-preset", "ultrafast", "-g", "60", "-pix_fmt", "yuv420p", "-c:a", "aac", path.path])
        guard result.succeeded else { throw ExternalToolError.failed(command: "ffmpeg \(height)p", result: result) }
        return path
    }

    @Test func aRecordingBecomesThreeAlignedRungsThatPlayAndSwitchDown() throws {
        let input = try Self.recording.get()
        let stream = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: stream) }
        let result = try ExternalTools.runHlscap(["file", input.path, "--ladder", Ladder.argument, "--out", stream.path])
        #expect(result.succeeded, "\(result.stderr)")
        #expect(result.stdout.hasPrefix(stream.path + "/master.m3u8: 10 segments"), "\(result.stdout)")

        let ladder = LadderStream(directory: stream, rungs: Ladder.rungs)
        try ExternalTools.validateStream(stream)
        let problems = try ladder.problems(checkingEveryIFrame: true)
        #expect(problems.isEmpty, "\(problems)")
        let master = try ladder.master()
        #expect(master.contains("#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio\""))
        #expect(master.contains("RESOLUTION=1280x720") && master.contains("RESOLUTION=854x480")
                && master.contains("RESOLUTION=640x360"))
        for name in Ladder.rungs {
            let size = try ExternalTools.ffprobeVideoSize(
                path: stream.appendingPathComponent(name).appendingPathComponent("playlist.m3u8").path)
            #expect("\(size.height)p" == name)
            let frames = try ExternalTools.ffprobeFrameCount(
                path: stream.appendingPathComponent(name).appendingPathComponent("playlist.m3u8").path)
            #expect(frames == Self.seconds * 30, "\(name)")
        }
        let decodeProblems = try Ladder.decodeEveryRendition(ladder)
        #expect(decodeProblems.isEmpty, "\(decodeProblems)")

        let playback = try ExternalTools.chromiumPlays(directory: stream, playlist: "master.m3u8")
        #expect(playback.ok, "\(playback.report)")
        let throttled = try ExternalTools.chromiumPlays(directory: stream, playlist: "master.m3u8",
                                                        throttleKilobitsPerSecond: Ladder.throttleKilobitsPerSecond,
                                                        rate: 1, timeoutSeconds: Double(Self.seconds) * 4)
        #expect(throttled.ok && Ladder.switchedDown(throttled.report), "\(throttled.report)")
    }

    @Test func aLadderRefusesASizeOrABitRateOfItsOwn() throws {
        let input = try Self.recording.get()
        for extra in [["--size", "640x360"], ["--video-bitrate", "1M"], ["--copy"]] {
            let result = try ExternalTools.runHlscap(["file", input.path, "--ladder", "720p", "--out", "/tmp/unused"] + extra)
            #expect(result.exitStatus == 64, "\(extra): \(result.stderr)")
        }
        // `source` copies a live input's own video; a file's rungs are all encoded.
        for ladder in ["720", "720p,720p@1M", "p", "720p@fast", "20000p", "source,360p", "source@1M,360p", "source,source"] {
            let result = try ExternalTools.runHlscap(["file", input.path, "--ladder", ladder, "--out", "/tmp/unused"])
            #expect(result.exitStatus == 64 && result.stderr.contains("--ladder"), "\(ladder): \(result.stderr)")
        }
    }
}

@Suite(.serialized) struct AudioLanguageTests {
    /// Two AAC tracks in one file, English then French: two audio renditions, English the default.
    @Test(arguments: [[], ["--transcode"]])
    func everyAudioTrackBecomesARenditionWithItsLanguage(extra: [String]) throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("two-languages.mp4")
        let made = try ExternalTools.run("ffmpeg", [
            "-hide_banner", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
            "-f", "lavfi", "-i", "sine=frequency=880:sample_rate=48000", "-t", "6", "-map", "0", "-map", "1", "-map", "2",
            "-c:v", "libx264", "-preset", "ultrafast", "-g", "60", "-c:a", "aac",
            "-metadata:s:a:0", "language=eng", "-metadata:s:a:1", "language=fra", input.path])
        try #require(made.succeeded, "\(made.stderr)")
        let stream = directory.appendingPathComponent("stream")
        let result = try ExternalTools.runHlscap(["file", input.path, "--out", stream.path] + extra)
        #expect(result.succeeded, "\(result.stderr)")

        try ExternalTools.validateStream(stream)
        let master = try String(contentsOf: stream.appendingPathComponent("master.m3u8"), encoding: .utf8)
        #expect(master.contains("NAME=\"English\",LANGUAGE=\"en\",DEFAULT=YES,AUTOSELECT=YES,CHANNELS=\"1\",URI=\"audio/eng/playlist.m3u8\"")
                || master.contains("NAME=\"English\",LANGUAGE=\"en\",DEFAULT=YES,AUTOSELECT=YES,CHANNELS=\"2\",URI=\"audio/eng/playlist.m3u8\""),
                "\(master)")
        #expect(master.contains("NAME=\"Français\",LANGUAGE=\"fr\",DEFAULT=NO"), "\(master)")
        #expect(master.contains("AUDIO=\"audio\"\nplaylist.m3u8\n"), "\(master)")
        for language in ["eng", "fra"] {
            let playlist = stream.appendingPathComponent("audio/\(language)/playlist.m3u8").path
            let errors = try ExternalTools.ffmpegDecodeErrors(path: playlist)
            #expect(errors.isEmpty, "\(language): \(errors)")
            let seconds = try ExternalTools.presentationSpanSeconds(path: playlist, stream: "a:0")
            #expect(abs(seconds - 6) < 0.1, "\(language) lasts \(seconds) s")
        }
        let playback = try ExternalTools.chromiumPlays(directory: stream, playlist: "master.m3u8")
        #expect(playback.ok, "\(playback.report)")

        let picked = directory.appendingPathComponent("picked")
        let one = try ExternalTools.runHlscap(["file", input.path, "--audio-track", "2", "--out", picked.path] + extra)
        #expect(one.succeeded, "\(one.stderr)")
        try ExternalTools.validateStream(picked)
        #expect(!FileManager.default.fileExists(atPath: picked.appendingPathComponent("audio").path),
                "one audio track stays in the one playlist")
        let missing = try ExternalTools.runHlscap(["file", input.path, "--audio-track", "3", "--out",
                                                   directory.appendingPathComponent("none").path] + extra)
        #expect(missing.exitStatus == 65 && missing.stderr.contains("no audio track 3"), "\(missing.stderr)")
    }
}

/// `--ladder` with `--publish` to the nginx origin: every rendition's files and playlists, the master
/// playlist last, and a stream at the origin that validates and decodes rung by rung.
@Suite(.serialized) struct LadderPublishTests {
    static func checkOrigin(_ origin: OriginFixture, path: String, rungs: [String]) throws {
        try ExternalTools.validateStream(origin.url + path + "master.m3u8")
        let master = String(decoding: try #require(origin.stored(path + "master.m3u8")), as: UTF8.self)
        for name in rungs + ["audio"] {
            #expect(master.contains("\(name)/playlist.m3u8"), "\(master)")
            let playlist = try origin.storedPlaylist(path + name + "/playlist.m3u8")
            #expect(playlist.endList && !playlist.segments.isEmpty, "\(name)")
            for segment in playlist.segments {
                #expect(origin.stored(path + name + "/" + segment.uri) != nil, "\(name)/\(segment.uri) at the origin")
            }
            let errors = try ExternalTools.ffmpegDecodeErrors(path: origin.url + path + name + "/playlist.m3u8")
            #expect(errors.isEmpty, "\(name): \(errors)")
        }
        for name in rungs {
            #expect(origin.stored(path + name + "/iframes.m3u8") != nil, "\(name)/iframes.m3u8 at the origin")
        }
        // access.log lines: time, method, URI, status, request bytes, request seconds.
        let log = try String(contentsOf: origin.directory.appendingPathComponent("logs/access.log"), encoding: .utf8)
        let lines: [[Substring]] = log.split(separator: "\n").map { $0.split(separator: " ") }
        let puts: [String] = lines.filter { $0.count > 2 && $0[1] == "PUT" }.map { String($0[2]) }
        let masterIndex = try #require(puts.firstIndex { $0.hasSuffix("/master.m3u8") })
        for name in rungs + ["audio"] {
            let first = puts.firstIndex { $0.hasSuffix("/\(name)/playlist.m3u8") }
            #expect(first.map { $0 < masterIndex } == true, "\(name)'s first playlist before the master")
        }
    }

    @Test func aLiveLadderReachesTheOriginWholeWithTheMasterLast() throws {
        let origin = try OriginFixture()
        defer { origin.stop() }
        let local = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: local) }
        // A window of 3 over 6 segments: the first three leave every playlist before the stop.
        let result = try ExternalTools.runHlscap(["live"] + LiveStream.testSource + [
            "--ladder", "360p,240p", "--duration", "12", "--window", "3", "--out", local.path,
            "--publish", origin.url + "ladder/"], timeoutSeconds: LiveStream.stopSeconds + 60)
        #expect(result.succeeded, "\(result.stderr)")
        #expect(result.stdout.contains("published to \(origin.url)ladder/"), "\(result.stdout)")
        try Self.checkOrigin(origin, path: "ladder/", rungs: ["360p", "240p"])
        // The origin is left with what its final playlists list: what left them was deleted there
        // once its retention time ended, within the drain.
        for name in ["360p", "240p", "audio"] {
            let playlist = try origin.storedPlaylist("ladder/\(name)/playlist.m3u8")
            #expect(playlist.segments.count == 3, "\(name)")
            let segments = try FileManager.default.contentsOfDirectory(
                atPath: origin.directory.appendingPathComponent("root/ladder/\(name)/seg").path)
            #expect(Set(segments.map { "seg/" + $0 }) == Set(playlist.segments.map(\.uri)), "\(name): \(segments)")
        }
    }

    @Test func aRecordedLadderReachesTheOriginWithoutALocalCopy() throws {
        let origin = try OriginFixture()
        defer { origin.stop() }
        let input = try FileLadderTests.recording.get()
        let result = try ExternalTools.runHlscap(["file", input.path, "--ladder", "480p,240p", "--publish",
                                                  origin.url + "vod/"])
        #expect(result.succeeded, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("\(origin.url)vod/master.m3u8: "), "\(result.stdout)")
        try Self.checkOrigin(origin, path: "vod/", rungs: ["480p", "240p"])
        let playback = try ExternalTools.chromiumPlays(url: origin.url + "vod/master.m3u8")
        #expect(playback.ok, "\(playback.report)")
    }
}
