import Foundation
import HLSEngine
import HLSKit
import HLSMedia
import HLSOutput
import HLSServer

/// `hlscap live --out DIR`: a camera and a microphone (or the built-in test source) to a rolling HLS stream.
/// It reads the options into a `LiveRequest`; the plan made from it decides what the stream is.
struct LiveCommand: Command {
    static let name = "live"
    static let summary = "capture a camera and a microphone into a live HLS stream"

    var plan: LivePlan
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
        do {
            plan = try request.plan()
        } catch {
            throw CommandError(error)
        }
        let extra = try arguments.positionals()
        guard extra.isEmpty else { throw CommandError.usage("unexpected argument \(extra[0])") }
    }

    func run() throws {
        // Before anything is captured or read: a store that refuses the stream is said at once.
        try publish?.checkTarget()
        var plan = plan
        do {
            PlanNotice.say(try plan.chooseEncoder())
        } catch {
            throw CommandError(error)
        }
        let outputDirectory = plan.request.outputDirectory
        let spoolDirectory = outputDirectory == nil ? try PublishOptions.makeSpoolDirectory() : nil
        defer { spoolDirectory.map(PublishOptions.removeSpoolDirectory) }
        let directory = outputDirectory ?? spoolDirectory!
        let store: DirectoryStore
        let sources: [any CaptureSource]
        // Kept for the whole run: it takes the publisher's connections.
        var listener: RTMPListener?
        defer { withExtendedLifetime(listener) {} }
        do {
            store = try DirectoryStore(root: directory)
            PlanNotice.say(plan.notices)
            if case .rtmp(let address) = plan.listen { listener = try Self.listen(address, inputs: &plan.inputs) }
            sources = try plan.inputs.makeSources()
            PlanNotice.say(try plan.resolve(opened: SourceFacts(sources)))
            plan.configuration.record = try plan.recording?.configuration(startingAt: Date())
        } catch {
            throw commandError(error)
        }
        var configuration = plan.configuration
        configuration.encryption = try EncryptionOptions.make(plan.encryption)
        configuration.publishKeys = plan.encryption?.publishKeys ?? false
        if let publish {
            configuration.makePublisher = { store, directory in publish.makeLivePublisher(store: store, directory: directory) }
        }
        if verbose { configuration.observers.append(SegmentLog()) }
        let metrics = ServerMetrics()
        if serve != nil { configuration.observers.append(MetricsObserver(metrics: metrics)) }
        let lowLatency = configuration.partMilliseconds.map { _ in LowLatencyStream(metrics: metrics) }
        if let lowLatency { configuration.observers.append(LowLatencyObserver(stream: lowLatency)) }
        // The recording's folder, served by time range below /recordings/.
        let recordingsFolder = configuration.record.map { $0.store.location }
        // Low-Latency HLS serves delta updates of its own; a regular stream with a DVR window gets them here.
        let deltaPlaylists = plan.deltaUpdates && lowLatency == nil && serve != nil ? DeltaPlaylists() : nil
        if let deltaPlaylists { configuration.observers.append(DeltaPlaylistsObserver(deltaPlaylists: deltaPlaylists)) }
        let entry = configuration.ladder == nil ? StreamLayout.playlistName : StreamLayout.masterPlaylistName
        let http = try serve.map {
            try $0.start(StreamServer(root: directory, lowLatency: lowLatency, metrics: metrics,
                                      keyDirectory: plan.encryption?.keyDirectory, deltaPlaylists: deltaPlaylists,
                                      recordings: recordingsFolder.map(RecordingRanges.init(root:)),
                                      pictures: .decodedByFFmpeg()), entry: entry)
        }
        let engine = LiveEngine(configuration: configuration, sources: sources, store: store,
                                messages: EngineMessage.print)
        // A stream that ran is served three target durations more, so that viewers fetch the last
        // playlist, parts and segments before the server goes; one that did not start, not at all.
        var lingerSeconds = 0.0
        defer {
            if let http {
                Thread.sleep(forTimeInterval: lingerSeconds)
                http.stop()
            }
        }
        // A second interrupt ends the run at once: `run` returns, and the clean-up above still happens.
        let signals = SignalHandling(onMark: { engine.startSegmentAtNextFrame() }) { second in
            if second { return engine.endAtOnce() }
            engine.requestStop()
        }
        defer { signals.cancel() }
        let status = quiet ? nil : StatusLine(statistics: engine.statistics)
        status?.start()
        let outcome: LiveEngine.Outcome
        do {
            outcome = try engine.run()
        } catch {
            status?.stop()
            throw commandError(error)
        }
        status?.stop()
        guard !outcome.endedAtOnce else { throw CommandError("", exitCode: .interrupted) }
        lingerSeconds = Double(configuration.segmentMilliseconds) * 3 / 1000
        let location = outputDirectory.map { $0 + "/" + entry }
            ?? publish!.origin.appendingPathComponent(entry).absoluteString
        print("\(location): " + outcome.summary)
        if let recording = outcome.recording { print(recording) }
        if let report = outcome.publishReport, let publish {
            print(report.summaryLine(origin: publish.displayName))
            if !report.isComplete {
                throw report.incompleteError(origin: publish.displayName)
            }
        }
        // An object store gets the finished recording too, in parts.
        if let publish, publish.s3 != nil {
            for file in outcome.recordedFiles { print(try publish.uploadRecording(file)) }
        }
        if let failure = outcome.failure {
            throw CommandError(streamFailure: failure, resumable: outputDirectory != nil)
        }
    }


    /// `error` as this command reports it: a missing default camera suggests the test source.
    private func commandError(_ error: any Error) -> CommandError {
        var error = error
        if let capture = error as? CaptureError { error = LiveError.device(capture) }
        if case LiveError.device(var capture) = error, capture.isMissing, plan.inputs.video == .firstCamera {
            capture.message += ", or give --video test for the built-in test source"
            error = LiveError.device(capture)
        }
        if case LiveError.device(var capture) = error, capture.isUntrusted {
            capture.message += " with --ca-file"
            error = LiveError.device(capture)
        }
        return CommandError(error)
    }

    /// `--listen rtmp://…`: hlscap's own listener checks the stream key and hands the publisher on to
    /// libavformat on a loopback port.
    private static func listen(_ address: RTMPListenAddress, inputs: inout CaptureInputs) throws -> RTMPListener {
        let listener: RTMPListener
        do {
            listener = try RTMPListener(address: address) { printError($0) }
        } catch {
            throw CommandError(error.description, exitCode: .unavailable)
        }
        inputs.listen(at: address.url, through: listener.internalURL,
                      .init(name: listener.name, options: ["listen": "1"], handedOn: { listener.connectionsHandedOn }))
        printError("waiting for a publisher on \(listener.name)")
        return listener
    }
}
