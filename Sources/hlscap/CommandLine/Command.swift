/// A subcommand: parsed from its words, validated, then run.
protocol Command {
    static var name: String { get }
    static var summary: String { get }
    static var help: String { get }

    init(arguments: inout ArgumentList) throws
    func run() throws
}

enum Parse {
    /// Seconds as written on the command line ("2", "1.5") to whole milliseconds, without floating point.
    static func milliseconds(_ text: String, option: String) throws -> Int64 {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let whole = Int64(parts[0].isEmpty ? "0" : parts[0]),
              parts.count == 1 || (parts[1].count <= 3 && parts[1].allSatisfy(\.isNumber)),
              whole >= 0, whole < 1_000_000 else {
            throw CommandError.usage("\(option) takes seconds, like 2 or 1.5 (got \"\(text)\")")
        }
        let fraction = parts.count == 2 ? String(parts[1]).padding(toLength: 3, withPad: "0", startingAt: 0) : "000"
        return whole * 1000 + Int64(fraction)!
    }
}
