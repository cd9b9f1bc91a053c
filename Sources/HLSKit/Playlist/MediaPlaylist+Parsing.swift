import Foundation

extension MediaPlaylist {
    /// Parses a media playlist.
    ///
    /// Accepts LF or CRLF line endings, blank lines, comments and tags it does not model (they are
    /// skipped); rejects what it cannot read unambiguously, naming the line.
    public static func parse(_ text: String) throws(PlaylistError) -> MediaPlaylist {
        var parser = Parser()
        var lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
        if lines.count > 1, lines.last?.isEmpty == true {
            lines.removeLast()
        }
        for (index, rawLine) in lines.enumerated() {
            let line = rawLine.trimmingSuffix(while: \.isWhitespace)
            try parser.consume(line, lineNumber: index + 1)
        }
        return try parser.finish(lineCount: lines.count)
    }
}

/// Reads a media playlist line by line; segment tags wait in `pending` until their URI line.
private struct Parser {
    private struct PendingSegment {
        var duration: (seconds: Double, lineNumber: Int)?
        var discontinuity = false
        var programDateTime: Date?
    }

    private var playlist = MediaPlaylist(targetDurationSeconds: 0)
    private var targetDurationSeconds: Int?
    private var mapURI: String?
    private var pending = PendingSegment()

    mutating func consume(_ line: Substring, lineNumber: Int) throws(PlaylistError) {
        if lineNumber == 1 {
            guard line == PlaylistTag.header else {
                throw PlaylistError(line: lineNumber, problem: .missingHeader)
            }
            return
        }
        if line.isEmpty {
            return
        }
        guard line.hasPrefix("#") else {
            try addSegment(uri: String(line), lineNumber: lineNumber)
            return
        }
        let separator = line.firstIndex(of: ":")
        let tag = String(line[..<(separator ?? line.endIndex)])
        let value = separator.map { line[line.index(after: $0)...] } ?? ""
        try apply(tag: tag, value: value, lineNumber: lineNumber)
    }

    func finish(lineCount: Int) throws(PlaylistError) -> MediaPlaylist {
        if let duration = pending.duration {
            throw PlaylistError(line: duration.lineNumber, problem: .durationWithoutURI)
        }
        guard let targetDurationSeconds else {
            throw PlaylistError(line: lineCount, problem: .missingTargetDuration)
        }
        var result = playlist
        result.targetDurationSeconds = targetDurationSeconds
        return result
    }

    private mutating func apply(tag: String, value: Substring, lineNumber: Int) throws(PlaylistError) {
        switch tag {
        case PlaylistTag.version:
            // The version is derived from the tags when rendering; it only has to be well-formed.
            _ = try integer(value, tag: tag, lineNumber: lineNumber)
        case PlaylistTag.targetDuration:
            targetDurationSeconds = try integer(value, tag: tag, lineNumber: lineNumber)
        case PlaylistTag.mediaSequence:
            playlist.mediaSequence = try integer(value, tag: tag, lineNumber: lineNumber)
        case PlaylistTag.discontinuitySequence:
            playlist.discontinuitySequence = try integer(value, tag: tag, lineNumber: lineNumber)
        case PlaylistTag.playlistType:
            guard let type = MediaPlaylist.PlaylistType(rawValue: String(value)) else {
                throw PlaylistError(line: lineNumber, problem: .unknownPlaylistType(String(value)))
            }
            playlist.playlistType = type
        case PlaylistTag.independentSegments:
            playlist.independentSegments = true
        case PlaylistTag.endList:
            playlist.endList = true
        case PlaylistTag.segmentDuration:
            if let earlier = pending.duration {
                throw PlaylistError(line: earlier.lineNumber, problem: .durationWithoutURI)
            }
            // `#EXTINF:<duration>,[<title>]`; the title is not modelled.
            let durationText = value.prefix { $0 != "," }
            guard let seconds = PlaylistNumber.decimalFloatingPoint(durationText) else {
                throw PlaylistError(line: lineNumber, problem: .malformedNumber(tag: tagName(tag), value: String(durationText)))
            }
            pending.duration = (PlaylistNumber.quantizedToMilliseconds(seconds), lineNumber)
        case PlaylistTag.discontinuity:
            pending.discontinuity = true
        case PlaylistTag.programDateTime:
            guard let date = ProgramDateTime.parse(value) else {
                throw PlaylistError(line: lineNumber, problem: .malformedDate(String(value)))
            }
            pending.programDateTime = date
        case PlaylistTag.map:
            mapURI = try quotedAttribute("URI", of: tag, in: value, lineNumber: lineNumber)
        default:
            // Comments and tags this model does not carry (RFC 8216bis 4.1: clients ignore unknown tags).
            break
        }
    }

    private mutating func addSegment(uri: String, lineNumber: Int) throws(PlaylistError) {
        guard let duration = pending.duration else {
            throw PlaylistError(line: lineNumber, problem: .uriWithoutDuration(uri))
        }
        playlist.segments.append(MediaPlaylist.Segment(
            uri: uri, durationSeconds: duration.seconds, mapURI: mapURI,
            discontinuity: pending.discontinuity, programDateTime: pending.programDateTime))
        pending = PendingSegment()
    }

    private func integer(_ value: Substring, tag: String, lineNumber: Int) throws(PlaylistError) -> Int {
        guard let number = PlaylistNumber.decimalInteger(value) else {
            throw PlaylistError(line: lineNumber, problem: .malformedNumber(tag: tagName(tag), value: String(value)))
        }
        return number
    }

    private func quotedAttribute(_ name: String, of tag: String, in value: Substring,
                                 lineNumber: Int) throws(PlaylistError) -> String {
        let attributes: AttributeList
        do {
            attributes = try AttributeList.parse(value)
        } catch {
            throw PlaylistError(line: lineNumber, problem: .malformedAttributeList(tag: tagName(tag), reason: error.reason))
        }
        guard case .quotedString(let string) = attributes[name] else {
            throw PlaylistError(line: lineNumber, problem: .missingAttribute(tag: tagName(tag), name: name))
        }
        return string
    }

    /// The tag as messages name it, without the leading '#'.
    private func tagName(_ tag: String) -> String {
        String(tag.dropFirst())
    }
}

private extension Substring {
    func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var end = endIndex
        while end > startIndex, predicate(self[index(before: end)]) {
            end = index(before: end)
        }
        return self[startIndex..<end]
    }
}
