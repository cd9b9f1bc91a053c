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

    /// The sysexits(3) status: 66 (EX_NOINPUT) when the input cannot be read, 65 (EX_DATAERR)
    /// when it can be read but its contents are unusable.
    public var exitCode: Int32 {
        switch kind {
        case .notFound, .unreadable: 66
        case .notMedia, .corrupt, .noMediaStreams: 65
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
        }
    }

    private var advice: String {
        switch kind {
        case .notFound: "check the path"
        case .unreadable: "give a regular file you have permission to read"
        case .notMedia: "give a video or audio recording such as MP4, MOV, MKV or MPEG-TS"
        case .corrupt: "copy the file again from its source, or salvage the readable part with ffmpeg -c copy"
        case .noMediaStreams: "give a file with a video or an audio track"
        }
    }
}
