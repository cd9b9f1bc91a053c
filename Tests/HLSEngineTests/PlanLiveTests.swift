import Foundation
import HLSEngine
import HLSKit
import HLSMedia
import HLSOutput
import Testing

/// Every rule of `hlscap live` between its options, decided by `LivePlan` without opening anything.
@Suite struct PlanLiveTests {
    static let url = "rtsp://camera.local/stream"
    static let file = "/recordings/clip.mp4"
    static let camera = CaptureInputs.Video.device("/dev/video0")

    static let refusals: [(LiveCase, PlanError)] = [
        (LiveCase("--listen with --video") { $0.listen = "rtmp://0.0.0.0:1935/live/key" }, .listenWithVideo),
        (LiveCase("--listen http") { $0.video = nil; $0.listen = "http://0.0.0.0:8080/" },
         .listenAddress("http://0.0.0.0:8080/")),
        (LiveCase("--listen srt without a port") { $0.video = nil; $0.listen = "srt://0.0.0.0" },
         .srtListenAddress("srt://0.0.0.0")),
        (LiveCase("--loop with the test source") { $0.loop = true }, .loopWithoutFile),
        (LiveCase("--loop with a URL") { $0.video = .media(url); $0.audio = nil; $0.loop = true }, .loopWithoutFile),
        (LiveCase("--reconnect with a file") { $0.video = .media(file); $0.audio = nil; $0.reconnect = true },
         .reconnectWithFile),
        (LiveCase("--reconnect with a file for sound") { $0.video = .media(url); $0.audio = .media(file); $0.reconnect = true },
         .reconnectWithFile),
        (LiveCase("--rtsp-transport sctp") { $0.rtspTransport = "sctp" }, .rtspTransport("sctp")),
        (LiveCase("--ca-file missing") { $0.video = .media("https://a.example/cam.m3u8"); $0.authorityFile = "/nonexistent/ca.pem" },
         .authorityFileUnreadable("/nonexistent/ca.pem")),
        (LiveCase("--ca-file with http") { $0.video = .media("http://a.example/cam.m3u8"); $0.authorityFile = "/etc/passwd" },
         .authorityFileWithoutHTTPS),
        (LiveCase("--ca-file with the test source") { $0.authorityFile = "/etc/passwd" }, .authorityFileWithoutHTTPS),
        (LiveCase("--stall-timeout 0.4") { $0.stallTimeoutSeconds = 0.4 }, .stallTimeout),
        (LiveCase("--stall-timeout 3601") { $0.stallTimeoutSeconds = 3601 }, .stallTimeout),
        (LiveCase("--stall-timeout unreadable") { $0.stallTimeoutSeconds = .nan }, .stallTimeout),
        (LiveCase("--transcode with the test source") { $0.transcode = true }, .transcodeWithoutInput),
        (LiveCase("--input-format with the test source") { $0.inputFormat = .h264 }, .inputFormatWithoutCamera),
        (LiveCase("--input-format with a URL") { $0.video = .media(url); $0.inputFormat = .mjpeg }, .inputFormatWithoutCamera),
        (LiveCase("nothing to capture") { $0.video = CaptureInputs.Video.none; $0.audio = CaptureInputs.Audio.none },
         .nothingToCapture),
        (LiveCase("--resume with --overwrite") { $0.resume = true; $0.overwrite = true }, .resumeAndOverwrite),
        (LiveCase("--fps 0") { $0.framesPerSecond = 0 }, .framesPerSecond),
        (LiveCase("--fps 241") { $0.framesPerSecond = 241 }, .framesPerSecond),
        (LiveCase("--encoder quicksync") { $0.encoder = "quicksync" }, .unknownEncoder("quicksync")),
        (LiveCase("--ladder with --video-bitrate") { $0.ladder = [LadderRung(height: 720)]; $0.videoBitrate = 1_000_000 },
         .ladderWithStreamBitrate),
        (LiveCase("--ladder with --video none") { $0.video = CaptureInputs.Video.none; $0.ladder = [LadderRung(height: 720)] },
         .ladderWithoutVideo),
        (LiveCase("--overlay-local-time alone") { $0.overlayLocalTime = true }, .needsOverlay("overlay-local-time")),
        (LiveCase("--overlay-font alone") { $0.overlayFont = "/tmp/font.ttf" }, .needsOverlay("overlay-font")),
        (LiveCase("--overlay without a time") { $0.overlay = "camera 1" }, .overlayFormat(.noPlaceholder("camera 1"))),
        (LiveCase("--overlay empty") { $0.overlay = "" }, .overlayFormat(.emptyFormat)),
        (LiveCase("--overlay-font missing") { $0.overlay = "clock"; $0.overlayFont = "/nonexistent/font.ttf" },
         .overlayUnavailable(.fontMissing("/nonexistent/font.ttf"))),
        (LiveCase("--overlay with --video none") { $0.video = CaptureInputs.Video.none; $0.overlay = "clock" },
         .overlayWithoutVideo),
        (LiveCase("--segment-duration 0.4") { $0.segmentMilliseconds = 400 }, .segmentDuration),
        (LiveCase("--segment-duration 61") { $0.segmentMilliseconds = 61_000 }, .segmentDuration),
        (LiveCase("--window 2") { $0.window = 2 }, .window(2)),
        (LiveCase("--window unreadable") { $0.window = -1 }, .window(-1)),
        (LiveCase("--dvr with --window") { $0.dvrSeconds = 7200; $0.window = 10 }, .dvrAndWindow),
        (LiveCase("--low-latency without --serve") { $0.lowLatency = true }, .lowLatencyWithoutServing),
        (LiveCase("--part-duration 0.09") { $0.serving = true; $0.lowLatency = true; $0.partMilliseconds = 90 },
         .partDuration),
        (LiveCase("--part-duration over a third") { $0.serving = true; $0.lowLatency = true; $0.partMilliseconds = 667 },
         .partDuration),
        (LiveCase("default part over a third of 1 s") { $0.serving = true; $0.lowLatency = true; $0.segmentMilliseconds = 1000 },
         .partDuration),
        (LiveCase("--part-duration alone") { $0.partMilliseconds = 200 }, .partDurationWithoutLowLatency),
        (LiveCase("no --out or --publish") { $0.outputDirectory = nil }, .noDestination),
        (LiveCase("--encrypt with --low-latency") { $0.serving = true; $0.lowLatency = true; $0.encryption.method = .aes128 },
         .encryptionWithLowLatency),
        (LiveCase("--encrypt cbcs with --resume") { $0.resume = true; $0.encryption.method = .sampleAES }, .sampleAESWithResume),
    ]

