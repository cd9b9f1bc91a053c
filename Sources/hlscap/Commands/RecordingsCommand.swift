import Foundation
import HLSKit
import HLSOutput

/// `hlscap recordings DIR`: the timeline of a folder of recordings, read from the files themselves.
struct RecordingsCommand: Command {
    static let name = "recordings"
    static let summary = "list a folder's recordings as a timeline: files, gaps, size"
    static let help = """
        Usage: hlscap recordings DIR [--json]

        Reads every recording file below DIR (as `hlscap live --record` writes them, split by
        --record-every or not) and prints, in order of time, each file's wall-clock start and end,
        duration, size and codecs, the gaps between files, and the totals. Times come from the
        files' own boxes (a prft before each fragment), so nothing is lost when hlscap is killed: a
        file cut short is read up to its last whole fragment.

        Options:
          --json    one JSON document: files (with each fragment's byte offset, size, start and
                    duration), gaps, totals
          --help    show this help

        Exit status: 0; 66 when DIR cannot be read.
        """

    let directory: String
    let json: Bool

    init(arguments: inout ArgumentList) throws {
        json = arguments.flag("--json")
        let positionals = try arguments.positionals()
        guard positionals.count == 1 else { throw CommandError.usage("recordings takes one folder (got \(positionals.count))") }
        directory = positionals[0]
    }

    typealias Entry = RecordingScanner.Scanned

    func run() throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CommandError("\(directory): no such folder; give the folder --record writes into", exitCode: .noInput)
        }
        let entries = RecordingTimeline.ordered(try RecordingScanner.scan(folder: directory))
        print(json ? RecordingTimeline.json(entries, directory: directory, fragments: true) : Self.text(entries, directory: directory),
              terminator: "")
    }

    static func text(_ entries: [Entry], directory: String) -> String {
        guard !entries.isEmpty else { return "no recordings in \(directory)\n" }
        var lines: [String] = []
        var previousEnd: Date?
        var gapCount = 0
        var gapSeconds = 0.0
        for entry in entries {
            let summary = entry.summary
            if let previousEnd, let start = summary.start, start.timeIntervalSince(previousEnd) > RecordingRangePlaylist.gapSeconds {
                let gap = start.timeIntervalSince(previousEnd)
                lines.append(String(format: "  gap of %.3f s", gap))
                gapCount += 1
                gapSeconds += gap
            }
            let times = summary.start.map { ProgramDateTime.format($0) + "  " + ProgramDateTime.format(summary.end ?? $0) }
                ?? "(no time: not written by hlscap's recorder)"
            var line = String(format: "%@  %9.3f s  %8.1f MB  %@  %@", times, summary.durationSeconds,
                              Double(summary.byteCount) / 1_000_000, summary.codecs.joined(separator: ","), entry.path)
            if let problem = entry.problem { line += "  (\(problem))" }
            lines.append(line)
            previousEnd = summary.end ?? previousEnd
        }
        let seconds = entries.reduce(0) { $0 + $1.summary.durationSeconds }
        let bytes = entries.reduce(0) { $0 + $1.summary.byteCount }
        lines.append(String(format: "%d %@, %.1f s recorded, %d %@ (%.1f s), %.1f MB", entries.count,
                            entries.count == 1 ? "file" : "files", seconds, gapCount, gapCount == 1 ? "gap" : "gaps",
                            gapSeconds, Double(bytes) / 1_000_000))
        return lines.joined(separator: "\n") + "\n"
    }
}
