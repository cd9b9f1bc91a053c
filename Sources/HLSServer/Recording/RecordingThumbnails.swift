import Foundation
import HLSKit

/// The moments a recordings timeline shows a thumbnail for: each file's start and every whole minute
/// inside a file, at most one per second, the timeline's label (`10:01:00`). A file cut at the first
/// keyframe after a whole minute ends just past it, where the next file starts: that minute is the next
/// file's start, whose picture is the one playback from the moment shows, not a second thumbnail of
/// the same label with the older file's last keyframe.
enum RecordingThumbnails {
    struct Moment: Equatable {
        var at: Date
        /// The file the moment is in.
        var path: String
    }

    /// `files` in order of time, with their start and end as published (to the millisecond).
    static func moments(_ files: [(path: String, start: Date, end: Date)]) -> [Moment] {
        let millisecondsPerMinute: Int64 = 60_000
        let milliseconds = { (date: Date) in Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        let startSeconds = Set(files.map { floorDivide(milliseconds($0.start), 1000) })
        var moments: [(milliseconds: Int64, path: String)] = []
        for file in files {
            let start = milliseconds(file.start), end = milliseconds(file.end)
            moments.append((start, file.path))
            var minute = floorDivide(start, millisecondsPerMinute) * millisecondsPerMinute + millisecondsPerMinute
            while minute < end {
                if !startSeconds.contains(minute / 1000) { moments.append((minute, file.path)) }
                minute += millisecondsPerMinute
            }
        }
        return moments.map { Moment(at: Date(timeIntervalSince1970: Double($0.milliseconds) / 1000), path: $0.path) }
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : -((-value + divisor - 1) / divisor)
    }
}
