import Foundation
import HLSKit
import HLSMedia
import HLSOutput

/// What a live stream is, decided from a `LiveRequest`: copied or encoded, by which encoders, its rungs,
/// window, parts and recording, and the capture inputs that read it. Every rule between options is here,
/// each refusal a `PlanError`. What depends on the opened sources (a copied source's target duration, a
/// URL's own size and rate, the ladder's source rung) is decided by `resolve(opened:)` from their facts.
public struct LivePlan: Sendable {
    /// Ten frames at 30 fps: parts three times a second, PART-HOLD-BACK 1 s (Apple asks 3 part
    /// targets), and at 25 fps eight frames, 96 % of the target (the RFC wants 85 %).
    public static let defaultPartMilliseconds: Int64 = 334

    public let request: LiveRequest
    /// What the engine runs; the recording's store, the publisher and the observers are the caller's.
    public var configuration: LiveConfiguration
    public var inputs: CaptureInputs
    /// The encoder kinds to try, in order (several for auto, software last).
    public let encoders: [VideoEncoderKind]
    /// Where a publisher is waited for, when it is.
    public let listen: Listen?
    public let recording: RecordingPlan?
    public let encryption: EncryptionPlan?
    /// A DVR window: served playlists offer delta updates.
    public let deltaUpdates: Bool
    /// What the plan has to say before anything is opened.
    public private(set) var notices: [PlanNotice] = []

    /// How a pushed stream arrives.
    public enum Listen: Equatable, Sendable {
        /// hlscap's own RTMP listener at this address, which checks the stream key.
        case rtmp(RTMPListenAddress)
        /// libavformat's (libsrt's) listener at `address`, a passphrase in the URL checked by SRT's handshake.
        case srt(address: String)
    }

