/// The kinds of file a stream is made of, told by name, and the content type each is served and
/// uploaded with. Only playlists change once published (DESIGN.md, writing rule 4).
public enum StreamFileKind: Sendable, Equatable {
    case playlist
    case initSection
    case segment

    public static let playlistContentType = "application/vnd.apple.mpegurl"
    public static let initSectionContentType = "video/mp4"
    public static let segmentContentType = "video/iso.segment"

    /// nil for a file that is not part of a stream.
    public init?(path: some StringProtocol) {
        if path.hasSuffix(".m3u8") {
            self = .playlist
        } else if path.hasSuffix(".m4s") {
            self = .segment
        } else if path.hasSuffix(".mp4") {
            self = .initSection
        } else {
            return nil
        }
    }

    public var contentType: String {
        switch self {
        case .playlist: Self.playlistContentType
        case .initSection: Self.initSectionContentType
        case .segment: Self.segmentContentType
        }
    }

    /// Whether the file may change after it is published: clients must fetch it again each time.
    public var changes: Bool { self == .playlist }
}
