import Foundation

/// A media playlist as written, every tag kept with its line, including what `MediaPlaylist`
/// does not model: byte ranges, I-frame playlists and the low-latency tags (RFC 8216bis 4.4.3 to
/// 4.4.5). Values that cannot be read are left out and recorded in `issues`.
public struct MediaPlaylistDocument: Sendable {
    /// `<length>[@<offset>]` (RFC 8216bis 4.4.4.2).
    public struct ByteRange: Sendable, Equatable {
        public var length: Int
        public var offset: Int?

        init?(_ text: Substring) {
            let parts = text.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
            guard let length = PlaylistNumber.decimalInteger(parts[0]) else { return nil }
            var offset: Int?
            if parts.count == 2 {
                guard let value = PlaylistNumber.decimalInteger(parts[1]) else { return nil }
                offset = value
            }
            self.length = length
            self.offset = offset
        }
    }

    public struct Map: Sendable, Equatable {
        public var uri: String
        public var byteRange: ByteRange?
        public var line: Int
    }

    public struct Part: Sendable, Equatable {
        public var uri: String
        public var durationSeconds: Double
        public var independent: Bool
        public var byteRange: ByteRange?
        public var gap: Bool
        public var line: Int
    }

    public struct Segment: Sendable, Equatable {
        public var uri: String
        /// The line of the URI.
        public var line: Int
        public var durationSeconds: Double
        /// The line of the EXTINF.
        public var durationLine: Int
        /// The byte range, with the offset made explicit when the tag left it implicit.
        public var byteRange: ByteRange?
        public var discontinuity: Bool
        public var map: Map?
        public var programDateTime: Date?
        public var programDateTimeLine: Int?
        public var gap: Bool
        /// The parts listed before this segment (LL-HLS), which together are this segment.
        public var parts: [Part]
        public var mediaSequence: Int
        public var discontinuitySequence: Int
        /// Whole-segment encryption (EXT-X-KEY METHOD=AES-128): the bytes are not boxes.
        public var encrypted: Bool
        /// The EXT-X-KEY in force, when its METHOD is not NONE: its URI and IV as written.
        public var key: Key? = nil
    }

    public struct Key: Sendable, Equatable {
        public var method: String
        public var uri: String
        public var iv: String?
        public var line: Int
        /// KEYFORMAT: "identity" (the default) is a key's 16 bytes at its URI; others are a DRM system's.
        public var keyFormat = "identity"
    }

    public struct PartInformation: Sendable, Equatable {
        public var partTargetSeconds: Double
        public var line: Int
    }

    public struct ServerControl: Sendable, Equatable {
        public var canBlockReload: Bool
        public var canSkipUntilSeconds: Double?
        public var holdBackSeconds: Double?
        public var partHoldBackSeconds: Double?
        public var line: Int
    }

    public struct PreloadHint: Sendable, Equatable {
        public var type: String
        public var uri: String
        public var line: Int
    }

    public struct Skip: Sendable, Equatable {
        public var skippedSegments: Int
        public var line: Int
    }

    public struct RenditionReport: Sendable, Equatable {
        public var uri: String
        public var lastMediaSequence: Int?
        public var lastPart: Int?
        public var line: Int
    }

    /// A tag with its line, for rules that point at it.
    public struct Located<Value: Sendable & Equatable>: Sendable, Equatable {
        public var value: Value
        public var line: Int
    }