    @Test(arguments: refusals)
    func refusal(_ item: LiveCase, _ error: PlanError) {
        #expect(throws: error) { try item.request.plan() }
    }

    @Test func aesWithResumeAndPublishingWithoutDirectoryArePlanned() throws {
        var request = LiveCase("") { $0.resume = true; $0.encryption.method = .aes128 }.request
        #expect(try request.plan().configuration.resume)
        request.outputDirectory = nil
        request.publishing = true
        request.encryption.keyDirectory = "/var/keys"
        #expect(throws: Never.self) { try request.plan() }
    }

    /// Copy or encode, for each option that asks for an encoding of a URL's or a file's video, and a
    /// camera's copy, which a camera's size and rate do not stop (they choose its mode).
    static let encodings: [(LiveCase, copy: Bool, cameraCopy: Bool)] = [
        (LiveCase("a URL as it is") { $0.video = .media(url); $0.audio = nil }, true, true),
        (LiveCase("--record alone") { $0.video = .media(url); $0.audio = nil; $0.record = "/tmp/rec.mp4" }, true, true),
        (LiveCase("--transcode") { $0.video = .media(url); $0.transcode = true }, false, false),
        (LiveCase("--loop") { $0.video = .media(file); $0.loop = true }, false, false),
        (LiveCase("--reconnect") { $0.video = .media(url); $0.reconnect = true }, false, false),
        (LiveCase("--record-size") { $0.record = "/tmp/rec.mp4"; $0.recordSize = OutputSize(width: 640, height: 360) },
         false, false),
        (LiveCase("--record-codec") { $0.record = "/tmp/rec.mp4"; $0.recordCodec = .h264 }, false, false),
        (LiveCase("--record-bitrate") { $0.record = "/tmp/rec.mp4"; $0.recordBitrate = 4_000_000 }, false, false),
        (LiveCase("--video-bitrate") { $0.videoBitrate = 2_000_000 }, false, false),
        (LiveCase("--video-codec h264") { $0.videoCodec = .h264 }, false, false),
        (LiveCase("--overlay") { $0.overlay = "clock" }, false, false),
        (LiveCase("--size") { $0.size = OutputSize(width: 640, height: 360) }, false, true),
        (LiveCase("--fps") { $0.framesPerSecond = 25 }, false, true),
        (LiveCase("--ladder of heights") { $0.ladder = [LadderRung(height: 480), LadderRung(height: 360)] }, false, false),
        (LiveCase("--ladder source,360p") { $0.ladder = [.source, LadderRung(height: 360)] }, true, false),
    ]

