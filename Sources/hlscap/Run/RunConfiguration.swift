import Foundation
import HLSConfig
import HLSEngine
import HLSKit
import HLSOutput
import HLSServer

/// A run file checked as a whole: each stream's settings become `live`'s options, read by `LiveOptions`
/// and planned as `live` plans them; the server's and the recordings' settings are read by their own
/// options. Every problem becomes a line `FILE:LINE:COLUMN: …` at the key to change.
struct RunConfiguration {
    struct Stream {
        var name: String
        var options: LiveOptions
        var plan: LivePlan
        /// Its folder held a stream, which this run continues.
        var resumes: Bool
        var file: RunStream
        /// Its settings as `live`'s words, before `--resume`: a reload restarts the stream when they differ.
        var arguments: [String]
    }

    /// The problems of a file that does not check, one line each.
    struct Problems: Error {
        var lines: [String]
    }

    var path: String
    var streams: [Stream] = []
    /// The one server's options (`server:`), nil without a `listen` address.
    var server: ServerOptions?
    /// The token that `POST /api/v1/reload` takes (`server: admin-token`); without it, no reload by HTTP.
    var adminToken: String?
    /// The server's settings as words: a reload cannot change them while the server runs.
    var serverArguments: [String] = []
    /// Retention for the whole disk (`recordings:`).
    var retention = RecordingRetention()

    /// Reads and checks `path`. With `resumingStreams`, a stream whose folder holds a stream continues it,
    /// as `live --resume` does, so that a restart after a stop or a crash goes on where each stream was.
    init(path: String, resumingStreams: Bool) throws {
        self.path = path
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandError("\(path) cannot be read; give the YAML file that lists the streams", exitCode: .noInput)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw Problems(lines: ["\(path):1:1: the file is not UTF-8 text; save it as UTF-8"])
        }
        let (file, fileProblems) = RunFile.read(text, schema: RunKeys.schema)
        var problems = fileProblems
        let listen = file.server.first { $0.key == "listen" }?.text
        adminToken = file.server.first { $0.key == "admin-token" }?.text
        serverArguments = Self.arguments(file.server)
        do {
            let settings = file.server.filter { $0.key != "admin-token" }
                .map { $0.key == "listen" ? Setting("serve", $0.value, at: $0.mark) : $0 }
            var arguments = ArgumentList(Self.arguments(settings))
            server = try ServerOptions(arguments: &arguments, option: "--serve")
        } catch let error as CommandError {
            problems.append(Self.problem(error, settings: file.server, at: YAMLMark(line: 1, column: 1), in: "server"))
        }
        for setting in file.recordings {
            do {
                let bytes = try Parse.byteCount(setting.text ?? "", option: "--" + setting.key)
                if setting.key == "keep-size" { retention.keepBytes = bytes } else { retention.minimumFreeBytes = bytes }
            } catch let error as CommandError {
                problems.append(Self.problem(error, settings: [setting], at: setting.mark, in: "recordings"))
            }
        }
        for stream in file.streams where stream.isComplete {
            // The one server serves the stream below /NAME/, beside its own paths.
            if server != nil {
                do {
                    try SiteServer.check(stream.name)
                } catch {
                    problems.append(ConfigProblem("stream \(stream.name): \(error.description)", at: stream.mark))
                    continue
                }
            }
            var words = Self.arguments(stream.settings)
            if stream.setting("out") == nil, let folder = stream.outputFolder { words.append("--out=" + folder) }
            if let listen { words.append("--serve=" + listen) }
            let checkedWords = words
            let resumes = resumingStreams && Self.holdsStream(stream)
            if resumes { words.append("--resume") }
            do {
                var arguments = ArgumentList(words)
                let options = try LiveOptions(arguments: &arguments)
                let plan: LivePlan
                do {
                    plan = try options.request.plan()
                } catch {
                    throw CommandError(error)
                }
                streams.append(Stream(name: stream.name, options: options, plan: plan, resumes: resumes, file: stream,
                                      arguments: checkedWords))
            } catch let error as CommandError {
                problems.append(Self.problem(error, settings: stream.settings, at: stream.mark, in: "stream \(stream.name)"))
            }
        }
        guard problems.isEmpty else { throw Problems(lines: RunFileError(problems).problems.map { line($0) }) }
    }

    private func line(_ problem: ConfigProblem) -> String {
        "\(path):\(problem.mark.line):\(problem.mark.column): \(problem.message)"
    }

    /// Settings as `live`'s words: `--key=value`, a flag when true, a repeated key once per value.
    static func arguments(_ settings: [Setting]) -> [String] {
        settings.flatMap { setting -> [String] in
            switch setting.value {
            case .flag(let on): on ? ["--" + setting.key] : []
            case .text(let text): ["--\(setting.key)=\(text)"]
            case .texts(let texts): texts.map { "--\(setting.key)=\($0)" }
            }
        }
    }

    /// Whether the stream's folder holds a stream that the run can continue. A stream that names `resume`
    /// or `overwrite` itself has said what to do.
    private static func holdsStream(_ stream: RunStream) -> Bool {
        guard let folder = stream.outputFolder, stream.setting("resume") == nil, stream.setting("overwrite") == nil,
              FileManager.default.fileExists(atPath: folder), let store = try? DirectoryStore(root: folder) else {
            return false
        }
        return (try? StreamWriter.holdsStream(store)) ?? false
    }

    /// `live`'s refusal at the first key it names that the settings hold (else at `mark`), in the file's
    /// words: keys without dashes, the server's address as `server: listen`.
    static func problem(_ error: CommandError, settings: [Setting], at mark: YAMLMark, in what: String) -> ConfigProblem {
        let named = error.message.matches(of: #/--([a-z0-9][a-z0-9-]*)/#).map { String($0.output.1) }
            .map { $0 == "serve" && what == "server" ? "listen" : $0 }
        let setting = named.lazy.compactMap { key in settings.first { $0.key == key } }.first
        let words = error.message
            .replacingOccurrences(of: "--serve", with: what == "server" ? "listen" : "server: listen")
            .replacing(#/--([a-z0-9][a-z0-9-]*)/#) { String($0.output.1) }
        return ConfigProblem("\(what): \(words)", at: setting?.mark ?? mark)
    }
}
