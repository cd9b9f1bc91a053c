import Foundation
import HLSEngine
import HLSServer

/// `hlscap run FILE`: every stream of a YAML file in one process, each run as `hlscap live` runs one, until
/// SIGINT or SIGTERM. `--check` checks the file and says what each stream would be.
struct RunCommand: Command {
    static let name = "run"
    static let summary = "run every stream of a YAML file in one process"
    static let help = """
        Usage: hlscap run FILE
               hlscap run --check FILE

        Runs every stream that FILE (YAML) lists, in one process, until Ctrl-C or SIGTERM; each stream
        then ends as hlscap live ends one: its last segment, EXT-X-ENDLIST, its recording closed. A
        stream's keys are hlscap live's options without their dashes (video, audio, ladder, record,
        keep, publish, low-latency, encrypt …), with the same meanings and defaults; defaults: holds
        what every stream starts from, out: the folder under which each stream writes OUT/NAME.
        A stream that fails ends alone, its error on a line that starts with its name; the others go
        on. A stream whose folder holds a stream (after a stop, a crash or kill -9) continues it, as
        hlscap live --resume does. A second Ctrl-C ends every stream at once. SIGUSR1 starts a new
        segment at the next frame in every stream. SIGHUP reads FILE again: new streams start,
        removed ones end, changed ones restart, the others are not touched, and a FILE that does not
        check is refused while the streams go on. With server: listen, one server serves every
        stream below /NAME/, an index of them at /, /api/v1/streams and /metrics. The file's
        format: docs/run.md.

        Options:
          --check                   check FILE and print one line per stream (its input, its folder,
                                    what it does); start nothing
          --help                    show this help

        Exit status: 0 stopped cleanly (or FILE checks), 66 FILE cannot be read, 78 FILE does not
        check (each problem on a line FILE:LINE:COLUMN: …, and nothing is started), else the worst
        status of a stream that failed, as hlscap live gives it (130 second interrupt).
        """

    var path: String
    var checkOnly: Bool

    init(arguments: inout ArgumentList) throws {
        checkOnly = arguments.flag("--check")
        path = try arguments.onePositional("run", what: "the YAML file that lists the streams")
    }

    func run() throws {
        let configuration: RunConfiguration
        do {
            configuration = try RunConfiguration(path: path, resumingStreams: !checkOnly)
        } catch let problems as RunConfiguration.Problems {
            for line in problems.lines { FileHandle.standardError.write(Data((line + "\n").utf8)) }
            throw CommandError("", exitCode: .config)
        }
        if checkOnly {
            for stream in configuration.streams { print(stream.summary) }
            return
        }
        let set = StreamSet()
        // One server for every stream (`server:`): each below /NAME/, the index at /.
        let site = configuration.server.map { SiteServer(access: $0.access) }
        let reloader = RunReloader(configuration, set: set, site: site)
        let certificates = configuration.server?.certificateReload
        let signals = SignalHandling(onMark: { set.markAll() }, onReload: {
            certificates?.reload()
            // Off the signals' queue: a reload waits for the one before it, an interrupt should not.
            DispatchQueue.global().async { reloader.reload() }
        }) { second in
            set.stopAll(atOnce: second)
        }
        defer { signals.cancel() }
        if let site, let token = configuration.adminToken {
            // The same reload as SIGHUP's, certificate included.
            site.answerReloads(token: token) {
                certificates?.reload()
                return reloader.answer()
            }
        }
        let http = try configuration.server.map { try $0.start(site!, streamCount: configuration.streams.count) }
        defer { http?.stop() }
        reloader.startAll()
        let exitCode = set.wait()
        guard exitCode == .success else { throw CommandError("", exitCode: exitCode) }
    }
}

extension RunConfiguration.Stream {
    /// One line for `run --check`: its name, input, folder and what it does.
    var summary: String {
        let request = plan.request
        let input = request.listen.map { "pushed to \($0)" } ?? file.setting("video")?.text ?? "the first camera"
        let audio = file.setting("audio")?.text.map { ", audio \($0)" } ?? ""
        let destination = [request.outputDirectory, options.publish.map { "publish \($0.displayName)" }]
            .compactMap { $0 }.joined(separator: ", ")
        var mode: [String] = []
        if let ladder = file.setting("ladder")?.text {
            mode.append("ladder \(ladder)")
        } else if plan.inputs.video.media != nil, plan.inputs.copy {
            mode.append("copied when it can be")
        } else if plan.inputs.videoIsCamera, plan.inputs.cameraCopy {
            mode.append("copied when the camera sends H.264")
        } else {
            let size = plan.configuration.size
            // A URL or a file keeps its own size unless one is asked for.
            let sizeText = request.size == nil && plan.inputs.video.media != nil ? "at its own size"
                : "\(size.width)x\(size.height)"
            mode.append("encoded \(sizeText) \(plan.configuration.videoCodec.rawValue)")
        }
        if let record = request.record { mode.append("recorded to \(record)") }
        if request.lowLatency { mode.append("low latency") }
        if request.encryption.method != nil { mode.append("encrypted") }
        if resumes { mode.append("resumes") }
        return "\(name): \(input)\(audio) -> \(destination) (\(mode.joined(separator: ", ")))"
    }
}