    public init(_ request: LiveRequest) throws(PlanError) {
        self.request = request
        var configuration = LiveConfiguration()
        var inputs = CaptureInputs()
        inputs.video = request.video ?? .firstCamera
        if let url = request.listen {
            guard request.video == nil else { throw .listenWithVideo }
            guard url.hasPrefix("rtmp://") || url.hasPrefix("srt://") else { throw .listenAddress(url) }
            inputs.video = .media(url)
        }
        // A URL or a file with video brings its own sound unless told otherwise.
        inputs.audio = request.audio ?? inputs.video.media.map(CaptureInputs.Audio.media) ?? .device("default")
        inputs.realtime = request.realtime
        inputs.reconnect = request.reconnect
        inputs.loop = request.loop
        let mediaInputs = [inputs.video.media, inputs.audioMedia].compactMap { $0 }
        if inputs.loop, !mediaInputs.contains(where: { !MediaSource.Configuration.isURL($0) }) { throw .loopWithoutFile }
        if inputs.reconnect, mediaInputs.contains(where: { !MediaSource.Configuration.isURL($0) }) {
            throw .reconnectWithFile
        }
        if let transport = request.rtspTransport {
            guard ["tcp", "udp"].contains(transport) else { throw .rtspTransport(transport) }
            inputs.rtspTransport = transport
        }
        if let authorityFile = request.authorityFile {
            guard FileManager.default.isReadableFile(atPath: authorityFile) else {
                throw .authorityFileUnreadable(authorityFile)
            }
            guard mediaInputs.contains(where: { $0.lowercased().hasPrefix("https:") }) else {
                throw .authorityFileWithoutHTTPS
            }
            inputs.trust.authorityFile = authorityFile
        }
        if let seconds = request.stallTimeoutSeconds {
            guard seconds >= 0.5, seconds <= 3600 else { throw .stallTimeout }
            inputs.stallTimeoutSeconds = seconds
        }
        guard !(request.resume && request.overwrite) else { throw .resumeAndOverwrite }
        configuration.resume = request.resume
        configuration.overwrite = request.overwrite
        if let size = request.size { configuration.size = size }
        if let framesPerSecond = request.framesPerSecond {
            guard (1...240).contains(framesPerSecond) else { throw .framesPerSecond }
            configuration.framesPerSecond = framesPerSecond
        }
        configuration.videoBitrate = request.videoBitrate
        configuration.videoCodec = request.videoCodec ?? .h264
        encoders = try request.encoder.map(Self.encoders) ?? [.software]
        configuration.ladder = request.ladder
        if request.ladder != nil, request.videoBitrate != nil { throw .ladderWithStreamBitrate }
        if request.ladder != nil, inputs.video == .none { throw .ladderWithoutVideo }
        recording = try RecordingPlan(request)
        configuration.audioBitrate = request.audioBitrate ?? configuration.audioBitrate
        configuration.preset = request.preset ?? configuration.preset
        configuration.segmentMilliseconds = request.segmentMilliseconds ?? configuration.segmentMilliseconds
        guard (500...60_000).contains(configuration.segmentMilliseconds) else { throw .segmentDuration }
        if let window = request.window {
            // RFC 8216bis 6.2.2: a live playlist keeps at least three target durations of segments.
            guard window == 0 || window >= 3 else { throw .window(window) }
            configuration.windowSize = window
        }
        if let dvrSeconds = request.dvrSeconds {
            guard request.window == nil else { throw .dvrAndWindow }
            configuration.windowSize = Self.dvrWindow(seconds: dvrSeconds,
                                                      segmentMilliseconds: configuration.segmentMilliseconds)
        }
        deltaUpdates = request.dvrSeconds != nil
        configuration.durationMilliseconds = request.durationMilliseconds
        inputs.durationMilliseconds = request.durationMilliseconds
        if request.lowLatency {
            guard request.serving else { throw .lowLatencyWithoutServing }
            let milliseconds = request.partMilliseconds ?? Self.defaultPartMilliseconds
            // A part under a tenth of a second carries too little to be worth a request; a part
            // longer than a third of the segment brings little latency.
            guard milliseconds >= 100, milliseconds * 3 <= configuration.segmentMilliseconds else {
                throw .partDuration
            }
            configuration.partMilliseconds = milliseconds
        } else if request.partMilliseconds != nil {
            throw .partDurationWithoutLowLatency
        }
        guard request.outputDirectory != nil || request.publishing else { throw .noDestination }
        encryption = try EncryptionPlan(request.encryption, outputDirectory: request.outputDirectory,
                                        publishing: request.publishing)
        if encryption != nil, request.lowLatency { throw .encryptionWithLowLatency }
        if encryption?.method == .sampleAES, request.resume { throw .sampleAESWithResume }
        configuration.overlay = try Self.overlay(request)
        if configuration.overlay != nil, inputs.video == .none { throw .overlayWithoutVideo }
        if request.transcode, inputs.video.media == nil, !inputs.videoIsCamera { throw .transcodeWithoutInput }
        if let inputFormat = request.inputFormat {
            guard inputs.videoIsCamera else { throw .inputFormatWithoutCamera }
            inputs.inputFormat = inputFormat
        }
        // Copy when nothing asks for an encoding of its own; a looped file is encoded, so that each repetition
        // joins the last without a seam (its copied sound would repeat the encoder's priming every time);
        // --reconnect encodes too: the stand-in pictures shown while a camera is away need an encoder; --overlay
        // draws on decoded pictures. A camera's --size and --fps choose its mode, so they do not stop its copy; a
        // camera's copy is not a ladder's source rung.
        let ladderEncodesAll = request.ladder.map { !$0.contains(where: \.isSource) } ?? false
        let encodes = request.transcode || request.loop || request.reconnect || recording?.encodes == true
            || request.videoBitrate != nil || request.videoCodec != nil || configuration.overlay != nil
        inputs.cameraCopy = !encodes && request.ladder == nil
        inputs.copy = !encodes && !ladderEncodesAll && request.size == nil && request.framesPerSecond == nil
        guard inputs.video != .none || inputs.audio != .none else { throw .nothingToCapture }
        inputs.size = configuration.size
        inputs.framesPerSecond = configuration.framesPerSecond
        listen = try request.listen.map { url throws(PlanError) in try Self.listen(url, inputs: &inputs) }
        if case .srt(let address) = listen { notices.append(.waitingForPublisher(address)) }
        self.configuration = configuration
        self.inputs = inputs
    }

