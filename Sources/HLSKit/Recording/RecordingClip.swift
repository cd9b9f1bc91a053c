import Foundation

/// A wall-clock range of the recordings as the parts of files that hold it, for exporting a clip: each
/// part in seconds from its file's first frame, found through the fragments' capture times (the `prft`
/// boxes), so a file whose clock drifted against its media time is still cut where the range says.
public enum RecordingClip {
    public struct Part: Sendable, Equatable {
        /// The file, as the caller named it.
        public var path: String
        /// Seconds from the file's first frame where the range starts in it (0 for every file but the first).
        public var startSeconds: Double
        /// Seconds from the file's first frame where the range ends in it; nil: to the file's end.
        public var endSeconds: Double?
        /// Wall-clock times of `startSeconds` and of the part's end.
        public var start: Date
        public var end: Date
        /// Seconds of no recording between the part before and this one (0 for the first).
        public var gapBeforeSeconds: Double
    }

    /// The parts of `files` (with their summaries) that cover `from..<to`, in order of time; empty when no
    /// recording overlaps it.
    public static func parts(files: [(path: String, summary: RecordingFileSummary)], from: Date, to: Date) -> [Part] {
        let ordered = files.filter { $0.summary.initByteCount > 0 && $0.summary.start != nil && $0.summary.durationSeconds > 0 }
            .sorted { ($0.summary.start!, $0.path) < ($1.summary.start!, $1.path) }
        var parts: [Part] = []
        var previousEnd: Date?
        for file in ordered {
            let summary = file.summary
            // A file that ends within the published precision after `from` does not hold it (see `seconds(at:in:)`).
            guard let fileStart = summary.start, let fileEnd = summary.end, fileStart < to,
                  fileEnd.timeIntervalSince(from) > ProgramDateTime.precisionSeconds else { continue }
            let startSeconds = from > fileStart ? seconds(at: from, in: summary) : 0
            let endSeconds = to < fileEnd ? seconds(at: to, in: summary) : nil
            let start = max(from, fileStart)
            let gap = previousEnd.map { max(0, start.timeIntervalSince($0)) } ?? 0
            parts.append(Part(path: file.path, startSeconds: startSeconds, endSeconds: endSeconds, start: start,
                              end: min(to, fileEnd), gapBeforeSeconds: gap))
            previousEnd = min(to, fileEnd)
        }
        return parts
    }

    /// Seconds from the file's first frame to `date`: through the fragment that holds it, or the nearest
    /// fragment before it when it falls between two. A fragment that starts within the published precision
    /// after `date` holds it: `date` was read, to the millisecond, from that start.
    static func seconds(at date: Date, in summary: RecordingFileSummary) -> Double {
        var elapsed = 0.0
        var found = 0.0
        for fragment in summary.fragments {
            if let start = fragment.start {
                guard start.timeIntervalSince(date) <= ProgramDateTime.precisionSeconds else { break }
                found = elapsed + max(0, min(date.timeIntervalSince(start), fragment.durationSeconds))
            }
            elapsed += fragment.durationSeconds
        }
        return found
    }
}
