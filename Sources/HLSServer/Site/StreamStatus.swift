import Foundation

/// What a stream served by a `SiteServer` is doing, for the index page, `/api/v1/streams` and
/// `/metrics`. The command that runs the stream supplies it: the server knows no engine.
public protocol StreamStatusSource: Sendable {
    func status() -> StreamStatus
}

/// A stream's state and figures as they stand. Unknown figures are nil.
public struct StreamStatus: Sendable, Equatable {
    public enum State: Sendable, Equatable {
        case starting
        case live
        /// The input was lost; the stream goes on with stand-in pictures while it tries again.
        case reconnecting
        /// Ended (the input ended, a fault, a stop); `reason` says which, for people.
        case stopped(reason: String)

        /// `starting`, `live`, `reconnecting` or `stopped`.
        public var name: String {
            switch self {
            case .starting: "starting"
            case .live: "live"
            case .reconnecting: "reconnecting"
            case .stopped: "stopped"
            }
        }

        public var reason: String? {
            if case .stopped(let reason) = self { return reason }
            return nil
        }
    }

    public struct Rendition: Sendable, Equatable {
        /// Its folder in the stream (`720p`, `audio`), empty for a single rendition.
        public var name: String
        public var width: Int?
        public var height: Int?
        /// Measured over the segments written so far.
        public var bitsPerSecond: Int?

        public init(name: String, width: Int? = nil, height: Int? = nil, bitsPerSecond: Int? = nil) {
            self.name = name
            self.width = width
            self.height = height
            self.bitsPerSecond = bitsPerSecond
        }
    }

    public struct Recording: Sendable, Equatable {
        public var folder: String
        /// Files retention deleted so far.
        public var filesDeleted: Int

        public init(folder: String, filesDeleted: Int = 0) {
            self.folder = folder
            self.filesDeleted = filesDeleted
        }
    }

    public struct PublishBacklog: Sendable, Equatable {
        public var files: Int
        public var mediaSeconds: Double
        public var failures: Int

        public init(files: Int, mediaSeconds: Double, failures: Int) {
            self.files = files
            self.mediaSeconds = mediaSeconds
            self.failures = failures
        }
    }

    public var state: State
    /// What the stream reads, without credentials (`rtsp://camera.local/stream`, `test source`).
    public var input: String
    public var renditions: [Rendition]
    /// Every rendition's segments together, measured.
    public var bitsPerSecond: Int?
    /// Since the newest segment was listed.
    public var lastSegmentAgeSeconds: Double?
    public var framesDropped: Int
    /// The latest problems, oldest first, for people.
    public var errors: [String]
    public var recording: Recording?
    public var publishBacklog: PublishBacklog?

    public init(state: State, input: String, renditions: [Rendition] = [], bitsPerSecond: Int? = nil,
                lastSegmentAgeSeconds: Double? = nil, framesDropped: Int = 0, errors: [String] = [],
                recording: Recording? = nil, publishBacklog: PublishBacklog? = nil) {
        self.state = state
        self.input = input
        self.renditions = renditions
        self.bitsPerSecond = bitsPerSecond
        self.lastSegmentAgeSeconds = lastSegmentAgeSeconds
        self.framesDropped = framesDropped
        self.errors = errors
        self.recording = recording
        self.publishBacklog = publishBacklog
    }
}
