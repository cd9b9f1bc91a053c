import Foundation
import HLSBase
import HLSKit
import HLSOutput

/// `/recordings/playlist.m3u8?start=…&duration=…` (or `end=`): any time range of a folder of recordings
/// as a VOD playlist of byte ranges (`RecordingRangePlaylist`), and `/recordings/files/…`, the files
/// those ranges name, with range requests; `/recordings/index.json`, the files in order of time, and
/// `/recordings/thumbnail.jpg?at=…`, the keyframe at or before a moment.
///
/// Each file's summary is read once and kept while its size and modification time stay the same: a
/// request reads only what changed since the last one (the file being recorded).
public final class RecordingRanges: Sendable {
    public static let prefix = "/recordings/"
    static let playlistPath = prefix + "playlist.m3u8"
    static let indexPath = prefix + "index.json"
    static let thumbnailPath = prefix + "thumbnail.jpg"
    static let thumbnailsPath = prefix + "thumbnails.json"
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

    /// The recordings in order of time with their start, end and gaps (`RecordingTimeline`), without
    /// fragments or the folder's own name.
    func indexReply() -> HTTPResponse {
        let entries = RecordingTimeline.ordered(summaries().map { RecordingScanner.Scanned(path: $0.path, summary: $0.summary) })
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-cache")]
                                + ServerHeaders.cors,
                            body: .bytes(Array(RecordingTimeline.json(entries, directory: nil, fragments: false).utf8)))
    }

    /// The moments a timeline shows a thumbnail for (`RecordingThumbnails`), in order of time:
    /// `{"thumbnails": [{"at": "2026-12-01T10:01:00.000Z", "path": "2026-12-01/10-00.mp4"}]}`.
    func thumbnailsReply() -> HTTPResponse {
        struct Listed: Encodable {
            var at: String
            var path: String
        }
        struct Body: Encodable {
            var thumbnails: [Listed]
        }
        let files = RecordingTimeline.ordered(summaries().map { RecordingScanner.Scanned(path: $0.path, summary: $0.summary) })
            .compactMap { file in file.summary.start.flatMap { start in file.summary.end.map { (file.path, start, $0) } } }
            .map { (path: $0.0, start: $0.1, end: $0.2) }
        let body = Body(thumbnails: RecordingThumbnails.moments(files).map { Listed(at: ProgramDateTime.format($0.at), path: $0.path) })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        guard let data = try? encoder.encode(body) else { preconditionFailure("strings always encode") }
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-cache")]
                                + ServerHeaders.cors, body: .bytes(Array(data)))
    }

    /// A thumbnail of the fragment that holds `at=` (RFC 3339): its first picture, the keyframe at or
    /// nearest before that moment.
    func thumbnailReply(_ request: HTTPRequest, pictures: StreamPictures, metrics: ServerMetrics) -> HTTPResponse {
        guard let text = request.query["at"] else {
            return .text(400, "at= is missing: give at=2026-12-01T10:02:00Z", headers: ServerHeaders.noStore)
        }
        guard let at = ProgramDateTime.parse(text[...]) else {
            return .text(400, "at=\(text) is not a date-time such as 2026-12-01T10:02:00Z", headers: ServerHeaders.noStore)
        }
        guard let (path, initByteCount, fragment) = Self.fragment(at: at, in: summaries()) else {
            return .text(404, "no recording at \(ProgramDateTime.format(at))", headers: ServerHeaders.noStore)
        }
        let fullPath = root + "/" + path
        do {
            let picture = try pictures.thumbnail(key: "\(path)@\(fragment.offset)+\(fragment.byteCount)") {
                (try StreamPictures.read(fullPath, length: initByteCount),
                 try StreamPictures.read(fullPath, offset: fragment.offset, length: fragment.byteCount))
            }
            if picture.made { metrics.countPictureMade() }
            return StreamPictures.response(picture, request: request)
        } catch let problem as PictureProblem {
            return problem.response
        } catch {
            return .text(500, "the picture of \(path) at \(ProgramDateTime.format(at)) cannot be made: \(error)",
                         headers: ServerHeaders.noStore)
        }
    }

    /// The fragment whose time holds `at` (the latest to start at or before it, in a file that lasts
    /// until then), with its file's path and init section size.
    static func fragment(at: Date, in files: [(path: String, summary: RecordingFileSummary)])
        -> (path: String, initByteCount: Int, fragment: RecordingFileSummary.Fragment)? {
        var best: (path: String, initByteCount: Int, fragment: RecordingFileSummary.Fragment)?
        // Times are published to the millisecond (index.json, playlists): a moment asked for may fall
        // that much before the start it was read from.
        let latest = at.addingTimeInterval(ProgramDateTime.precisionSeconds)
        for file in files where file.summary.initByteCount > 0 {
            guard let start = file.summary.start, let end = file.summary.end, start <= latest, at <= end else { continue }
            for fragment in file.summary.fragments {
                guard let fragmentStart = fragment.start, fragmentStart <= latest else { continue }
                if let chosen = best?.fragment.start, chosen >= fragmentStart { continue }
                best = (file.path, file.summary.initByteCount, fragment)
            }
        }
        return best
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
