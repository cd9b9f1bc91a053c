import HLSConfig

/// The keys of a run file's streams: `hlscap live`'s long options without their dashes, read from its
/// help so that an option added to `live` is a key of the file too.
enum RunKeys {
    /// Options of `live` that are no stream's: the server is the file's own (`server:`), and a process
    /// that runs many streams has no status line.
    static let notStreamKeys: Set<String> = ["help", "quiet", "serve", "tls-cert", "tls-key", "tls-ocsp",
                                             "max-clients", "idle-timeout", "header-timeout"]

    static let schema = RunFileSchema(streamKeys: streamKeys(help: LiveCommand.help))

    /// The options of a command's help: `  --name VALUE  text` takes a value, `  --name  text` is a flag.
    static func streamKeys(help: String) -> [String: RunFileSchema.Kind] {
        var keys: [String: RunFileSchema.Kind] = [:]
        for line in help.split(separator: "\n", omittingEmptySubsequences: false)
        where line.hasPrefix("  --") && !line.hasPrefix("   ") {
            let row = line.dropFirst(4)
            let name = String(row.prefix { $0 != " " })
            let rest = row.dropFirst(name.count)
            // One space and a word: the value's placeholder. Two spaces or nothing: a flag.
            let takesValue = rest.hasPrefix(" ") && !rest.hasPrefix("  ")
            guard !notStreamKeys.contains(name) else { continue }
            keys[name] = switch name {
            case "header": .repeated
            case "ladder": .list
            default: takesValue ? .value : .flag
            }
        }
        return keys
    }
}