    @Test(arguments: encodings)
    func copyOrEncode(_ item: LiveCase, copy: Bool, cameraCopy: Bool) throws {
        let plan = try item.request.plan()
        #expect(plan.inputs.copy == copy)
        #expect(plan.inputs.cameraCopy == cameraCopy)
    }

    @Test func aCameraIsCopiedUnlessAnEncodingIsAskedFor() throws {
        let plain = try LiveCase("") { $0.video = Self.camera; $0.audio = nil }.request.plan()
        #expect(plain.inputs.cameraCopy && plain.inputs.videoIsCamera && plain.inputs.audio == .device("default"))
        let sized = try LiveCase("") { $0.video = nil; $0.size = OutputSize(width: 640, height: 480); $0.framesPerSecond = 15 }
            .request.plan()
        #expect(sized.inputs.cameraCopy && sized.inputs.video == .firstCamera)
        #expect(sized.inputs.size == OutputSize(width: 640, height: 480) && sized.inputs.framesPerSecond == 15)
        let formatted = try LiveCase("") { $0.video = Self.camera; $0.inputFormat = .mjpeg; $0.transcode = true }.request.plan()
        #expect(formatted.inputs.inputFormat == .mjpeg && !formatted.inputs.cameraCopy)
    }

    @Test func aURLBringsItsOwnSoundUnlessTold() throws {
        let own = try LiveCase("") { $0.video = .media(Self.url); $0.audio = nil }.request.plan()
        #expect(own.inputs.audio == .media(Self.url))
        let told = try LiveCase("") { $0.video = .media(Self.url); $0.audio = CaptureInputs.Audio.none }.request.plan()
        #expect(told.inputs.audio == CaptureInputs.Audio.none)
        let test = try LiveCase("") { $0.audio = nil }.request.plan()
        #expect(test.inputs.audio == .device("default"))
    }

    @Test func inputOptionsReachTheInputs() throws {
        let plan = try LiveCase("") {
            $0.video = .media("https://a.example/cam.m3u8")
            $0.audio = nil
            $0.authorityFile = "/etc/passwd"
            $0.rtspTransport = "udp"
            $0.stallTimeoutSeconds = 0.5
            $0.reconnect = true
            $0.realtime = false
            $0.durationMilliseconds = 4000
        }.request.plan()
        #expect(plan.inputs.trust.authorityFile == "/etc/passwd")
        #expect(plan.inputs.rtspTransport == "udp" && plan.inputs.stallTimeoutSeconds == 0.5)
        #expect(plan.inputs.reconnect && !plan.inputs.realtime && plan.inputs.durationMilliseconds == 4000)
        #expect(plan.configuration.durationMilliseconds == 4000)
        let looped = try LiveCase("") { $0.video = .media(Self.url); $0.audio = .media(Self.file); $0.loop = true }
            .request.plan()
        #expect(looped.inputs.loop)
    }

    @Test func defaultsAreDecidedByThePlan() throws {
        let plan = try LiveCase("") { _ in }.request.plan()
        #expect(plan.configuration.size == OutputSize(width: 1280, height: 720) && plan.configuration.framesPerSecond == 30)
        #expect(plan.configuration.segmentMilliseconds == 2000 && plan.configuration.windowSize == 6)
        #expect(plan.configuration.videoCodec == .h264 && plan.configuration.audioBitrate == 128_000)
        #expect(plan.configuration.preset == "veryfast" && plan.configuration.partMilliseconds == nil)
        #expect(plan.encoders == [.software] && plan.listen == nil && plan.recording == nil && !plan.deltaUpdates)
        let given = try LiveCase("") {
            $0.audioBitrate = 96_000
            $0.preset = "fast"
            $0.videoCodec = .hevc
            $0.window = 0
        }.request.plan()
        #expect(given.configuration.audioBitrate == 96_000 && given.configuration.preset == "fast")
        #expect(given.configuration.videoCodec == .hevc && given.configuration.windowSize == 0)
    }

    @Test(arguments: [("x264", [VideoEncoderKind.software]), ("x265", [.software]), ("software", [.software]),
                      ("vaapi", [.vaapi]), ("nvenc", [.nvenc]), ("auto", VideoEncoderKind.hardware + [.software])])
    func encoderNames(_ name: String, _ kinds: [VideoEncoderKind]) throws {
        #expect(try LiveCase("") { $0.encoder = name }.request.plan().encoders == kinds)
    }

