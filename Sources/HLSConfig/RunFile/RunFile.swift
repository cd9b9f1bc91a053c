import Foundation

/// What is wrong at one place of a run file, in words that name the key and what to change.
public struct ConfigProblem: Equatable, Sendable, CustomStringConvertible {
    public var mark: YAMLMark
    public var message: String

    public init(_ message: String, at mark: YAMLMark) {
        self.mark = mark
        self.message = message
    }

    public var description: String { "\(mark): \(message)" }
}

/// Every problem a run file has, in the order of the text.
public struct RunFileError: Error, Equatable, Sendable {
    public var problems: [ConfigProblem]

    public init(_ problems: [ConfigProblem]) {
        self.problems = problems.sorted { $0.mark < $1.mark }
    }
}

/// One key of a section and its value, with where the key is written.
public struct Setting: Equatable, Sendable {
    public enum Value: Equatable, Sendable {
        case flag(Bool)
        case text(String)
        /// A key given several times (a sequence).
        case texts([String])
    }

    public var key: String
    public var value: Value
    public var mark: YAMLMark

    public init(_ key: String, _ value: Value, at mark: YAMLMark) {
        self.key = key
        self.value = value
        self.mark = mark
    }

    public var text: String? {
        if case .text(let text) = value { return text }
        return nil
    }
}

/// One stream of the file: its name and its settings, `defaults:` overridden by its own.
public struct RunStream: Equatable, Sendable {
    public var name: String
    /// Where its name is written.
    public var mark: YAMLMark
    public var settings: [Setting]
    /// Its own `out`, else the file's `out` followed by its name; nil when neither is given.
    public var outputFolder: String?
    /// Whether every key of the stream and of `defaults:` was read: its settings are all it asked for.
    public var isComplete = true

    public func setting(_ key: String) -> Setting? {
        settings.first { $0.key == key }
    }
}

/// A file of streams for one process (`out:`, `defaults:`, `streams:`, `server:`, `recordings:`), read from
/// YAML and checked for what the file itself can get wrong: unknown keys, wrong types, names, two streams
/// in one folder or one recording. What a stream's settings mean is the stream plan's business.
public struct RunFile: Equatable, Sendable {
    public var out: String?
    public var defaults: [Setting] = []
    public var streams: [RunStream] = []
    public var server: [Setting] = []
    public var recordings: [Setting] = []

    public init(text: String, schema: RunFileSchema) throws(RunFileError) {
        let (file, problems) = Self.read(text, schema: schema)
        guard problems.isEmpty else { throw RunFileError(problems) }
        self = file
    }

    /// What can be read of the file, and its problems: a caller that checks the streams further checks
    /// those that are complete, and says every problem at once.
    public static func read(_ text: String, schema: RunFileSchema) -> (RunFile, [ConfigProblem]) {
        let root: YAMLNode?
        do {
            root = try YAMLDocument.read(text)
        } catch {
            return (RunFile(), [ConfigProblem(error.problem, at: error.mark)])
        }
        var reader = Reader(schema: schema)
        let file = reader.file(root)
        return (file, RunFileError(reader.problems).problems)
    }

    init() {}
}

/// Reads the tree into a `RunFile`, collecting every problem rather than stopping at the first.
private struct Reader {
    let schema: RunFileSchema
    var problems: [ConfigProblem] = []
    var defaultsComplete = true

    init(schema: RunFileSchema) {
        self.schema = schema
    }

