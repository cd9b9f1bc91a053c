import Foundation
import HLSKit

/// A folder of recordings in order of time, with its gaps, as `hlscap recordings --json` prints it and
/// the server's `/recordings/index.json` answers it.
public enum RecordingTimeline {
    /// Files in order of wall-clock start (those without a time last), then of path.
    public static func ordered(_ entries: [RecordingScanner.Scanned]) -> [RecordingScanner.Scanned] {
        entries.sorted { ($0.summary.start ?? .distantFuture, $0.path) < ($1.summary.start ?? .distantFuture, $1.path) }
    }

    /// Stretches between files longer than `RecordingRangePlaylist.gapSeconds`; `entries` in order.
    public static func gaps(_ entries: [RecordingScanner.Scanned]) -> [(start: Date, end: Date)] {
        let timed = entries.compactMap { entry in entry.summary.start.flatMap { start in entry.summary.end.map { (start, $0) } } }
        return zip(timed, timed.dropFirst()).compactMap { earlier, later in
            later.0.timeIntervalSince(earlier.1) > RecordingRangePlaylist.gapSeconds ? (earlier.1, later.0) : nil
        }
    }

    /// One JSON document: files (path, start, end, duration, size, codecs, and each fragment's byte
    /// offset, size, start and duration when `fragments`), gaps, totals; `directory` when given.
    public static func json(_ entries: [RecordingScanner.Scanned], directory: String?, fragments: Bool) -> String {
        let files: [[String: Any]] = entries.map { entry in
            var file: [String: Any] = [
                "path": entry.path, "bytes": entry.summary.byteCount, "durationSeconds": entry.summary.durationSeconds,
                "codecs": entry.summary.codecs,
            ]
            if fragments {
                file["fragments"] = entry.summary.fragments.map { fragment -> [String: Any] in
                    var object: [String: Any] = ["offset": fragment.offset, "bytes": fragment.byteCount,
                                                 "durationSeconds": fragment.durationSeconds]
                    if let start = fragment.start { object["start"] = ProgramDateTime.format(start) }
                    return object
                }
            }
            if let start = entry.summary.start { file["start"] = ProgramDateTime.format(start) }
            if let end = entry.summary.end { file["end"] = ProgramDateTime.format(end) }
            if let problem = entry.problem { file["problem"] = problem }
            return file
        }
        var document: [String: Any] = [
            "files": files,
            "gaps": gaps(entries).map { ["start": ProgramDateTime.format($0.start), "end": ProgramDateTime.format($0.end)] },
            "totalBytes": entries.reduce(0) { $0 + $1.summary.byteCount },
            "totalSeconds": entries.reduce(0) { $0 + $1.summary.durationSeconds },
        ]
        if let directory { document["directory"] = directory }
        let data = (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
