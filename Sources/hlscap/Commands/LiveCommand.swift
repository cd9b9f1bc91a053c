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
        let options = try LiveOptions(arguments: &arguments)
        publish = options.publish
        serve = options.serve
        quiet = options.quiet
        verbose = options.verbose
        do {
            plan = try options.request.plan()
        } catch {
            throw CommandError(error)
        }
        let extra = try arguments.positionals()
        guard extra.isEmpty else { throw CommandError.usage("unexpected argument \(extra[0])") }
    }

    func run() throws {
        let stream = LiveRun(plan: plan, publish: publish, serve: serve, verbose: verbose, voice: .plain)
        try stream.run { engine in
            // A second interrupt ends the run at once: `run` returns, and the clean-up still happens.
            let signals = SignalHandling(onMark: { engine.startSegmentAtNextFrame() },
                                         onReload: serve?.onReload) { second in
                if second { return engine.endAtOnce() }
                engine.requestStop()
            }
            let status = quiet ? nil : StatusLine(statistics: engine.statistics)
            status?.start()
            return LiveRun.Watch(engineEnded: { status?.stop() }, streamEnded: { signals.cancel() })
        }
    }
}
