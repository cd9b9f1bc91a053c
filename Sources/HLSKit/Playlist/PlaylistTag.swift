/// Tag names of RFC 8216bis section 4.4, as written at the start of a line.
enum PlaylistTag {
    static let header = "#EXTM3U"
    static let version = "#EXT-X-VERSION"
    static let independentSegments = "#EXT-X-INDEPENDENT-SEGMENTS"
    static let targetDuration = "#EXT-X-TARGETDURATION"
    static let mediaSequence = "#EXT-X-MEDIA-SEQUENCE"
    static let discontinuitySequence = "#EXT-X-DISCONTINUITY-SEQUENCE"
    static let playlistType = "#EXT-X-PLAYLIST-TYPE"
    static let endList = "#EXT-X-ENDLIST"
    static let segmentDuration = "#EXTINF"
    static let discontinuity = "#EXT-X-DISCONTINUITY"
    static let map = "#EXT-X-MAP"
    static let programDateTime = "#EXT-X-PROGRAM-DATE-TIME"
    static let streamInfo = "#EXT-X-STREAM-INF"
}
