import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `hlscap live --listen rtmp://…/APP/KEY | srt://…`: publishers push to hlscap (ffmpeg as OBS would): one
/// at a time, with the right stream key, and the stream ends cleanly when the publisher leaves.
@Suite(.serialized) struct ListenInputTests {
    private static let clip = ExternalTools.repositoryRoot.appendingPathComponent("Fixtures/flash-beep.mp4").path

    /// ffmpeg pushing the flash-and-beep clip, `loops` extra times, to `url` as FLV (RTMP) or MPEG-TS (SRT).
    private static func publish(_ url: String, loops: Int = 0) throws -> BackgroundProcess {
        let format = url.hasPrefix("rtmp") ? "flv" : "mpegts"
        return try BackgroundProcess("ffmpeg", ["-nostdin", "-v", "error", "-re", "-stream_loop", String(loops), "-i", clip,
                                                "-c", "copy", "-f", format, url])
    }

    private static func waitFor(_ text: String, in process: BackgroundProcess, seconds: Double = 20) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if process.stderr.contains(text) { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return false
    }

    @Test func anRTMPPublisherWithTheKeyIsTheStreamAndOthersAreRefused() throws {
        let port = try SilentListener.freePort()
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let hlscap = try ExternalTools.startHlscap(["live", "--listen", "rtmp://127.0.0.1:\(port)/live/door-7f3a",
                                                    "--window", "0", "--out", stream.path, "--quiet"])
        defer { hlscap.send(SIGKILL) }
        #expect(Self.waitFor("waiting for a publisher on rtmp://127.0.0.1:\(port)/live/…", in: hlscap))
        // A wrong key and a wrong application are refused, each with a line, and the stream goes on waiting.
        let wrongKey = try Self.publish("rtmp://127.0.0.1:\(port)/live/guess").finish(timeoutSeconds: 20)
        #expect(!wrongKey.succeeded)
        let wrongApp = try Self.publish("rtmp://127.0.0.1:\(port)/other/door-7f3a").finish(timeoutSeconds: 20)
        #expect(!wrongApp.succeeded)
        #expect(hlscap.stderr.contains("wrong stream key") && hlscap.stderr.contains("application “other”"), "\(hlscap.stderr)")
        #expect(!hlscap.stderr.contains("guess"), "a key tried is never written out")
        // The publisher with the key is the stream; a second one while it is on is refused.
        let publisher = try Self.publish("rtmp://127.0.0.1:\(port)/live/door-7f3a")
        defer { publisher.send(SIGKILL) }
        Thread.sleep(forTimeInterval: 2)
        let second = try Self.publish("rtmp://127.0.0.1:\(port)/live/door-7f3a").finish(timeoutSeconds: 20)
        #expect(!second.succeeded && hlscap.stderr.contains("refused a second publisher"), "\(hlscap.stderr)")
        _ = publisher.finish(timeoutSeconds: 30)
        // It left: the stream ends cleanly.
        let result = hlscap.finish(timeoutSeconds: 30)
        #expect(result.exitStatus == 0 && result.stdout.contains("video copied"), "\(result.stdout)\(result.stderr)")
        try ExternalTools.validateStream(stream)
        let playlist = try LiveStream.playlist(in: stream)
        #expect(playlist.endList && playlist.segments.count >= 2, "\(playlist.render())")
        let sync = try ExternalTools.avSync(path: stream.appendingPathComponent("playlist.m3u8").path,
                                            maxOffsetMilliseconds: 10, minimumPairs: 3)
        #expect(sync.ok, "\(sync.report)")
    }

