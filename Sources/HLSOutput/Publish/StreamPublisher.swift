import Dispatch
import Foundation
import HLSKit

/// Uploads a growing HLS stream to an HTTP origin (a WebDAV server, an object store with
/// authenticated URLs, a CDN's ingest) with PUT, while the stream is being written.
///
/// The caller writes each file to `store` first and then hands it over; uploads read it back from
/// the store, so a backlog waits on disk, not in memory. Calls return at once: uploads, retries
/// and playlist updates run in the background, decided by a `PublishSchedule`. `finish()` waits
/// for the rest and says what did not reach the origin.
public final class StreamPublisher: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// The stream's files go below it: `origin/init.mp4`, `origin/seg/000001.m4s` …
        public var origin: URL
        /// Sent with every request, such as `Authorization`.
        public var headers: [HTTPHeader]
        public var limits: PublishSchedule.Limits
        /// How long `addSegment` may wait for the backlog to drain before the oldest segments are
        /// dropped: 0 for capture, which cannot wait; longer for a file, which can.
        public var backlogWaitSeconds: Double
        /// How long `finish()` waits for the remaining uploads and the final playlist.
        public var drainTimeoutSeconds: Double
        /// `Cache-Control` of playlists, which change: a CDN and players must fetch them again.
        public var playlistCacheControl: String

        public init(origin: URL, headers: [HTTPHeader] = [], limits: PublishSchedule.Limits = .init(),
                    backlogWaitSeconds: Double = 0, drainTimeoutSeconds: Double = 30,
                    playlistCacheControl: String = StreamPublisher.defaultPlaylistCacheControl) {
            self.origin = origin
            self.headers = headers
            self.limits = limits
            self.backlogWaitSeconds = backlogWaitSeconds
            self.drainTimeoutSeconds = drainTimeoutSeconds
            self.playlistCacheControl = playlistCacheControl
        }
    }

    static let fallbackContentType = "application/octet-stream"
    public static let defaultPlaylistCacheControl = "no-cache"
    /// Media files never change once published (DESIGN.md, writing rules).
    public static let mediaCacheControl = "max-age=31536000, immutable"

    public let configuration: Configuration
    private let store: any StreamStore
    private let transport: any PublishTransport
    private let timerQueue = DispatchQueue(label: "hlscap.publish.timer")
    private let startTime = DispatchTime.now()
    /// Guards every property below; waiters wake on every completed request.
    private let condition = NSCondition()
    private var schedule: PublishSchedule
    private var timerArmedFor: Double?
    /// After `finish()` returns, late answers change nothing.
    private var stopped = false
    /// Local copies that could not be deleted, reported with the deletions not done.
    private var localFailures: [PublishReport.Undelivered] = []
    private var putLatency = PublishReport.ListingLatency()
    /// Told the path of each file the origin accepted; set before the first file is handed over.
    public var onUploaded: (@Sendable (String) -> Void)?

    public init(configuration: Configuration, store: any StreamStore, transport: any PublishTransport) {
        self.configuration = configuration
        self.store = store
        self.transport = transport
        schedule = PublishSchedule(limits: configuration.limits)
    }

    /// Whether the origin has confirmed a version of the playlist.
    public var originHoldsPlaylist: Bool { locked { schedule.originHoldsPlaylist } }

    /// Uploads a stored file that is not a segment, such as `init.mp4` or `master.m3u8`.
    public func addFile(_ path: String) {
        locked { schedule.addFile(path, now: now()) }
        pump()
    }

    /// Uploads a stored segment; the playlist lists it once it is up. Returns the segments dropped
    /// because more than the backlog's media seconds waited for the origin.
    @discardableResult
    public func addSegment(_ path: String, durationSeconds: Double) -> [String] {
        let dropped: [String] = locked {
            let deadline = now() + configuration.backlogWaitSeconds
            while schedule.queuedMediaSeconds + durationSeconds > configuration.limits.backlogSeconds,
                  now() < deadline {
                _ = condition.wait(until: Date(timeIntervalSinceNow: deadline - now()))
            }
            return schedule.addSegment(path, durationSeconds: durationSeconds, now: now())
        }
        pump()
        return dropped
    }

    /// The local media playlist as it now is. The origin receives its longest prefix of uploaded
    /// segments, without ENDLIST until `finish()`.
    public func updatePlaylist(_ playlist: MediaPlaylist) {
        locked { schedule.updatePlaylist(playlist) }
        pump()
    }

    /// A key file on its way to the origin through another publisher: segments that name it are not
    /// listed until `keyArrived(named:)`.
    public func awaitKey(named name: String) {
        locked { schedule.awaitKey(named: name) }
    }

    public func keyArrived(named name: String) {
        locked { schedule.keyArrived(named: name) }
        pump()
    }

    /// The local playlist no longer lists `path`, a segment that left a live window: its local copy
    /// is deleted after `retentionSeconds` (RFC 8216bis 6.2.2: its duration plus the playlist's), but
    /// not before it is uploaded. The origin's copy is deleted once the playlist the origin holds has
    /// stopped listing it, after the same kind of retention time counted from then.
    public func removeFile(_ path: String, afterSeconds retentionSeconds: Double) {
        locked { schedule.removeFile(path, at: now() + retentionSeconds) }
        pump()
    }

    public var status: PublishStatus {
        locked { schedule.status }
    }

    /// Waits up to the drain timeout for the remaining uploads and the final playlist, then stops.
    /// Files that left the playlist are deleted, on the origin and here, once their retention time
    /// has passed, if that is within the drain timeout; the others are reported as not deleted.
    public func finish() -> PublishReport {
        locked { schedule.finish() }
        pump()
        let (report, localRemovals): (PublishReport, [String]) = locked {
            let deadline = now() + configuration.drainTimeoutSeconds
            while !schedule.isSettled(now: now()) || schedule.hasRemovals(dueBy: deadline), now() < deadline {
                _ = condition.wait(until: Date(timeIntervalSinceNow: deadline - now()))
            }
            stopped = true
            while let due = schedule.lastLocalRemovalTime, due > now(), due <= deadline {
                _ = condition.wait(until: Date(timeIntervalSinceNow: due - now()))
            }
            return (schedule.report(), schedule.takeLocalRemovals(now: now()))
        }
        removeLocalCopies(localRemovals)
        var complete = report
        complete.removalsNotDone += locked { localFailures }
        complete.putLatency = locked { putLatency }
        return complete
    }

    private func removeLocalCopies(_ paths: [String]) {
        for path in paths {
            do {
                try store.remove(path)
            } catch {
                locked { localFailures.append(.init(path: path, reason: "the local copy could not be deleted: \(error)")) }
            }
        }
    }

    /// Starts whatever the schedule says is due, deletes local copies no longer needed, and arms a
    /// timer for the next retry.
    private func pump() {
        let (jobs, localRemovals, timerDelay): ([PublishSchedule.Job], [String], Double?) = locked {
            guard !stopped else { return ([], [], nil) }
            let current = now()
            let jobs = schedule.startJobs(now: current)
            let localRemovals = schedule.takeLocalRemovals(now: current)
            guard let wake = schedule.nextWakeTime(after: current), timerArmedFor.map({ wake < $0 }) ?? true else {
                return (jobs, localRemovals, nil)
            }
            timerArmedFor = wake
            return (jobs, localRemovals, wake - current)
        }
        removeLocalCopies(localRemovals)
        if let timerDelay {
            timerQueue.asyncAfter(deadline: .now() + timerDelay) { [self] in
                locked { timerArmedFor = nil }
                pump()
            }
        }
        for job in jobs {
            start(job)
        }
    }

    private func start(_ job: PublishSchedule.Job) {
        let request: PublishRequest
        switch job.operation {
        case .upload(let path):
            do {
                request = put(Data(try store.read(path)), at: path)
            } catch {
                completed(job, .noResponse("cannot read the local copy: \(error)", permanent: true), byteCount: 0)
                return
            }
        case .uploadPlaylist(let path, let text):
            request = put(Data(text.utf8), at: path)
        case .remove(let path):
            request = PublishRequest(method: .delete, url: url(path), headers: configuration.headers)
        }
        let byteCount = request.body.count
        let sentAt = now()
        transport.send(request) { [self] response in
            if request.method == .put, case .status(200..<300, _, _) = response {
                let seconds = now() - sentAt
                locked { putLatency.record(seconds) }
                if case .upload(let path) = job.operation { onUploaded?(path) }
            }
            completed(job, response, byteCount: byteCount)
        }
    }

    private func completed(_ job: PublishSchedule.Job, _ response: PublishResponse, byteCount: Int) {
        locked {
            guard !stopped else { return }
            schedule.complete(job.id, response: response, byteCount: byteCount, now: now())
            condition.broadcast()
        }
        pump()
    }

    private func put(_ body: Data, at path: String) -> PublishRequest {
        let (contentType, cacheControl) = Self.contentHeaders(forPath: path,
                                                              playlistCacheControl: configuration.playlistCacheControl)
        let headers = configuration.headers + [
            HTTPHeader(name: "Content-Type", value: contentType),
            HTTPHeader(name: "Cache-Control", value: cacheControl),
        ]
        return PublishRequest(method: .put, url: url(path), headers: headers, body: body)
    }

    /// Content-Type and Cache-Control for a file of the stream, chosen by its extension.
    static func contentHeaders(forPath path: String, playlistCacheControl: String = defaultPlaylistCacheControl)
        -> (contentType: String, cacheControl: String) {
        guard let kind = StreamFileKind(path: path) else { return (fallbackContentType, mediaCacheControl) }
        return (kind.contentType, kind.changes ? playlistCacheControl : mediaCacheControl)
    }

    private func url(_ path: String) -> URL {
        configuration.origin.appendingPathComponent(path)
    }

    private func now() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - startTime.uptimeNanoseconds) / 1e9
    }

    private func locked<Result>(_ body: () throws -> Result) rethrows -> Result {
        condition.lock()
        defer { condition.unlock() }
        return try body()
    }
}