    /// `--dvr`: whole segments covering the duration, rounded up, at least three.
    @Test(arguments: [(7200, 2000, 3600), (7, 2000, 4), (3, 2000, 3), (1, 6000, 3), (60, 6000, 10), (61, 6000, 11)])
    func dvrWindow(seconds: Int, segmentMilliseconds: Int64, window: Int) throws {
        let plan = try LiveCase("") { $0.dvrSeconds = seconds; $0.segmentMilliseconds = segmentMilliseconds }.request.plan()
        #expect(plan.configuration.windowSize == window)
        #expect(plan.deltaUpdates)
    }

    /// `--part-duration`: from 0.1 s to a third of the segment duration; 0.334 s without it; 0.2 s for
    /// sub-second latency.
    @Test(arguments: [(nil, 2000, 334), (100, 2000, 100), (200, 2000, 200), (666, 2000, 666), (2000, 6000, 2000)]
          as [(Int64?, Int64, Int64)])
    func partDuration(asked: Int64?, segmentMilliseconds: Int64, part: Int64) throws {
        let plan = try LiveCase("") {
            $0.serving = true
            $0.lowLatency = true
            $0.partMilliseconds = asked
            $0.segmentMilliseconds = segmentMilliseconds
        }.request.plan()
        #expect(plan.configuration.partMilliseconds == part)
    }

    @Test func anRTMPAddressIsTheCallersListener() throws {
        let plan = try LiveCase("") { $0.video = nil; $0.audio = nil; $0.listen = "rtmp://0.0.0.0:1935/live/key" }
            .request.plan()
        guard case .rtmp(let address) = plan.listen else { Issue.record("\(String(describing: plan.listen))"); return }
        #expect(address.url == "rtmp://0.0.0.0:1935/live/key" && address.host == "0.0.0.0" && address.port == 1935)
        #expect(address.app == "live" && address.key == "key")
        #expect(plan.inputs.video == .media("rtmp://0.0.0.0:1935/live/key"))
        #expect(plan.inputs.audio == .media("rtmp://0.0.0.0:1935/live/key"))
        #expect(plan.notices.isEmpty)
    }

    @Test func anSRTAddressListensThroughLibavformat() throws {
        let plan = try LiveCase("") { $0.video = nil; $0.audio = nil; $0.listen = "srt://:9000?passphrase=0123456789" }
            .request.plan()
        #expect(plan.listen == .srt(address: "srt://0.0.0.0:9000"))
        #expect(plan.inputs.video == .media("srt://0.0.0.0:9000?passphrase=0123456789"))
        #expect(plan.inputs.audio == .media("srt://0.0.0.0:9000?passphrase=0123456789"))
        #expect(plan.inputs.listen?.name == "srt://0.0.0.0:9000" && plan.inputs.listen?.options == ["mode": "listener"])
        #expect(plan.notices == [.waitingForPublisher("srt://0.0.0.0:9000")])
        let silent = try LiveCase("") {
            $0.video = nil
            $0.audio = CaptureInputs.Audio.none
            $0.listen = "srt://127.0.0.1:9000"
        }.request.plan()
        #expect(silent.inputs.video == .media("srt://127.0.0.1:9000") && silent.inputs.audio == CaptureInputs.Audio.none)
    }

    /// What `--video` and `--audio` name: the test source, nothing, a URL or a regular file, else a device.
    @Test func inputNames() {
        #expect(CaptureInputs.Video("test") == .test && CaptureInputs.Video("none") == CaptureInputs.Video.none)
        #expect(CaptureInputs.Video("/dev/video0") == .device("/dev/video0"))
        #expect(CaptureInputs.Video("rtsp://cam/1") == .media("rtsp://cam/1"))
        #expect(CaptureInputs.Video("/etc/passwd") == .media("/etc/passwd"))
        #expect(CaptureInputs.Audio("test") == .test(clockPartsPerMillion: 0))
        #expect(CaptureInputs.Audio("test:+5000ppm") == .test(clockPartsPerMillion: 5000))
        #expect(CaptureInputs.Audio("test:-200ppm") == .test(clockPartsPerMillion: -200))
        #expect(CaptureInputs.Audio("test:fast") == .device("test:fast"))
        #expect(CaptureInputs.Audio("hw:1,0") == .device("hw:1,0") && CaptureInputs.Audio("none") == CaptureInputs.Audio.none)
        #expect(CaptureInputs.Audio("srt://0.0.0.0:9000") == .media("srt://0.0.0.0:9000"))
    }
}