    public var versions: [Located<Int>] = []
    public var targetDuration: Located<Int>?
    public var mediaSequence: Located<Int>?
    public var discontinuitySequence: Located<Int>?
    public var playlistType: Located<String>?
    public var endList: [Int] = []
    public var iFramesOnly = false
    public var independentSegments = false
    public var partInformation: PartInformation?
    public var serverControl: ServerControl?
    public var preloadHints: [PreloadHint] = []
    public var skip: Skip?
    public var renditionReports: [RenditionReport] = []
    public var segments: [Segment] = []
    /// Parts after the last segment: the segment being written.
    public var trailingParts: [Part] = []
    /// Lines with an EXTINF written with a fraction (version 3, RFC 8216bis 8).
    public var decimalDurationLines: [Int] = []
    public var byteRangeLines: [Int] = []
    /// Lines of EXT-X-DEFINE tags (their variables are substituted before the document is read).
    public var defineLines: [Int] = []
    public var mapLines: [Int] = []
    /// Tags that appear at most once but appear again, and tags out of place.
    public var issues: [PlaylistDocument.Issue] = []
    /// Every tag name, for version and feature checks.
    public var tagNames: Set<String> = []
    public var lineCount: Int
    /// Whether the first line is `#EXTM3U`.
    public var hasHeader: Bool

    public var version: Int { versions.first?.value ?? 1 }

    /// Every segment's media, parts included: what a player downloads.
    public var uris: [(uri: String, line: Int)] {
        segments.flatMap { segment in
            [segment.map.map { ($0.uri, $0.line) }].compactMap { $0 } + segment.parts.map { ($0.uri, $0.line) }
                + [(segment.uri, segment.line)]
        }
    }

    public init(_ document: PlaylistDocument) {
        lineCount = document.lineCount
        hasHeader = document.hasHeader
        var builder = Builder()
        for entry in document.entries {
            switch entry {
            case .tag(let tag):
                tagNames.insert(tag.name)
                builder.apply(tag, to: &self)
            case .uri(let uri, let line):
                builder.addSegment(uri: uri, line: line, to: &self)
            }
        }
        if let pending = builder.pendingDurationLine {
            issues.append(.init(line: pending, section: "4.4.4.1", message: "EXTINF is not followed by a segment URI",
                                error: PlaylistError(line: pending, problem: .durationWithoutURI)))
        }
        trailingParts = builder.parts
    }

    public init(text: String) {
        self.init(PlaylistDocument(text: text))
    }
}

/// Segment tags wait here until their URI line.
private struct Builder {
    var duration: Double?
    var pendingDurationLine: Int?
    var byteRange: (range: MediaPlaylistDocument.ByteRange, line: Int)?
    var discontinuity = false
    var programDateTime: (date: Date, line: Int)?
    var gap = false
    var parts: [MediaPlaylistDocument.Part] = []
    var map: MediaPlaylistDocument.Map?
    /// Where the previous byte-range segment ended, for a range without an offset.
    var previousRangeEnd: (uri: String, end: Int)?
    /// The EXT-X-KEY METHOD in force.
    var keyMethod = "NONE"
    var key: MediaPlaylistDocument.Key?
    var discontinuities = 0

    static let playlistTypes: Set<String> = ["VOD", "EVENT"]
    static let hintTypes: Set<String> = ["PART", "MAP"]
    static let yesNo: Set<String> = ["YES", "NO"]

