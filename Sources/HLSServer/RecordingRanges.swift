import Foundation
import HLSKit
import HLSOutput

/// `/recordings/playlist.m3u8?start=…&duration=…` (or `end=`): any time range of a folder of recordings
/// as a VOD playlist of byte ranges (`RecordingRangePlaylist`), and `/recordings/files/…`, the files
/// those ranges name, with range requests.
///
/// Each file's summary is read once and kept while its size and modification time stay the same: a
/// request reads only what changed since the last one (the file being recorded).
public final class RecordingRanges: Sendable {
    public static let prefix = "/recordings/"
    static let playlistPath = prefix + "playlist.m3u8"
    static let filesFolder = "files"
    /// A range longer than this is refused as absurd.
    static let longestRangeSeconds = 31.0 * 86_400

    public let root: String
    private struct Known {
        var size: Int
        var modified: Date
        var summary: RecordingFileSummary
    }
    private let known = Locked<[String: Known]>([:])

    public init(root: String) {
        self.root = root.hasSuffix("/") && root.count > 1 ? String(root.dropLast()) : root
    }

    /// A request below `/recordings/`: the playlist for a range; nil for a file (the caller serves it
    /// from `filePath`) or for anything else (404).
    func playlistReply(_ request: HTTPRequest) -> HTTPResponse {
        let from: Date, to: Date
        switch Self.range(request.query) {
        case .success(let range): (from, to) = range
        case .failure(let problem): return .text(400, problem.message, headers: ServerHeaders.noStore)
        }
        let files = summaries().map { RecordingRangePlaylist.File(uri: Self.filesFolder + "/" + $0.path, summary: $0.summary) }
        guard let playlist = RecordingRangePlaylist.make(files: files, from: from, to: to) else {
            return .text(404, "no recording between \(ProgramDateTime.format(from)) and \(ProgramDateTime.format(to))",
                         headers: ServerHeaders.noStore)
        }
        return ServerHeaders.playlist(Array(playlist.render().utf8), cacheControl: "no-cache",
                                      gzip: ServerHeaders.acceptsGzip(request.header("Accept-Encoding")))
    }

    struct Problem: Error {
        var message: String
    }

    /// `start` (RFC 3339) and `duration` (seconds) or `end`.
    static func range(_ query: [String: String]) -> Result<(Date, Date), Problem> {
        guard let startText = query["start"] else {
            return .failure(Problem(message: "start= is missing: give start=2026-12-01T10:02:00Z and duration=SECONDS or end="))
        }
        guard let start = ProgramDateTime.parse(startText[...]) else {
            return .failure(Problem(message: "start=\(startText) is not a date-time such as 2026-12-01T10:02:00Z"))
        }
        let end: Date
        if let durationText = query["duration"] {
            guard query["end"] == nil else { return .failure(Problem(message: "give duration= or end=, not both")) }
            guard let seconds = Double(durationText), seconds.isFinite, seconds > 0 else {
                return .failure(Problem(message: "duration=\(durationText) is not a number of seconds above zero"))
            }
            end = start.addingTimeInterval(seconds)
        } else if let endText = query["end"] {
            guard let parsed = ProgramDateTime.parse(endText[...]) else {
                return .failure(Problem(message: "end=\(endText) is not a date-time such as 2026-12-01T10:15:00Z"))
            }
            end = parsed
        } else {
            return .failure(Problem(message: "give duration=SECONDS or end=DATE-TIME with start="))
        }
        guard end > start else { return .failure(Problem(message: "the range ends before it starts")) }
        guard end.timeIntervalSince(start) <= longestRangeSeconds else {
            return .failure(Problem(message: "a range of more than 31 days is not served"))
        }
        return .success((start, end))
    }

    /// The path below `root` of a request for a recording file, or nil: every component plain ASCII
    /// letters, digits, `-` and `_`, ending in `.mp4`.
    static func filePath(_ requestPath: String) -> String? {
        let prefix = Self.prefix + filesFolder + "/"
        guard requestPath.hasPrefix(prefix) else { return nil }
        let components = requestPath.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard (1...StreamServer.maximumDepth + 1).contains(components.count), let name = components.last, name.hasSuffix(".mp4") else { return nil }
        let plain = StreamServer.isPlain
        for directory in components.dropLast() where directory.isEmpty || !directory.allSatisfy(plain) { return nil }
        let stem = name.dropLast(4)
        guard !stem.isEmpty, stem.allSatisfy(plain) else { return nil }
        return components.joined(separator: "/")
    }

    /// Every recording file below the root with its summary, read again only when it changed.
    private func summaries() -> [(path: String, summary: RecordingFileSummary)] {
        let found = (RecordingScanner.files(below: root) ?? []).filter {
            Self.filePath(Self.prefix + Self.filesFolder + "/" + $0.path) != nil
        }
        let cached = known.withLock { $0 }
        var fresh: [String: Known] = [:]
        for file in found {
            if let previous = cached[file.path], previous.size == file.byteCount, previous.modified == file.modified {
                fresh[file.path] = previous
            } else {
                fresh[file.path] = Known(size: file.byteCount, modified: file.modified,
                                         summary: RecordingScanner.read(root + "/" + file.path).0)
            }
        }
        known.withLock { $0 = fresh }
        return fresh.map { ($0.key, $0.value.summary) }
    }
}
