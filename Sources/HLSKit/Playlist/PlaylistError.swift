/// A playlist that cannot be parsed: the 1-based line where parsing stopped and what is wrong there.
public struct PlaylistError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Problem: Sendable, Equatable {
        case missingHeader
        case malformedNumber(tag: String, value: String)
        case malformedDate(String)
        case malformedAttributeList(tag: String, reason: String)
        case missingAttribute(tag: String, name: String)
        case unknownPlaylistType(String)
        /// An EXTINF that the playlist never follows with a URI line.
        case durationWithoutURI
        /// A URI line with no EXTINF before it.
        case uriWithoutDuration(String)
        case missingTargetDuration
    }

    public var line: Int
    public var problem: Problem

    public init(line: Int, problem: Problem) {
        self.line = line
        self.problem = problem
    }

    public var description: String { "line \(line): \(problemDescription)" }

    private var problemDescription: String {
        switch problem {
        case .missingHeader:
            return "a playlist must start with #EXTM3U"
        case .malformedNumber(let tag, let value):
            return "\(tag) value \"\(value)\" is not a valid non-negative decimal number"
        case .malformedDate(let value):
            return "EXT-X-PROGRAM-DATE-TIME \"\(value)\" is not an ISO 8601 date with a time zone"
        case .malformedAttributeList(let tag, let reason):
            return "\(tag) attribute list is malformed: \(reason)"
        case .missingAttribute(let tag, let name):
            return "\(tag) has no \(name) attribute"
        case .unknownPlaylistType(let value):
            return "EXT-X-PLAYLIST-TYPE \"\(value)\" is neither VOD nor EVENT"
        case .durationWithoutURI:
            return "EXTINF is not followed by a segment URI"
        case .uriWithoutDuration(let uri):
            return "segment URI \"\(uri)\" has no EXTINF before it"
        case .missingTargetDuration:
            return "the playlist ends without EXT-X-TARGETDURATION"
        }
    }
}
