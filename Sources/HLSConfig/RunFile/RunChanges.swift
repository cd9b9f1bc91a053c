/// What a reload changes in the running set: the streams of the file before and after, by name, compared
/// by their checked settings (`live`'s words). A stream whose words are the same is not touched at all.
public struct RunChanges: Equatable, Sendable {
    /// In the new file's order.
    public var added: [String] = []
    public var removed: [String] = []
    /// Restarted: continued after a discontinuity, or replaced when its layout changes (`replaced`).
    public var changed: [String] = []
    public var replaced: Set<String> = []
    public var unchanged: [String] = []
    /// The server's settings differ; they apply when the process starts again.
    public var serverChanged = false

    /// Settings that `live --resume` cannot continue a stream across: other renditions, a longer target
    /// duration. A stream whose layout they change starts again as a new stream.
    public static let layoutKeys = ["--ladder=", "--segment-duration="]

    /// Streams as their names and words, in their file's order, before and after; the server's words too.
    public init(from old: [(name: String, arguments: [String])], to new: [(name: String, arguments: [String])],
                server: (old: [String], new: [String]) = ([], [])) {
        let before = Dictionary(old.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let after = Set(new.map(\.name))
        for stream in new {
            guard let previous = before[stream.name] else {
                added.append(stream.name)
                continue
            }
            if previous.arguments == stream.arguments {
                unchanged.append(stream.name)
            } else {
                changed.append(stream.name)
                if Self.layout(previous.arguments) != Self.layout(stream.arguments) { replaced.insert(stream.name) }
            }
        }
        removed = old.map(\.name).filter { !after.contains($0) }
        serverChanged = server.old != server.new
    }

    private static func layout(_ arguments: [String]) -> [String] {
        arguments.filter { word in layoutKeys.contains { word.hasPrefix($0) } }
    }

    /// One line for the log: what the reload does.
    public var summary: String {
        func part(_ label: String, _ names: [String]) -> String? {
            names.isEmpty ? nil : "\(label) \(names.joined(separator: ", "))"
        }
        let parts = [part("starting", added), part("stopping", removed), part("restarting", changed),
                     part("unchanged", unchanged)].compactMap { $0 }
        return "reloaded: " + (parts.isEmpty ? "no streams" : parts.joined(separator: "; "))
    }
}

