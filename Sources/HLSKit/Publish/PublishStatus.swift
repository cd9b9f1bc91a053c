/// Counters of a publisher, readable at any time (a live status line shows them).
public struct PublishStatus: Sendable, Equatable {
    /// Files (segments, init sections, other files) on the origin; playlist versions are not counted.
    public var uploadedCount: Int
    /// Files waiting for their first try or for a retry, or being uploaded.
    public var queuedCount: Int
    /// Files that will not reach the origin: refused, unreadable, or dropped when the backlog overflowed.
    public var failedCount: Int
    public var uploadedBytes: Int
    /// Media seconds of queued segments, bounded by the backlog.
    public var queuedMediaSeconds: Double
    /// Failed tries that were retried.
    public var retryCount: Int
    /// Bytes uploaded per second while at least one upload was running.
    public var bytesPerSecond: Double

    public init(uploadedCount: Int, queuedCount: Int, failedCount: Int, uploadedBytes: Int, queuedMediaSeconds: Double,
                retryCount: Int, bytesPerSecond: Double) {
        self.uploadedCount = uploadedCount
        self.queuedCount = queuedCount
        self.failedCount = failedCount
        self.uploadedBytes = uploadedBytes
        self.queuedMediaSeconds = queuedMediaSeconds
        self.retryCount = retryCount
        self.bytesPerSecond = bytesPerSecond
    }
}

/// What a finished publisher did.
public struct PublishReport: Sendable, Equatable {
    /// A file that did not reach the origin, and why.
    public struct Undelivered: Sendable, Equatable, CustomStringConvertible {
        public var path: String
        public var reason: String

        public var description: String { "\(path): \(reason)" }

        public init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }
    }

    /// Seconds from a segment being handed over until the origin's playlist listed it.
    public struct ListingLatency: Sendable, Equatable {
        /// One value per listed segment (an hour of 2 s segments is 1800 of them).
        public private(set) var samplesSeconds: [Double] = []

        public init() {}

        public var count: Int { samplesSeconds.count }
        public var meanSeconds: Double { count > 0 ? samplesSeconds.reduce(0, +) / Double(count) : 0 }
        public var maximumSeconds: Double { samplesSeconds.max() ?? 0 }

        /// The `fraction` quantile (0.5 for the median, 0.99 for p99), nearest rank.
        public func quantileSeconds(_ fraction: Double) -> Double {
            guard count > 0 else { return 0 }
            let sorted = samplesSeconds.sorted()
            let rank = Int((fraction * Double(count)).rounded(.up))
            return sorted[min(max(rank, 1), count) - 1]
        }

        public mutating func record(_ seconds: Double) {
            samplesSeconds.append(seconds)
        }
    }

    public var status: PublishStatus
    /// Files, playlist included, whose last version is not on the origin.
    public var undelivered: [Undelivered]
    /// Deletions that the origin refused or that were still waiting for their time.
    public var removalsNotDone: [Undelivered]
    /// Whether the origin holds the final playlist: every segment listed, ENDLIST when asked for.
    public var finalPlaylistDelivered: Bool
    public var listingLatency: ListingLatency
    /// Seconds each PUT that succeeded took, from sending to the origin's answer (the same kind of
    /// samples as `listingLatency`).
    public var putLatency: ListingLatency

    public init(status: PublishStatus, undelivered: [Undelivered], removalsNotDone: [Undelivered],
                finalPlaylistDelivered: Bool, listingLatency: ListingLatency, putLatency: ListingLatency = .init()) {
        self.status = status
        self.undelivered = undelivered
        self.removalsNotDone = removalsNotDone
        self.finalPlaylistDelivered = finalPlaylistDelivered
        self.listingLatency = listingLatency
        self.putLatency = putLatency
    }

    /// Whether everything reached the origin.
    public var isComplete: Bool { undelivered.isEmpty && finalPlaylistDelivered }
}