    mutating func file(_ root: YAMLNode?) -> RunFile {
        var file = RunFile()
        let start = YAMLMark(line: 1, column: 1)
        guard let root, !root.isNull else {
            problems.append(ConfigProblem("the file lists no stream; add streams: with a name and its settings",
                                          at: start))
            return file
        }
        guard let pairs = mapping(root, "the file", takes: "out, defaults, streams, server and recordings") else {
            return file
        }
        var defaults: [Setting] = []
        var streamsNode: YAMLNode?
        for (key, value) in pairs {
            switch key.scalar! {
            case "out": file.out = text(value, key: "out", in: "the file")
            case "defaults":
                let problemsBefore = problems.count
                defaults = settings(value, keys: schema.streamKeys, in: "defaults")
                defaultsComplete = problems.count == problemsBefore
            case "streams": streamsNode = value
            case "server": file.server = settings(value, keys: RunFileSchema.serverKeys, in: "server")
            case "recordings": file.recordings = settings(value, keys: RunFileSchema.recordingsKeys, in: "recordings")
            default: unknownTopLevelKey(key)
            }
        }
        file.defaults = defaults
        if let streamsNode {
            file.streams = streams(streamsNode, defaults: defaults, out: file.out)
        } else {
            problems.append(ConfigProblem("the file lists no stream; add streams: with a name and its settings",
                                          at: root.mark))
        }
        checkSharedPaths(file.streams)
        return file
    }

    private mutating func unknownTopLevelKey(_ key: YAMLNode) {
        let name = key.scalar!
        var message = "unknown key '\(name)'"
        if schema.streamKeys[name] != nil {
            message += "; a stream's setting goes under streams: NAME: (or defaults: for every stream)"
        } else if let near = RunFileSchema.nearest(to: name, among: RunFileSchema.sections) {
            message += "; did you mean '\(near)'?"
        } else {
            message += "; the file takes \(RunFileSchema.sections.joined(separator: ", "))"
        }
        problems.append(ConfigProblem(message, at: key.mark))
    }

    private mutating func streams(_ node: YAMLNode, defaults: [Setting], out: String?) -> [RunStream] {
        guard let pairs = mapping(node, "streams", takes: "stream names, each with its settings") else { return [] }
        if pairs.isEmpty {
            problems.append(ConfigProblem("streams lists no stream; add a name and its settings", at: node.mark))
        }
        var streams: [RunStream] = []
        for (key, value) in pairs {
            let name = key.scalar!
            guard RunFileSchema.isStreamName(name) else {
                problems.append(ConfigProblem("stream name '\(name)' is also its folder's name: use letters, digits, "
                    + "'-' and '_' only", at: key.mark))
                continue
            }
            // A stream with nothing under its name takes the defaults alone.
            let problemsBefore = problems.count
            let own = value.isNull ? [] : settings(value, keys: schema.streamKeys, in: "stream \(name)")
            var merged = defaults.filter { setting in !own.contains { $0.key == setting.key } }
            merged += own
            let folder = merged.first { $0.key == "out" }?.text ?? out.map { ($0.hasSuffix("/") ? $0 : $0 + "/") + name }
            var stream = RunStream(name: name, mark: key.mark, settings: merged, outputFolder: folder)
            stream.isComplete = problems.count == problemsBefore && defaultsComplete
            streams.append(stream)
        }
        return streams
    }

    /// Two streams in one folder, or recording into one path, would overwrite each other.
    private mutating func checkSharedPaths(_ streams: [RunStream]) {
        var folders: [String: RunStream] = [:]
        var recordings: [String: RunStream] = [:]
        for stream in streams {
            if let folder = stream.outputFolder {
                let path = Self.absolute(folder)
                if let first = folders[path] {
                    let mark = stream.setting("out")?.mark ?? stream.mark
                    problems.append(ConfigProblem("stream \(stream.name) writes \(path), as stream \(first.name) "
                        + "(line \(first.mark.line)) does; give one of them its own out", at: mark))
                } else {
                    folders[path] = stream
                }
            }
            if let record = stream.setting("record"), let pattern = record.text {
                let path = Self.absolute(pattern)
                if let first = recordings[path] {
                    problems.append(ConfigProblem("stream \(stream.name) records into \(path), as stream \(first.name) "
                        + "(line \(first.mark.line)) does; give each stream its own record path", at: record.mark))
                } else {
                    recordings[path] = stream
                }
            }
        }
    }

