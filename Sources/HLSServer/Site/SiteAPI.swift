import Foundation

/// `/api/v1/streams` (`{"streams": [...]}`) and `/api/v1/streams/NAME` (one of them) as JSON. Every
/// key is always there; a figure not known yet is null.
enum SiteAPI {
    struct Stream: Encodable {
        var name: String
        var status: StreamStatus
        var viewers: Int
        var recordings: Bool

        enum Keys: String, CodingKey {
            case name, path, state, reason, input, renditions, bitsPerSecond, lastSegmentAgeSeconds, framesDropped,
                 errors, recording, recordings, publishBacklog, viewers
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(name, forKey: .name)
            try container.encode("/" + name + "/", forKey: .path)
            try container.encode(status.state.name, forKey: .state)
            try container.encode(status.state.reason, forKey: .reason)
            try container.encode(status.input, forKey: .input)
            try container.encode(status.renditions.map(Rendition.init), forKey: .renditions)
            try container.encode(status.bitsPerSecond, forKey: .bitsPerSecond)
            try container.encode(finite(status.lastSegmentAgeSeconds).map { ($0 * 1000).rounded() / 1000 },
                                 forKey: .lastSegmentAgeSeconds)
            try container.encode(status.framesDropped, forKey: .framesDropped)
            try container.encode(status.errors, forKey: .errors)
            try container.encode(status.recording.map(Recording.init), forKey: .recording)
            // Whether `/NAME/recordings/` answers (its timeline on the player page).
            try container.encode(recordings, forKey: .recordings)
            try container.encode(status.publishBacklog.map(Backlog.init), forKey: .publishBacklog)
            try container.encode(viewers, forKey: .viewers)
        }
    }

    struct Rendition: Encodable {
        var name: String
        var width: Int?
        var height: Int?
        var bitsPerSecond: Int?

        init(_ rendition: StreamStatus.Rendition) {
            (name, width, height, bitsPerSecond) = (rendition.name, rendition.width, rendition.height, rendition.bitsPerSecond)
        }

        enum Keys: String, CodingKey { case name, width, height, bitsPerSecond }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(name, forKey: .name)
            try container.encode(width, forKey: .width)
            try container.encode(height, forKey: .height)
            try container.encode(bitsPerSecond, forKey: .bitsPerSecond)
        }
    }

    struct Recording: Encodable {
        var folder: String
        var filesDeleted: Int

        init(_ recording: StreamStatus.Recording) {
            (folder, filesDeleted) = (recording.folder, recording.filesDeleted)
        }
    }

    struct Backlog: Encodable {
        var files: Int
        var mediaSeconds: Double
        var failures: Int

        init(_ backlog: StreamStatus.PublishBacklog) {
            (files, mediaSeconds, failures) = (backlog.files, finite(backlog.mediaSeconds) ?? 0, backlog.failures)
        }
    }

    /// JSON has no infinity or NaN.
    static func finite(_ value: Double?) -> Double? {
        value.flatMap { $0.isFinite ? $0 : nil }
    }

    static func list(_ entries: [SiteServer.Entry]) -> String {
        struct List: Encodable { var streams: [Stream] }
        return encode(List(streams: entries.map(stream)))
    }

    static func one(_ entry: SiteServer.Entry) -> String {
        encode(stream(entry))
    }

    private static func stream(_ entry: SiteServer.Entry) -> Stream {
        Stream(name: entry.name, status: entry.status, viewers: entry.viewers, recordings: entry.recordings)
    }

    private static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Every value here encodes; a failure would be a programming error.
        guard let data = try? encoder.encode(value) else { preconditionFailure("the streams' JSON did not encode") }
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
