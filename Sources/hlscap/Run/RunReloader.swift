import Foundation
import HLSConfig
import HLSEngine
import HLSServer

/// Reloads a running `hlscap run` from its file (SIGHUP, `POST /api/v1/reload`): the file is checked as
/// at the start; a file that does not check is refused and the streams go on as they were. Otherwise new
/// streams start, removed ones end as a stop ends them, changed ones restart (continued after a
/// discontinuity, or as a new stream when their layout changed), and the others are not touched.
///
/// Unchecked sendable: `current` is touched only on `queue`, which also takes reloads one at a time.
final class RunReloader: @unchecked Sendable {
    enum Outcome {
        case refused([String])
        case applied(RunChanges)
    }

    private let set: StreamSet
    private let site: SiteServer?
    private var current: RunConfiguration
    /// One disk for every stream's split recordings (`recordings:`): the oldest file of any goes first.
    private let sharedRetention: SharedRecordingRetention
    private let queue = DispatchQueue(label: "hlscap.reload")

    init(_ configuration: RunConfiguration, set: StreamSet, site: SiteServer?) {
        current = configuration
        sharedRetention = SharedRecordingRetention(retention: configuration.retention)
        self.set = set
        self.site = site
    }

    /// Starts every stream of the file the run started with.
    func startAll() {
        queue.sync {
            for stream in current.streams {
                if stream.resumes { printError("\(stream.name): continuing the stream in \(stream.plan.request.outputDirectory!)") }
                set.start(stream.name, run(stream, in: current))
            }
        }
    }

    /// Reads the file again; returns once it is checked and the changes are under way.
    @discardableResult
    func reload() -> Outcome {
        queue.sync {
            let next: RunConfiguration
            do {
                next = try RunConfiguration(path: current.path, resumingStreams: true)
            } catch let problems as RunConfiguration.Problems {
                return refuse(problems.lines)
            } catch {
                return refuse([(error as? CommandError)?.message ?? "\(error)"])
            }
            let changes = RunChanges(from: current, to: next)
            current = next
            sharedRetention.retention = next.retention
            printError(changes.summary)
            if changes.serverChanged {
                printError("warning: the server's settings (server:) are read when hlscap run starts; restart it to change them")
            }
            queue.async { self.apply(changes, next) }
            return .applied(changes)
        }
    }

    private func refuse(_ lines: [String]) -> Outcome {
        for line in lines { FileHandle.standardError.write(Data((line + "\n").utf8)) }
        printError("\(current.path) does not check; the running streams go on as they were")
        return .refused(lines)
    }

    /// On `queue`: new streams start at once; removed and changed ones end side by side, each changed one
    /// starting again as soon as its earlier run has ended. The next reload waits for all of it.
    private func apply(_ changes: RunChanges, _ configuration: RunConfiguration) {
        let streams = Dictionary(configuration.streams.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for name in changes.added {
            set.start(name, run(streams[name]!, in: configuration))
        }
        let ending = DispatchGroup()
        for name in changes.removed {
            DispatchQueue.global().async(group: ending) { [set, site] in
                set.end(name)
                site?.remove(name)
            }
        }
        for name in changes.changed {
            let stream = streams[name]!
            DispatchQueue.global().async(group: ending) { [set, site] in
                set.replace(name) {
                    site?.remove(name)
                    do {
                        let restarted = try stream.restarted(replacing: changes.replaced.contains(name))
                        printError(restarted.resumes ? "\(name): continuing the stream in \(restarted.plan.request.outputDirectory ?? "")"
                                                     : "\(name): starting a new stream, its layout changed")
                        return self.run(restarted, in: configuration)
                    } catch {
                        printError("\(name): \((error as? CommandError)?.message ?? "\(error)")")
                        return nil
                    }
                }
            }
        }
        ending.wait()
    }

    /// The stream as its file's `configuration` runs it: listed at its place in the file.
    private func run(_ stream: RunConfiguration.Stream, in configuration: RunConfiguration) -> LiveRun {
        let order = configuration.streams.firstIndex { $0.name == stream.name } ?? .max
        return LiveRun(plan: stream.plan, publish: stream.options.publish, serve: nil, verbose: stream.options.verbose,
                       voice: configuration.streams.count > 1 ? .named(stream.name) : .plain,
                       site: site.map { .init(server: $0, name: stream.name, order: order, access: stream.options.serve?.access) },
                       sharedRetention: sharedRetention)
    }

    /// What `POST /api/v1/reload` answers.
    func answer() -> SiteServer.ReloadAnswer {
        let object: [String: [String]]
        switch reload() {
        case .refused(let lines):
            object = ["errors": lines]
        case .applied(let changes):
            object = ["added": changes.added, "removed": changes.removed, "changed": changes.changed,
                      "unchanged": changes.unchanged]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Lists of strings always encode; a failure would be a programming error.
        guard let data = try? encoder.encode(object) else { preconditionFailure("the reload's JSON did not encode") }
        return SiteServer.ReloadAnswer(accepted: object["errors"] == nil, json: String(decoding: data, as: UTF8.self) + "\n")
    }
}
