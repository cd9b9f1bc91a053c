import Foundation
import HLSEngine
import HLSKit
import HLSMedia
import HLSOutput
import HLSServer

/// One live stream run from its plan as `hlscap live` runs it: the store, the sources, the engine with its
/// observers, the server and publisher, and the closing summary. `hlscap run` runs one per stream of its file.
struct LiveRun {
    var plan: LivePlan
    var publish: PublishOptions?
    var serve: ServerOptions?
    var verbose: Bool
    var voice: Voice
    /// `hlscap run`'s one server, where the stream is served below `/NAME/` instead of by a server of its own.
    var site: SiteMount?
    /// Retention shared with the other streams' split recordings (`run`'s `recordings:`).
    var sharedRetention: SharedRecordingRetention?

    struct SiteMount {
        var server: SiteServer
        var name: String
        /// Where the index lists it: its place in the file.
        var order: Int
        /// The stream's own credentials; the whole server's open it too.
        var access: AccessControl?
    }

    /// Where the stream's lines go: `error` for stderr (after "hlscap: "), `output` for stdout.
    struct Voice: Sendable {
        var error: @Sendable (String) -> Void
        var output: @Sendable (String) -> Void

        static let plain = Voice(error: { printError($0) }, output: { print($0) })

        /// Every line starting with the stream's name, for a process that runs several.
        static func named(_ name: String) -> Voice {
            Voice(error: { printError("\(name): \($0)") }, output: { print("\(name): \($0)") })
        }
    }

    /// What the caller does around the engine: given it before it runs (signals, a status line), and told
    /// when its run returns and when the stream is done (summary said, server stopped). A caller that was
    /// told to stop before the engine exists says `runs: false`: nothing is started or written.
    struct Watch {
        var runs = true
        var engineEnded: () -> Void = {}
        var streamEnded: () -> Void = {}
    }

    /// Runs the stream until it ends; a stream that fails throws its error in the command line's words.
    func run(watch: (LiveEngine) -> Watch) throws {
        var mounted = false
        do {
            try runStream(watch: watch, mounted: &mounted)
        } catch {
            // On the one server's index, a stream that could not start is listed as stopped, with why.
            if let site, !mounted, let directory = plan.request.outputDirectory {
                let status = LiveStreamStatus(input: Self.input(plan), recordingFolder: nil)
                status.ended(reason: (error as? CommandError)?.message ?? "\(error)")
                // The name was checked with the file.
                try? site.server.add(site.name, server: StreamServer(root: directory, metrics: ServerMetrics(), access: site.access),
                                     status: status, order: site.order, replacing: true)
            }
            throw error
        }
    }

