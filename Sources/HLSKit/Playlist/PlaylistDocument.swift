/// Any HLS playlist, media or multivariant, read line by line without judging it (RFC 8216bis 4.1):
/// the tags with their line numbers and raw values, and the URI lines. What the lines mean is read
/// by `MediaPlaylistDocument` and `MasterPlaylistDocument`, which record what they cannot read
/// instead of stopping at the first problem, so a validator can report everything at once.
public struct PlaylistDocument: Sendable, Equatable {
    public struct Tag: Sendable, Equatable {
        /// The tag name without the leading '#', such as `EXT-X-TARGETDURATION`.
        public var name: String
        /// What follows the ':' (nil when there is no ':').
        public var value: String?
        public var line: Int
    }

    public enum Entry: Sendable, Equatable {
        case tag(Tag)
        case uri(String, line: Int)
    }

    /// A line that is not what the specification allows there; `section` is the RFC 8216bis section.
    public struct Issue: Sendable, Equatable {
        public var line: Int
        public var section: String
        public var message: String
        /// Where a strict reading stops (`MediaPlaylist.parse`): set on the issues that leave a value the
        /// playlist model needs unreadable; nil on those it reads past.
        public var error: PlaylistError?

        public init(line: Int, section: String, message: String, error: PlaylistError? = nil) {
            self.line = line
            self.section = section
            self.message = message
            self.error = error
        }
    }

    /// Tags and URI lines in order; blank lines and comments are left out.
    public var entries: [Entry]
    /// Whether the first line is `#EXTM3U` (RFC 8216bis 4.4.1.1).
    public var hasHeader: Bool
    public var lineCount: Int

    /// Tags that only a multivariant playlist carries (RFC 8216bis 4.4.6).
    static let multivariantTags: Set<String> = [
        "EXT-X-STREAM-INF", "EXT-X-MEDIA", "EXT-X-I-FRAME-STREAM-INF", "EXT-X-SESSION-DATA", "EXT-X-SESSION-KEY",
        "EXT-X-CONTENT-STEERING",
    ]
    /// Tags that only a media playlist carries (RFC 8216bis 4.4.3 to 4.4.5).
    static let mediaTags: Set<String> = [
        "EXTINF", "EXT-X-TARGETDURATION", "EXT-X-MEDIA-SEQUENCE", "EXT-X-DISCONTINUITY-SEQUENCE", "EXT-X-ENDLIST",
        "EXT-X-PLAYLIST-TYPE", "EXT-X-I-FRAMES-ONLY", "EXT-X-PART-INF", "EXT-X-SERVER-CONTROL", "EXT-X-BYTERANGE",
        "EXT-X-DISCONTINUITY", "EXT-X-KEY", "EXT-X-MAP", "EXT-X-PROGRAM-DATE-TIME", "EXT-X-GAP", "EXT-X-BITRATE",
        "EXT-X-PART", "EXT-X-SKIP", "EXT-X-PRELOAD-HINT", "EXT-X-RENDITION-REPORT", "EXT-X-DATERANGE",
    ]

    /// Reads `text`; LF or CRLF line endings. Never fails: a missing header is `hasHeader == false`.
    public init(text: String) {
        var lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
        if lines.count > 1, lines.last?.isEmpty == true {
            lines.removeLast()
        }
        lineCount = lines.count
        hasHeader = lines.first.map { $0.trimmingTrailingWhitespace() == "#EXTM3U" } ?? false
        entries = []
        for (index, rawLine) in lines.enumerated().dropFirst(hasHeader ? 1 : 0) {
            let line = rawLine.trimmingTrailingWhitespace()
            if line.isEmpty {
                continue
            }
            guard line.hasPrefix("#") else {
                entries.append(.uri(String(line), line: index + 1))
                continue
            }
            // Comments start with '#' but not '#EXT' (RFC 8216bis 4.1).
            guard line.hasPrefix("#EXT") else { continue }
            let separator = line.firstIndex(of: ":")
            let name = line[line.index(after: line.startIndex)..<(separator ?? line.endIndex)]
            let value = separator.map { String(line[line.index(after: $0)...]) }
            entries.append(.tag(Tag(name: String(name), value: value, line: index + 1)))
        }
    }

    public var tags: [Tag] {
        entries.compactMap { if case .tag(let tag) = $0 { tag } else { nil } }
    }

    /// Whether the playlist is multivariant: it carries a tag only multivariant playlists carry.
    public var isMultivariant: Bool {
        tags.contains { Self.multivariantTags.contains($0.name) }
    }
}

extension Substring {
    func trimmingTrailingWhitespace() -> Substring {
        var end = endIndex
        while end > startIndex, self[index(before: end)].isWhitespace {
            end = index(before: end)
        }
        return self[startIndex..<end]
    }
}
