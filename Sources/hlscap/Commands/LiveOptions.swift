import HLSEngine
import HLSKit
import HLSMedia

/// `hlscap live`'s options read into the engine's request, nothing decided: the one reading of them, for the
/// command line and for the streams of `hlscap run`'s file, whose keys are these options' names.
struct LiveOptions {
    var request: LiveRequest
    var publish: PublishOptions?
    var serve: ServerOptions?
    var quiet: Bool
    var verbose: Bool

    init(arguments: inout ArgumentList) throws {
        var request = LiveRequest()
        request.video = try arguments.value("--video").map(CaptureInputs.Video.init)
        request.listen = try arguments.value("--listen")
        request.audio = try arguments.value("--audio").map(CaptureInputs.Audio.init)
        request.realtime = !arguments.flag("--no-realtime")
        request.reconnect = arguments.flag("--reconnect")
        request.loop = arguments.flag("--loop")
        request.rtspTransport = try arguments.value("--rtsp-transport")
        request.authorityFile = try arguments.value("--ca-file")
        // A number that does not read is out of every range: the plan refuses it in the range's words.
        request.stallTimeoutSeconds = try arguments.value("--stall-timeout").map { Double($0) ?? .nan }
        request.resume = arguments.flag("--resume")
        request.overwrite = arguments.flag("--overwrite")
        quiet = arguments.flag("--quiet")
        verbose = arguments.flag("--verbose")
        request.size = try arguments.value("--size").map { try Parse.size($0, option: "--size") }
        request.framesPerSecond = try arguments.value("--fps").map { Int($0) ?? 0 }
        request.videoBitrate = try arguments.value("--video-bitrate").map { try Parse.bitrate($0, option: "--video-bitrate") }
        request.videoCodec = try arguments.value("--video-codec").map { try Parse.videoCodec($0, option: "--video-codec") }
        request.encoder = try arguments.value("--encoder")
        request.ladder = try arguments.value("--ladder").map { try Parse.ladder($0, option: "--ladder") }
        request.record = try arguments.value("--record")
        request.recordSize = try arguments.value("--record-size").map { try Parse.size($0, option: "--record-size") }
        request.recordCodec = try arguments.value("--record-codec").map { try Parse.videoCodec($0, option: "--record-codec") }
        request.recordBitrate = try arguments.value("--record-bitrate").map { try Parse.bitrate($0, option: "--record-bitrate") }
        request.recordEvery = try arguments.value("--record-every")
        request.recordLocalTime = arguments.flag("--record-local-time")
        request.retention.keepSeconds = try arguments.value("--keep").map { try Parse.duration($0, option: "--keep") }
        request.retention.keepBytes = try arguments.value("--keep-size").map { try Parse.byteCount($0, option: "--keep-size") }
        request.retention.minimumFreeBytes = try arguments.value("--min-free")
            .map { try Parse.byteCount($0, option: "--min-free") }
        request.audioBitrate = try arguments.value("--audio-bitrate").map { try Parse.bitrate($0, option: "--audio-bitrate") }
        request.preset = try arguments.value("--preset")
        request.segmentMilliseconds = try arguments.value("--segment-duration")
            .map { try Parse.milliseconds($0, option: "--segment-duration") }
        request.window = try arguments.value("--window").map { Int($0) ?? -1 }
        request.dvrSeconds = try arguments.value("--dvr").map { try Parse.duration($0, option: "--dvr") }
        request.durationMilliseconds = try arguments.value("--duration").map { try Parse.milliseconds($0, option: "--duration") }
        publish = try PublishOptions(arguments: &arguments)
        request.publishing = publish != nil
        serve = try ServerOptions(arguments: &arguments, option: "--serve")
        request.serving = serve != nil
        request.lowLatency = arguments.flag("--low-latency")
        request.partMilliseconds = try arguments.value("--part-duration")
            .map { try Parse.milliseconds($0, option: "--part-duration") }
        request.outputDirectory = try arguments.value("--out")
        request.encryption = try EncryptionOptions.request(&arguments)
        request.overlay = try arguments.value("--overlay")
        request.overlayLocalTime = arguments.flag("--overlay-local-time")
        request.overlayFont = try arguments.value("--overlay-font")
        request.transcode = arguments.flag("--transcode")
        if let format = try arguments.value("--input-format") {
            guard let inputFormat = CameraInputFormat(rawValue: format) else {
                throw CommandError.usage("--input-format takes h264, mjpeg or raw")
            }
            request.inputFormat = inputFormat
        }
        self.request = request
    }
}
