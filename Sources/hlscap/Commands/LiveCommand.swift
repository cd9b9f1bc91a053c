import Foundation
import HLSKit
import HLSMedia

/// `hlscap live --out DIR`: a camera and a microphone (or the built-in test source) to a rolling HLS stream.
struct LiveCommand: Command {
    static let name = "live"
    static let summary = "capture a camera and a microphone into a live HLS stream"
    static let help = """
        Usage: hlscap live --out DIR [options]

        Captures a V4L2 camera and an ALSA microphone (or the built-in test source), encodes H.264
        and AAC, and writes a live HLS stream: DIR/init.mp4, DIR/seg/000001.m4s …, and a rolling
        DIR/playlist.m3u8 that lists only segments already stored. Stop with Ctrl-C (or SIGTERM, or
        --duration): the last segment is written and the playlist gets EXT-X-ENDLIST. A second
        Ctrl-C exits at once, leaving a consistent playlist.

        Sources:
          --video DEV               /dev/videoN, "test" (moving pattern with a clock) or "none"
                                    (default: the first V4L2 capture device)
          --audio PCM               an ALSA capture PCM ("default", "hw:1,0", a name), "test" (a tone)
                                    or "none" (default: "default")
          --size WxH                picture size (default 1280x720)
          --fps N                   frames per second (default 30)
          --no-realtime             with the test source: generate as fast as possible

        Encoding:
          --video-bitrate RATE      H.264 bit rate, e.g. 2500k or 3M (default: from size and rate)
          --audio-bitrate RATE      AAC bit rate (default 128k)
          --preset NAME             x264 preset (default veryfast)

        Stream:
          --out DIR                 directory for the stream (created if missing)
          --segment-duration S      segment length in seconds (default 2)
          --window N                segments in the playlist, at least 3 (default 6); 0 keeps all (EVENT)
          --duration S              stop after S seconds
          --resume                  continue the stream already in DIR (after a stop or a crash)
          --overwrite               replace a stream already in DIR
          --quiet                   no status line
          --verbose                 a line per published segment
        \(PublishOptions.help)
          --help                    show this help

        Exit status: 0 stopped cleanly, 64 usage, 66 device missing, 73 DIR cannot be created or
        holds a stream, 74 write error, device failure or a file that did not reach the origin,
        130 second interrupt.
        """

    var settings: LivePipeline.Settings

    init(arguments: inout ArgumentList) throws {
        var settings = LivePipeline.Settings()
        settings.video = try arguments.value("--video").map(LivePipeline.VideoInput.init) ?? .firstCamera
        settings.audio = try arguments.value("--audio").map(LivePipeline.AudioInput.init) ?? .device("default")
        settings.realtime = !arguments.flag("--no-realtime")
        settings.resume = arguments.flag("--resume")
        settings.overwrite = arguments.flag("--overwrite")
        guard !(settings.resume && settings.overwrite) else {
            throw CommandError.usage("--resume and --overwrite exclude each other")
        }
        settings.quiet = arguments.flag("--quiet")
        settings.verbose = arguments.flag("--verbose")
        if let size = try arguments.value("--size") {
            settings.size = try Parse.size(size, option: "--size")
        }
        if let fps = try arguments.value("--fps") {
            guard let value = Int(fps), (1...240).contains(value) else {
                throw CommandError.usage("--fps takes a whole number of frames per second from 1 to 240")
            }
            settings.framesPerSecond = value
        }
        settings.videoBitrate = try arguments.value("--video-bitrate").map { try Parse.bitrate($0, option: "--video-bitrate") }
        settings.audioBitrate = try arguments.value("--audio-bitrate")
            .map { try Parse.bitrate($0, option: "--audio-bitrate") } ?? settings.audioBitrate
        settings.preset = try arguments.value("--preset") ?? settings.preset
        settings.segmentMilliseconds = try arguments.value("--segment-duration")
            .map { try Parse.milliseconds($0, option: "--segment-duration") } ?? settings.segmentMilliseconds
        guard (500...60_000).contains(settings.segmentMilliseconds) else {
            throw CommandError.usage("--segment-duration must be between 0.5 and 60 seconds")
        }
        if let window = try arguments.value("--window") {
            // RFC 8216bis 6.2.2: a live playlist keeps at least three target durations of segments.
            guard let value = Int(window), value == 0 || value >= 3 else {
                throw CommandError.usage("--window takes 0 (keep all) or at least 3 segments")
            }
            settings.windowSize = value
        }
        settings.durationMilliseconds = try arguments.value("--duration")
            .map { try Parse.milliseconds($0, option: "--duration") }
        settings.publish = try PublishOptions(arguments: &arguments)
        settings.outputDirectory = try arguments.value("--out")
        guard settings.outputDirectory != nil || settings.publish != nil else {
            throw CommandError.usage("--out DIR or --publish URL is required: where the stream goes")
        }
        let extra = try arguments.positionals()
        guard extra.isEmpty else { throw CommandError.usage("unexpected argument \(extra[0])") }
        guard settings.video != .none || settings.audio != .none else {
            throw CommandError.usage("--video none and --audio none leave nothing to capture")
        }
        self.settings = settings
    }

    func run() throws {
        var settings = settings
        let spoolDirectory = settings.outputDirectory == nil ? try PublishOptions.makeSpoolDirectory() : nil
        defer { spoolDirectory.map { try? FileManager.default.removeItem(atPath: $0) } }
        settings.spooled = spoolDirectory != nil
        settings.outputDirectory = settings.outputDirectory ?? spoolDirectory
        try LivePipeline(settings: settings).run()
    }
}
