/// Why a media file cannot be used as input, worded for the person who named it.
public struct MediaInputError: Error, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The path does not exist.
        case notFound
        /// The path exists but is not a file we may read (permissions, a directory, a device).
        case unreadable
        /// The file is not in a format FFmpeg can demux.
        case notMedia
        /// The container was recognised but its data is truncated or broken.
        case corrupt
        /// The file is media but holds neither video nor audio.
        case noMediaStreams
        /// A network input that could not be opened: refused, unreachable, silent or not media.
        case unreachable
        /// An https server whose certificate no trusted authority signed for its name.
        case untrusted
        /// A network input whose connection failed while it was read: the network's or the sender's
        /// doing, not damaged data.
        case connectionLost
    }

    public var kind: Kind
    public var path: String
    /// The specific cause, for example "moov atom not found"; empty when `kind` says it all.
    public var detail: String

    public init(kind: Kind, path: String, detail: String = "") {
        self.kind = kind
        self.path = path
        self.detail = detail
    }

    /// Whether the file could not be read at all, as opposed to read with unusable contents.
    public var isUnreadable: Bool {
        switch kind {
        case .notFound, .unreadable, .unreachable, .untrusted, .connectionLost: true
        case .notMedia, .corrupt, .noMediaStreams: false
        }
    }

    public var description: String {
        let cause = detail.isEmpty ? "" : " (\(detail))"
        return "\(path): \(summary)\(cause); \(advice)"
    }

    private var summary: String {
        switch kind {
        case .notFound: "no such file"
        case .unreadable: "cannot be read"
        case .notMedia: "not a media file FFmpeg can read"
        case .corrupt: "the media data is damaged or truncated"
        case .noMediaStreams: "no video or audio stream"
        case .unreachable: "cannot be opened"
        case .untrusted: "its server's certificate is not trusted"
        case .connectionLost: "the connection failed while it was read"
        }
    }

    private var advice: String {
        switch kind {
        case .notFound: "check the path"
        case .unreadable: "give a regular file you have permission to read"
        case .notMedia: "give a video or audio recording such as MP4, MOV, MKV or MPEG-TS"
        case .corrupt: "copy the file again from its source, or salvage the readable part with ffmpeg -c copy"
        case .noMediaStreams: "give a file with a video or an audio track"
        case .unreachable: "check the URL and that the camera or server is up"
        case .untrusted: "check the URL, or trust the authority that signed the certificate"
        case .connectionLost: "check the network and that the sender is still sending"
        }
    }
}