    /// GStreamer's `rtmp2sink` pushing the flash-and-beep clip as its own client sends it: FLV stamped in
    /// whole milliseconds, the sound's priming frame stamped 0 beside the first. Copied, every AAC frame
    /// lasts 1,024 samples (not the 1,008 or 1,056 of its stamps), in sync, and FFmpeg decodes it without a word.
    @Test func anRTMPPushFromGStreamerIsCopiedFrameExactAndInSync() throws {
        let port = try SilentListener.freePort()
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let hlscap = try ExternalTools.startHlscap(["live", "--listen", "rtmp://127.0.0.1:\(port)/live/cam",
                                                    "--window", "0", "--out", stream.path, "--quiet"])
        defer { hlscap.send(SIGKILL) }
        #expect(Self.waitFor("waiting for a publisher", in: hlscap))
        let publisher = try BackgroundProcess("gst-launch-1.0", [
            "-q", "filesrc", "location=\(Self.clip)", "!", "qtdemux", "name=d", "d.video_0", "!", "queue", "!", "h264parse",
            "!", "flvmux", "name=m", "streamable=true", "!", "rtmp2sink", "location=rtmp://127.0.0.1:\(port)/live/cam",
            "d.audio_0", "!", "queue", "!", "aacparse", "!", "m.",
        ])
        defer { publisher.send(SIGKILL) }
        _ = publisher.finish(timeoutSeconds: 30)
        let result = hlscap.finish(timeoutSeconds: 30)
        #expect(result.exitStatus == 0 && result.stdout.contains("video copied"), "\(result.stdout)\(result.stderr)")
        try ExternalTools.validateStream(stream)
        let playlist = stream.appendingPathComponent("playlist.m3u8").path
        // The spacing of the sound's timestamps (ffprobe's packet durations are the codec's frame size).
        let times = try ExternalTools.run("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries",
                                                      "packet=pts", "-of", "csv=p=0", playlist])
        let stamps = times.stdout.split(separator: "\n").compactMap { Int64($0) }
        let spacings = Set(zip(stamps.dropFirst(), stamps).map { $0 - $1 })
        #expect(times.succeeded && stamps.count > 200 && spacings == [1024], "AAC frames \(spacings) apart")
        #expect(try ExternalTools.ffmpegDecodeErrors(path: playlist).isEmpty)
        let sync = try ExternalTools.avSync(path: playlist, maxOffsetMilliseconds: 10, minimumPairs: 3)
        #expect(sync.ok, "\(sync.report)")
    }

    /// With --reconnect, the publisher leaving is waited out: the next one goes on after a discontinuity.
    @Test func withReconnectTheNextPublisherContinuesTheStream() throws {
        let port = try SilentListener.freePort()
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let hlscap = try ExternalTools.startHlscap(["live", "--listen", "rtmp://127.0.0.1:\(port)/live/cam", "--reconnect",
                                                    "--window", "0", "--out", stream.path, "--quiet"])
        defer { hlscap.send(SIGKILL) }
        #expect(Self.waitFor("waiting for a publisher", in: hlscap))
        for _ in 0..<2 {
            let publisher = try Self.publish("rtmp://127.0.0.1:\(port)/live/cam")
            _ = publisher.finish(timeoutSeconds: 30)
            Thread.sleep(forTimeInterval: 2)
        }
        hlscap.send(SIGINT)
        let result = hlscap.finish(timeoutSeconds: 60)
        #expect(result.exitStatus == 0, "\(result.stderr)")
        try ExternalTools.validateStream(stream)
        let text = try String(contentsOf: stream.appendingPathComponent("playlist.m3u8"), encoding: .utf8)
        #expect(text.contains("#EXT-X-DISCONTINUITY"), "\(text)")
        let seconds = try ExternalTools.presentationSpanSeconds(path: stream.appendingPathComponent("playlist.m3u8").path,
                                                                stream: "v:0")
        #expect(seconds > 9, "\(seconds) s from two 6 s publishers")
    }

    /// SRT: the passphrase in the URL is the key, checked by SRT's own handshake.
    @Test func anSRTPublisherWithThePassphraseIsTheStream() throws {
        let port = try SilentListener.freePort()
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let hlscap = try ExternalTools.startHlscap(["live", "--listen", "srt://127.0.0.1:\(port)?passphrase=0123456789ab",
                                                    "--window", "0", "--out", stream.path, "--quiet"])
        defer { hlscap.send(SIGKILL) }
        #expect(Self.waitFor("waiting for a publisher on srt://127.0.0.1:\(port)", in: hlscap))
        #expect(!hlscap.stderr.contains("0123456789ab"), "the passphrase is never written out")
        let wrong = try Self.publish("srt://127.0.0.1:\(port)?passphrase=wrongwrongwrong").finish(timeoutSeconds: 30)
        #expect(!wrong.succeeded)
        let publisher = try Self.publish("srt://127.0.0.1:\(port)?passphrase=0123456789ab")
        defer { publisher.send(SIGKILL) }
        _ = publisher.finish(timeoutSeconds: 30)
        let result = hlscap.finish(timeoutSeconds: 30)
        #expect(result.exitStatus == 0 && result.stdout.contains("video copied"), "\(result.stdout)\(result.stderr)")
        try ExternalTools.validateStream(stream)
    }

    /// GStreamer's `srtsink` sends each MPEG-TS packet as its own 188-byte message (mpegtsmux's default).
    /// From an encoder that repeats its parameter sets at each keyframe, as live ones do, the push is
    /// copied, in sync, and FFmpeg decodes it without a word. When the sender's parameter sets come only
    /// once and are lost with the start of the stream, the stream cannot start: the publisher leaving then
    /// is said as the network failure it is, never as a file to copy again.
    @Test func anSRTPushFromGStreamerIsCopiedInSync() throws {
        let port = try SilentListener.freePort()
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func push(repeatingParameterSets: Bool, into stream: URL) throws -> ProcessResult {
            let hlscap = try ExternalTools.startHlscap(["live", "--listen", "srt://127.0.0.1:\(port)", "--window", "0",
                                                        "--out", stream.path, "--quiet"])
            defer { hlscap.send(SIGKILL) }
            #expect(Self.waitFor("waiting for a publisher", in: hlscap))
            let publisher = try BackgroundProcess("gst-launch-1.0", [
                "-q", "filesrc", "location=\(Self.clip)", "!", "qtdemux", "name=d", "d.video_0", "!", "queue", "!",
                "h264parse", "config-interval=\(repeatingParameterSets ? -1 : 0)", "!", "mpegtsmux", "name=m", "!",
                "srtsink", "uri=srt://127.0.0.1:\(port)", "d.audio_0", "!", "queue", "!", "aacparse", "!", "m.",
            ])
            defer { publisher.send(SIGKILL) }
            _ = publisher.finish(timeoutSeconds: 30)
            return hlscap.finish(timeoutSeconds: 30)
        }
        let stream = directory.appendingPathComponent("stream")
        let result = try push(repeatingParameterSets: true, into: stream)
        #expect(result.exitStatus == 0 && result.stdout.contains("video copied"), "\(result.stdout)\(result.stderr)")
        try ExternalTools.validateStream(stream)
        let playlist = stream.appendingPathComponent("playlist.m3u8").path
        #expect(try ExternalTools.ffmpegDecodeErrors(path: playlist).isEmpty)
        let sync = try ExternalTools.avSync(path: playlist, maxOffsetMilliseconds: 10, minimumPairs: 3)
        #expect(sync.ok, "\(sync.report)")
        let once = try push(repeatingParameterSets: false, into: directory.appendingPathComponent("once"))
        #expect(once.exitStatus == 69 && once.stderr.contains("the connection failed")
                    && once.stderr.contains("check the network") && !once.stderr.contains("copy the file"), "\(once.stderr)")
    }

    @Test func listenAddressesThatCannotBeUsedAreRefused() throws {
        let port = try SilentListener.freePort()
        let cases: [([String], Int32, String)] = [
            (["--listen", "http://127.0.0.1:\(port)/"], 64, "give rtmp://"),
            (["--listen", "rtmp://127.0.0.1:\(port)/live"], 64, "the path is /APP/KEY"),
            (["--listen", "rtmp://127.0.0.1:\(port)/live/k", "--video", "test"], 64, "exclude each other"),
        ]
        for (arguments, status, message) in cases {
            let run = try ExternalTools.runHlscap(["live"] + arguments + ["--out", "/tmp/hlscap-never"], timeoutSeconds: 20)
            #expect(run.exitStatus == status && run.stderr.contains(message), "\(arguments): \(run.exitStatus) \(run.stderr)")
        }
        // A port another program holds: 69, naming it.
        let holder = try SilentListener()
        defer { holder.close() }
        let taken = try ExternalTools.runHlscap(["live", "--listen", "rtmp://127.0.0.1:\(holder.port)/live/k",
                                                 "--out", "/tmp/hlscap-never"], timeoutSeconds: 20)
        #expect(taken.exitStatus == 69 && taken.stderr.contains("cannot listen on 127.0.0.1:\(holder.port)"), "\(taken.stderr)")
    }
}
