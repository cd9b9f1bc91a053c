/// The words after the command name, consumed option by option.
///
/// Each command takes the options it knows; whatever is left must be positional, so an unknown or
/// misspelt option is a usage error rather than silently ignored. `--name value` and `--name=value`
/// are both accepted; `--` ends the options.
struct ArgumentList {
    private var words: [String]
    private var positionalOnlyFrom: Int?

    init(_ words: [String]) {
        self.words = words
        positionalOnlyFrom = words.firstIndex(of: "--")
    }

    private func optionIndices(_ name: String) -> [Int] {
        let end = positionalOnlyFrom ?? words.count
        return words.indices.filter { $0 < end && (words[$0] == name || words[$0].hasPrefix(name + "=")) }
    }

    private mutating func remove(at index: Int, count: Int = 1) {
        words.removeSubrange(index..<(index + count))
        if let end = positionalOnlyFrom { positionalOnlyFrom = end - count }
    }

    /// Whether `--name` was given (at least once).
    mutating func flag(_ name: String) -> Bool {
        let found = optionIndices(name).filter { words[$0] == name }
        for index in found.reversed() { remove(at: index) }
        return !found.isEmpty
    }

    /// Every value of a repeatable option, in order.
    mutating func values(_ name: String) throws -> [String] {
        var collected: [String] = []
        while let index = optionIndices(name).first {
            let word = words[index]
            if word.hasPrefix(name + "=") {
                collected.append(String(word.dropFirst(name.count + 1)))
                remove(at: index)
            } else {
                let end = positionalOnlyFrom ?? words.count
                guard index + 1 < end else { throw CommandError.usage("\(name) needs a value") }
                collected.append(words[index + 1])
                remove(at: index, count: 2)
            }
        }
        return collected
    }

    /// The value of an option given at most once.
    mutating func value(_ name: String) throws -> String? {
        let all = try values(name)
        guard all.count <= 1 else { throw CommandError.usage("\(name) was given \(all.count) times; give it once") }
        return all.first
    }

    /// What is left: positional arguments. Any remaining `-x`/`--x` word is an unknown option.
    mutating func positionals() throws -> [String] {
        let end = positionalOnlyFrom ?? words.count
        if let unknown = words[..<end].first(where: { $0.hasPrefix("-") && $0 != "-" }) {
            throw CommandError.usage("unknown option \(unknown)")
        }
        let result = words.enumerated().filter { $0.offset != positionalOnlyFrom }.map(\.element)
        words = []
        positionalOnlyFrom = nil
        return result
    }

    /// The one positional argument of a command that takes exactly one, such as `serve DIR` and
    /// `validate TARGET`: `what` names it in the usage errors ("the stream directory to serve").
    mutating func onePositional(_ command: String, what: String) throws -> String {
        let positionals = try positionals()
        guard positionals.count == 1 else {
            throw CommandError.usage(positionals.isEmpty ? "\(command) needs \(what)"
                : "\(command) takes one argument, \(what); got \(positionals.count)")
        }
        return positionals[0]
    }
}