    /// An encoder's name: one kind, or for auto every hardware kind and then software.
    static func encoders(_ name: String) throws(PlanError) -> [VideoEncoderKind] {
        switch name {
        case "x264", "x265", "software": return [.software]
        case "auto": return VideoEncoderKind.hardware + [.software]
        default:
            guard let kind = VideoEncoderKind(rawValue: name) else { throw .unknownEncoder(name) }
            return [kind]
        }
    }

    /// The window that keeps `seconds` of segments listed: whole segments, rounded up, and at least three
    /// (RFC 8216bis 6.2.2: at least three target durations).
    public static func dvrWindow(seconds: Int, segmentMilliseconds: Int64) -> Int {
        let milliseconds = Int64(seconds) * 1000
        return max(3, Int((milliseconds + segmentMilliseconds - 1) / segmentMilliseconds))
    }

    /// The time overlay asked for: a bad format refused, and a missing font or a libavfilter without
    /// drawtext said as unavailable.
    static func overlay(_ request: LiveRequest) throws(PlanError) -> TimeOverlay? {
        guard let format = request.overlay else {
            if request.overlayLocalTime { throw .needsOverlay("overlay-local-time") }
            if request.overlayFont != nil { throw .needsOverlay("overlay-font") }
            return nil
        }
        let overlay: TimeOverlay
        do {
            overlay = try TimeOverlay(format: format == "clock" ? TimeOverlay.clockFormat : format,
                                      localTime: request.overlayLocalTime,
                                      fontPath: request.overlayFont ?? TimeOverlay.defaultFontPath)
        } catch {
            throw .overlayFormat(error)
        }
        do {
            try overlay.checkAvailable()
        } catch {
            throw .overlayUnavailable(error)
        }
        return overlay
    }

    /// A listen address: RTMP is taken by the caller's listener (it opens a socket); an SRT address becomes
    /// libavformat's listener on the inputs.
    static func listen(_ url: String, inputs: inout CaptureInputs) throws(PlanError) -> Listen {
        guard url.hasPrefix("srt://") else { return .rtmp(try RTMPListenAddress(url)) }
        guard let components = URLComponents(string: url), let port = components.port else {
            throw .srtListenAddress(url)
        }
        let host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? "0.0.0.0"
        let address = "srt://\(host):\(port)"
        let query = components.query.map { "?" + $0 } ?? ""
        inputs.listen(at: url, through: address + query, .init(name: address, options: ["mode": "listener"]))
        return .srt(address: address)
    }
}

/// `--listen rtmp://ADDR:PORT/APP/KEY`: where hlscap's RTMP listener binds and the one stream it takes.
public struct RTMPListenAddress: Equatable, Sendable {
    /// The URL as given, for messages about binding it.
    public var url: String
    public var host: String
    public var port: Int
    public var app: String
    /// The stream key, with the URL's query if it has one.
    public var key: String

    public static let defaultPort = 1935

    public init(_ url: String) throws(PlanError) {
        guard let components = URLComponents(string: url), components.scheme == "rtmp", let host = components.host else {
            throw .rtmpListenAddress(url)
        }
        let path = components.path.split(separator: "/", omittingEmptySubsequences: true)
        guard path.count == 2 else { throw .rtmpListenPath(url) }
        self.url = url
        self.host = host
        port = components.port ?? Self.defaultPort
        app = String(path[0])
        key = String(path[1]) + (components.query.map { "?" + $0 } ?? "")
    }
}