    mutating func apply(_ tag: PlaylistDocument.Tag, to playlist: inout MediaPlaylistDocument) {
        let value = Substring(tag.value ?? "")
        func issue(_ section: String, _ message: String, _ problem: PlaylistError.Problem? = nil) {
            playlist.issues.append(.init(line: tag.line, section: section, message: message,
                                         error: problem.map { PlaylistError(line: tag.line, problem: $0) }))
        }
        func integer(_ section: String) -> Int? {
            guard let number = PlaylistNumber.decimalInteger(value) else {
                issue(section, "\(tag.name) value \"\(value)\" is not a decimal-integer",
                      .malformedNumber(tag: tag.name, value: String(value)))
                return nil
            }
            return number
        }
        func once<T>(_ existing: T?, _ section: String) {
            if existing != nil {
                issue(section, "\(tag.name) appears more than once; a playlist carries it at most once")
            }
        }
        func attributes(_ read: (inout AttributeReader) -> Void) {
            var reader = AttributeReader(tag)
            read(&reader)
            playlist.issues += reader.issues
        }
        switch tag.name {
        case "EXT-X-VERSION":
            if let number = integer("4.4.1.2") {
                playlist.versions.append(.init(value: number, line: tag.line))
            }
        case "EXT-X-TARGETDURATION":
            once(playlist.targetDuration, "4.4.3.1")
            if let number = integer("4.4.3.1") { playlist.targetDuration = .init(value: number, line: tag.line) }
        case "EXT-X-MEDIA-SEQUENCE":
            once(playlist.mediaSequence, "4.4.3.2")
            if !playlist.segments.isEmpty || duration != nil {
                issue("4.4.3.2", "EXT-X-MEDIA-SEQUENCE must appear before the first Media Segment")
            }
            if let number = integer("4.4.3.2") { playlist.mediaSequence = .init(value: number, line: tag.line) }
        case "EXT-X-DISCONTINUITY-SEQUENCE":
            once(playlist.discontinuitySequence, "4.4.3.3")
            if !playlist.segments.isEmpty || duration != nil || discontinuity {
                issue("4.4.3.3", "EXT-X-DISCONTINUITY-SEQUENCE must appear before the first Media Segment "
                    + "and before any EXT-X-DISCONTINUITY")
            }
            if let number = integer("4.4.3.3") {
                playlist.discontinuitySequence = .init(value: number, line: tag.line)
            }
        case "EXT-X-PLAYLIST-TYPE":
            once(playlist.playlistType, "4.4.3.5")
            if Self.playlistTypes.contains(String(value)) {
                playlist.playlistType = .init(value: String(value), line: tag.line)
            } else {
                issue("4.4.3.5", "EXT-X-PLAYLIST-TYPE \"\(value)\" is neither VOD nor EVENT",
                      .unknownPlaylistType(String(value)))
            }
        case "EXT-X-ENDLIST":
            playlist.endList.append(tag.line)
        case "EXT-X-I-FRAMES-ONLY":
            playlist.iFramesOnly = true
        case "EXT-X-INDEPENDENT-SEGMENTS":
            playlist.independentSegments = true
        case "EXTINF":
            if let earlier = pendingDurationLine {
                playlist.issues.append(.init(
                    line: tag.line, section: "4.4.4.1",
                    message: "EXTINF follows the EXTINF of line \(earlier) with no segment URI between them",
                    error: PlaylistError(line: earlier, problem: .durationWithoutURI)))
            }
            let durationText = value.prefix { $0 != "," }
            if !value.contains(",") {
                issue("4.4.4.1", "EXTINF must be written <duration>,[<title>] (the comma is missing)")
            }
            pendingDurationLine = tag.line
            if let seconds = PlaylistNumber.decimalFloatingPoint(durationText) {
                duration = seconds
                if durationText.contains(".") { playlist.decimalDurationLines.append(tag.line) }
            } else {
                duration = 0
                issue("4.4.4.1", "EXTINF duration \"\(durationText)\" is not a decimal number",
                      .malformedNumber(tag: tag.name, value: String(durationText)))
            }
        case "EXT-X-BYTERANGE":
            playlist.byteRangeLines.append(tag.line)
            if let range = MediaPlaylistDocument.ByteRange(value) {
                byteRange = (range, tag.line)
            } else {
                issue("4.4.4.2", "EXT-X-BYTERANGE \"\(value)\" is not <length>[@<offset>]")
            }
        case "EXT-X-DISCONTINUITY":
            discontinuity = true
        case "EXT-X-GAP":
            gap = true
        case "EXT-X-PROGRAM-DATE-TIME":
            if let date = ProgramDateTime.parse(value) {
                programDateTime = (date, tag.line)
            } else {
                issue("4.4.4.6", "EXT-X-PROGRAM-DATE-TIME \"\(value)\" is not an ISO 8601 date-time with a time zone",
                      .malformedDate(String(value)))
            }
        case "EXT-X-MAP":
            playlist.mapLines.append(tag.line)
            let issuesBefore = playlist.issues.count
            var uri: String?
            attributes { reader in
                reader.require("URI", section: "4.4.4.5")
                uri = reader.quotedString("URI", section: "4.4.4.5")
                if let uri {
                    map = .init(uri: uri, byteRange: reader.quotedByteRange("BYTERANGE", section: "4.4.4.5"),
                                line: tag.line)
                }
            }
            // Without a quoted URI the segments that follow have no init section to name.
            if uri == nil, issuesBefore < playlist.issues.count {
                let problem: PlaylistError.Problem
                do {
                    _ = try AttributeList.parse(value)
                    problem = .missingAttribute(tag: tag.name, name: "URI")
                } catch {
                    problem = .malformedAttributeList(tag: tag.name, reason: error.reason)
                }
                playlist.issues[issuesBefore].error = PlaylistError(line: tag.line, problem: problem)
            }
        case "EXT-X-PART-INF":
            once(playlist.partInformation, "4.4.3.7")
            attributes { reader in
                reader.require("PART-TARGET", section: "4.4.3.7")
                if let target = reader.decimalFloatingPoint("PART-TARGET", section: "4.4.3.7") {
                    playlist.partInformation = .init(partTargetSeconds: target, line: tag.line)
                }
            }
        case "EXT-X-SERVER-CONTROL":
            once(playlist.serverControl, "4.4.3.8")
            attributes { reader in
                playlist.serverControl = .init(
                    canBlockReload: reader.enumeratedString("CAN-BLOCK-RELOAD", allowed: Self.yesNo,
                                                            section: "4.4.3.8") == "YES",
                    canSkipUntilSeconds: reader.decimalFloatingPoint("CAN-SKIP-UNTIL", section: "4.4.3.8"),
                    holdBackSeconds: reader.decimalFloatingPoint("HOLD-BACK", section: "4.4.3.8"),
                    partHoldBackSeconds: reader.decimalFloatingPoint("PART-HOLD-BACK", section: "4.4.3.8"),
                    line: tag.line)
                _ = reader.enumeratedString("CAN-SKIP-DATERANGES", allowed: Self.yesNo, section: "4.4.3.8")
            }
        case "EXT-X-PART":
            attributes { reader in
                reader.require("URI", section: "4.4.4.9")
                reader.require("DURATION", section: "4.4.4.9")
                let uri = reader.quotedString("URI", section: "4.4.4.9")
                let seconds = reader.decimalFloatingPoint("DURATION", section: "4.4.4.9")
                let independent = reader.enumeratedString("INDEPENDENT", allowed: Self.yesNo, section: "4.4.4.9")
                let gap = reader.enumeratedString("GAP", allowed: Self.yesNo, section: "4.4.4.9")
                let range = reader.quotedByteRange("BYTERANGE", section: "4.4.4.9")
                if let uri, let seconds {
                    parts.append(.init(uri: uri, durationSeconds: seconds, independent: independent == "YES",
                                       byteRange: range, gap: gap == "YES", line: tag.line))
                }
            }
        case "EXT-X-PRELOAD-HINT":
            attributes { reader in
                reader.require("TYPE", section: "4.4.5.3")
                reader.require("URI", section: "4.4.5.3")
                let type = reader.enumeratedString("TYPE", allowed: Self.hintTypes, section: "4.4.5.3")
                let uri = reader.quotedString("URI", section: "4.4.5.3")
                _ = reader.decimalInteger("BYTERANGE-START", section: "4.4.5.3")
                _ = reader.decimalInteger("BYTERANGE-LENGTH", section: "4.4.5.3")
                if let type, let uri {
                    if playlist.preloadHints.contains(where: { $0.type == type }) {
                        issue("4.4.5.3", "more than one EXT-X-PRELOAD-HINT of TYPE=\(type)")
                    }
                    playlist.preloadHints.append(.init(type: type, uri: uri, line: tag.line))
                }
            }
        case "EXT-X-DEFINE":
            playlist.defineLines.append(tag.line)
        case "EXT-X-SKIP":
            once(playlist.skip, "4.4.5.2")
            attributes { reader in
                reader.require("SKIPPED-SEGMENTS", section: "4.4.5.2")
                if let count = reader.decimalInteger("SKIPPED-SEGMENTS", section: "4.4.5.2") {
                    playlist.skip = .init(skippedSegments: count, line: tag.line)
                }
            }
        case "EXT-X-RENDITION-REPORT":
            attributes { reader in
                reader.require("URI", section: "4.4.5.4")
                if let uri = reader.quotedString("URI", section: "4.4.5.4") {
                    playlist.renditionReports.append(.init(
                        uri: uri, lastMediaSequence: reader.decimalInteger("LAST-MSN", section: "4.4.5.4"),
                        lastPart: reader.decimalInteger("LAST-PART", section: "4.4.5.4"), line: tag.line))
                }
            }
        case "EXT-X-KEY":
            attributes { reader in
                reader.require("METHOD", section: "4.4.4.4")
                keyMethod = reader.enumeratedString("METHOD", allowed: ["NONE", "AES-128", "SAMPLE-AES", "SAMPLE-AES-CTR"],
                                                    section: "4.4.4.4") ?? keyMethod
                if keyMethod != "NONE" { reader.require("URI", section: "4.4.4.4") }
                let uri = keyMethod == "NONE" ? nil : reader.quotedString("URI", section: "4.4.4.4")
                let iv = reader.enumeratedString("IV", section: "4.4.4.4")
                let keyFormat = reader.quotedString("KEYFORMAT", section: "4.4.4.4") ?? "identity"
                key = uri.map { MediaPlaylistDocument.Key(method: keyMethod, uri: $0, iv: iv, line: tag.line, keyFormat: keyFormat) }
            }
        case "EXT-X-START":
            attributes { reader in
                reader.require("TIME-OFFSET", section: "4.4.2.2")
                _ = reader.signedDecimalFloatingPoint("TIME-OFFSET", section: "4.4.2.2")
                _ = reader.enumeratedString("PRECISE", allowed: Self.yesNo, section: "4.4.2.2")
            }
        default:
            // Other tags (EXT-X-KEY, EXT-X-DATERANGE, EXT-X-BITRATE …) are accepted as written.
            break
        }
    }