    private static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }

    // MARK: Values

    /// A mapping's pairs whose keys are scalars and given once; nil (and a problem) for anything else.
    private mutating func mapping(_ node: YAMLNode, _ what: String, takes: String) -> [(YAMLNode, YAMLNode)]? {
        guard case .mapping(let pairs) = node.content else {
            problems.append(ConfigProblem("\(what) takes a mapping (\(takes)), not \(node.kindName)", at: node.mark))
            return nil
        }
        var seen: [String: YAMLMark] = [:]
        var result: [(YAMLNode, YAMLNode)] = []
        for pair in pairs {
            guard let key = pair.key.scalar else {
                problems.append(ConfigProblem("\(what): a key is \(pair.key.kindName); keys are names", at: pair.key.mark))
                continue
            }
            if let first = seen[key] {
                problems.append(ConfigProblem("\(what): '\(key)' is given twice (first at line \(first.line)); "
                    + "keep one", at: pair.key.mark))
                continue
            }
            seen[key] = pair.key.mark
            result.append((pair.key, pair.value))
        }
        return result
    }

    private mutating func settings(_ node: YAMLNode, keys: [String: RunFileSchema.Kind], in what: String) -> [Setting] {
        guard let pairs = mapping(node, what, takes: "keys and their values") else { return [] }
        var settings: [Setting] = []
        for (keyNode, value) in pairs {
            let key = keyNode.scalar!
            guard let kind = keys[key] else {
                unknownKey(keyNode, keys: keys, in: what)
                continue
            }
            if let setting = setting(key, kind: kind, value, at: keyNode.mark, in: what) { settings.append(setting) }
        }
        return settings
    }

    private mutating func unknownKey(_ key: YAMLNode, keys: [String: RunFileSchema.Kind], in what: String) {
        let name = key.scalar!
        var message = "\(what): unknown key '\(name)'"
        if keys == RunFileSchema.recordingsKeys, name == "keep" {
            message += "; how long recordings are kept is each stream's: put it under defaults: (or a stream)"
        } else if let near = RunFileSchema.nearest(to: name, among: keys.keys) {
            message += "; did you mean '\(near)'?"
        } else if keys != RunFileSchema.serverKeys, RunFileSchema.serverKeys[name] != nil {
            message += "; it is the server's: put it under server:"
        } else if keys != RunFileSchema.serverKeys, name == "serve" {
            message += "; every stream is served by the file's one server: give its address as server: listen"
        } else if RunFileSchema.sections.contains(name) {
            message += "; it is a section of the file: write it at the start of a line"
        }
        problems.append(ConfigProblem(message, at: key.mark))
    }

    private mutating func setting(_ key: String, kind: RunFileSchema.Kind, _ node: YAMLNode, at mark: YAMLMark,
                                  in what: String) -> Setting? {
        switch kind {
        case .flag:
            let word = node.scalar?.lowercased()
            guard word == "true" || word == "false" else {
                let got = node.scalar.map { "'\($0)'" } ?? node.kindName
                problems.append(ConfigProblem("\(what): '\(key)' takes true or false, not \(got)", at: node.mark))
                return nil
            }
            return Setting(key, .flag(word == "true"), at: mark)
        case .value:
            return text(node, key: key, in: what).map { Setting(key, .text($0), at: mark) }
        case .repeated, .list:
            guard case .sequence(let items) = node.content else {
                return text(node, key: key, in: what).map { Setting(key, kind == .list ? .text($0) : .texts([$0]), at: mark) }
            }
            let texts = items.compactMap { text($0, key: key, in: what) }
            guard texts.count == items.count else { return nil }
            guard !texts.isEmpty else {
                problems.append(ConfigProblem("\(what): '\(key)' lists nothing; give it a value", at: node.mark))
                return nil
            }
            return Setting(key, kind == .list ? .text(texts.joined(separator: ",")) : .texts(texts), at: mark)
        }
    }

    /// A scalar that is not null.
    private mutating func text(_ node: YAMLNode, key: String, in what: String) -> String? {
        guard let text = node.scalar else {
            problems.append(ConfigProblem("\(what): '\(key)' takes a value, not \(node.kindName)", at: node.mark))
            return nil
        }
        guard !node.isNull else {
            problems.append(ConfigProblem("\(what): '\(key)' has no value; give it one or leave the key out",
                                          at: node.mark))
            return nil
        }
        return text
    }
}