    /// `mounted` says whether the stream is on the one server: from then on its own status tells how it ends.
    private func runStream(watch: (LiveEngine) -> Watch, mounted: inout Bool) throws {
        // Before anything is captured or read: a store that refuses the stream is said at once.
        try publish?.checkTarget()
        var plan = plan
        do {
            PlanNotice.say(try plan.chooseEncoder(), to: voice.error)
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
            PlanNotice.say(plan.notices, to: voice.error)
            if case .rtmp(let address) = plan.listen {
                listener = try Self.listen(address, inputs: &plan.inputs, say: voice.error)
            }
            sources = try plan.inputs.makeSources()
            PlanNotice.say(try plan.resolve(opened: SourceFacts(sources)), to: voice.error)
            plan.configuration.record = try plan.recording?.configuration(startingAt: Date())
            plan.configuration.record?.split?.sharedRetention = sharedRetention
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
        let served = serve != nil || site != nil
        let metrics = ServerMetrics()
        if served { configuration.observers.append(MetricsObserver(metrics: metrics)) }
        let lowLatency = configuration.partMilliseconds.map { _ in LowLatencyStream(metrics: metrics) }
        if let lowLatency { configuration.observers.append(LowLatencyObserver(stream: lowLatency)) }
        // The recording's folder, served by time range below /recordings/.
        let recordingsFolder = configuration.record.map { $0.store.location }
        // Low-Latency HLS serves delta updates of its own; a regular stream with a DVR window gets them here.
        let deltaPlaylists = plan.deltaUpdates && lowLatency == nil && served ? DeltaPlaylists() : nil
        if let deltaPlaylists { configuration.observers.append(DeltaPlaylistsObserver(deltaPlaylists: deltaPlaylists)) }
        let entry = configuration.ladder == nil ? StreamLayout.playlistName : StreamLayout.masterPlaylistName
        let server = StreamServer(root: directory, lowLatency: lowLatency, metrics: metrics, access: site?.access,
                                  keyDirectory: plan.encryption?.keyDirectory, deltaPlaylists: deltaPlaylists,
                                  recordings: recordingsFolder.map(RecordingRanges.init(root:)), pictures: .decodedByFFmpeg())
        let http = try serve.map { try $0.start(server, entry: entry) }
        // On the one server's index, API and metrics: what the stream is doing, from what the engine says.
        let status = site.map { _ in LiveStreamStatus(input: Self.input(plan), recordingFolder: recordingsFolder) }
        if let status { configuration.observers.append(status) }
        if let site, let status {
            do {
                try site.server.add(site.name, server: server, status: status, order: site.order, replacing: true)
            } catch {
                throw CommandError(error.description, exitCode: .config)
            }
            mounted = true
        }
        let engine = LiveEngine(configuration: configuration, sources: sources, store: store,
                                messages: { [voice] message in
                                    voice.error(message.line)
                                    status?.heard(message, line: message.line)
                                })
        // A stream that ran is served three target durations more, so that viewers fetch the last
        // playlist, parts and segments before the server goes; one that did not start, not at all.
        var lingerSeconds = 0.0
        defer {
            if served { Thread.sleep(forTimeInterval: lingerSeconds) }
            http?.stop()
        }
        let watching = watch(engine)
        defer { watching.streamEnded() }
        guard watching.runs else {
            status?.ended(reason: nil)
            return
        }
        let outcome: LiveEngine.Outcome
        do {
            outcome = try engine.run()
        } catch {
            watching.engineEnded()
            let reported = commandError(error)
            status?.ended(reason: reported.message)
            throw reported
        }
        watching.engineEnded()
        status?.ended(reason: outcome.failure.map { "\($0)" })
        guard !outcome.endedAtOnce else { throw CommandError("", exitCode: .interrupted) }
        lingerSeconds = Double(configuration.segmentMilliseconds) * 3 / 1000
        let location = outputDirectory.map { $0 + "/" + entry }
            ?? publish!.origin.appendingPathComponent(entry).absoluteString
        voice.output("\(location): " + outcome.summary)
        if let recording = outcome.recording { voice.output(recording) }
        if let report = outcome.publishReport, let publish {
            voice.output(report.summaryLine(origin: publish.displayName))
            if !report.isComplete {
                throw report.incompleteError(origin: publish.displayName)
            }
        }
        // An object store gets the finished recording too, in parts.
        if let publish, publish.s3 != nil {
            for file in outcome.recordedFiles { voice.output(try publish.uploadRecording(file)) }
        }
        if let failure = outcome.failure {
            throw CommandError(streamFailure: failure, resumable: outputDirectory != nil)
        }
    }

    /// What the stream reads, as the one server's index and API name it.
    static func input(_ plan: LivePlan) -> String {
        if let listen = plan.request.listen { return "pushed to \(listen)" }
        switch plan.inputs.video {
        case .firstCamera: return "the first camera"
        case .device(let path): return path
        case .media(let location): return location
        case .test: return "test source"
        case .none: return plan.inputs.audioMedia ?? "audio only"
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
    private static func listen(_ address: RTMPListenAddress, inputs: inout CaptureInputs,
                               say: @escaping @Sendable (String) -> Void) throws -> RTMPListener {
        let listener: RTMPListener
        do {
            listener = try RTMPListener(address: address) { say($0) }
        } catch {
            throw CommandError(error.description, exitCode: .unavailable)
        }
        inputs.listen(at: address.url, through: listener.internalURL,
                      .init(name: listener.name, options: ["listen": "1"], handedOn: { listener.connectionsHandedOn }))
        say("waiting for a publisher on \(listener.name)")
        return listener
    }
}