    mutating func addSegment(uri: String, line: Int, to playlist: inout MediaPlaylistDocument) {
        guard let seconds = duration else {
            playlist.issues.append(.init(line: line, section: "4.4.4.1",
                                         message: "segment URI \"\(uri)\" has no EXTINF before it",
                                         error: PlaylistError(line: line, problem: .uriWithoutDuration(uri))))
            return
        }
        if discontinuity { discontinuities += 1 }
        var range = byteRange?.range
        if let given = byteRange, given.range.offset == nil {
            if let previous = previousRangeEnd, previous.uri == uri {
                range?.offset = previous.end
            } else {
                playlist.issues.append(.init(
                    line: given.line, section: "4.4.4.2",
                    message: "EXT-X-BYTERANGE has no offset, but the previous segment is not a sub-range of \(uri)"))
            }
        }
        previousRangeEnd = range.map { (uri, ($0.offset ?? 0) + $0.length) }
        let firstSequence = playlist.mediaSequence?.value ?? 0
        playlist.segments.append(MediaPlaylistDocument.Segment(
            uri: uri, line: line, durationSeconds: seconds, durationLine: pendingDurationLine ?? line,
            byteRange: range, discontinuity: discontinuity, map: map,
            programDateTime: programDateTime?.date, programDateTimeLine: programDateTime?.line, gap: gap,
            parts: parts, mediaSequence: firstSequence + (playlist.skip?.skippedSegments ?? 0) + playlist.segments.count,
            discontinuitySequence: (playlist.discontinuitySequence?.value ?? 0) + discontinuities,
            encrypted: keyMethod == "AES-128", key: key))
        duration = nil
        pendingDurationLine = nil
        byteRange = nil
        discontinuity = false
        programDateTime = nil
        gap = false
        parts = []
    }
}
