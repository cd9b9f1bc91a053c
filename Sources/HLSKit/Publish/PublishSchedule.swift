/// The publisher's decisions without threads, clocks or network: which requests to start, when to
/// retry them, and which playlist the origin may receive. Times are seconds on one monotonic clock,
/// passed in by the caller.
///
/// Safety rules (DESIGN.md, writing rules, applied to a remote origin):
/// - the origin's playlist is built from every segment handed over, in sequence order: it lists the
///   longest run of uploaded segments (and their initialization sections), so it never lists a
///   missing segment, and whatever order the uploads finished in, it lists them in order;
/// - after an outage the origin's playlist lags the local one and catches up: a segment that left
///   the local window is still uploaded and listed, and the origin's window drops from its head
///   only segments that a playlist confirmed on the origin has already listed;
/// - at most one playlist request is in flight, and the playlist known to be on the origin changes
///   only when a request for it succeeded;
/// - a file is deleted from the origin only after the playlist known to be there stopped listing it,
///   and after the RFC 8216bis 6.2.2 retention time (its duration plus the playlist's) from then;
/// - ENDLIST goes up only after `finish()` and only when every listed segment is up.
public struct PublishSchedule: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Uploads and deletions in flight at once; the playlist has a lane of its own.
        public var maxConcurrentRequests: Int
        /// Media seconds of segments that may wait for the origin before the oldest are dropped.
        public var backlogSeconds: Double
        public var backoff: Backoff
        /// Where the media playlist goes, relative to the origin URL.
        public var playlistPath: String

        public init(maxConcurrentRequests: Int = 3, backlogSeconds: Double = 300, backoff: Backoff = Backoff(),
                    playlistPath: String = StreamLayout.playlistName) {
            self.maxConcurrentRequests = maxConcurrentRequests
            self.backlogSeconds = backlogSeconds
            self.backoff = backoff
            self.playlistPath = playlistPath
        }
    }

    public enum Operation: Sendable, Equatable {
        /// PUT the stored file at `path`.
        case upload(path: String)
        /// PUT `text` as the media playlist.
        case uploadPlaylist(path: String, text: String)
        case remove(path: String)
    }

    public struct Job: Sendable, Equatable {
        public let id: Int
        public let operation: Operation
        /// 1 for the first try.
        public let attempt: Int
    }

    private struct Upload {
        var path: String
        /// nil for files that are not segments (initialization sections, master playlists).
        var durationSeconds: Double?
        var failedAttempts = 0
        /// Failures since the origin was last seen answering; the backoff grows with them.
        var failuresSinceReachable = 0
        var lastFailure: String?
        /// The last try got no answer at all: the origin looked unreachable.
        var unreachable = false
        var notBefore: Double
        var jobID: Int?
    }

    private struct Removal {
        var path: String
        var notBefore: Double
        var failedAttempts = 0
        var jobID: Int?
    }

    private struct PlaylistUpload {
        var jobID: Int
        var text: String
        var listed: RemoteWindow
    }

    /// Which segments of `history` a playlist for the origin lists, as sequence numbers.
    public struct RemoteWindow: Sendable, Equatable {
        public var firstSequenceNumber: Int
        public var endSequenceNumber: Int
        public var paths: [String]
    }

    public let limits: Limits
    /// In the order files were handed over: initialization section first, segments by sequence number.
    private var pending: [Upload] = []
    private var removals: [Removal] = []
    private var uploaded: Set<String> = []
    private var undelivered: [PublishReport.Undelivered] = []
    private var failedRemovals: [PublishReport.Undelivered] = []
    private var latestPlaylist: MediaPlaylist?
    /// Every segment the local playlists listed, from the first one the origin's playlist may still
    /// list, in sequence order; `historyFirstSequence` is the sequence number of the first.
    private var history: [MediaPlaylist.Segment] = []
    private var historyFirstSequence = 0
    /// The discontinuity sequence number of the first segment of `history`.
    private var historyDiscontinuitySequence = 0
    /// Segments that will never be uploaded (dropped or refused) and that the local playlist no
    /// longer lists, or that were dropped: the origin's playlist skips them.
    private var skippable: Set<String> = []
    /// Segments that will never be uploaded.
    private var givenUp: Set<String> = []
    /// Keys another publisher is uploading (`--publish-keys`), by file name: a segment encrypted with
    /// one is not listed until it is at the origin, or a player would find a key URI that answers 404.
    private var awaitedKeys: Set<String> = []
    /// The first sequence number that no confirmed playlist has listed yet.
    private var confirmedEndSequence = 0
    /// The longest duration of a playlist the origin held, for the retention time.
    private var longestConfirmedDurationSeconds = 0.0
    /// When the local copies of files that left the local playlist may go, once uploaded.
    private var localRemovals: [String: Double] = [:]
    private var confirmedPlaylistText: String?
    /// A version the origin refused for good; only a newer version is tried.
    private var rejectedPlaylistText: String?
    private var playlistInFlight: PlaylistUpload?
    private var playlistFailedAttempts = 0
    private var playlistNotBefore = 0.0
    private var finished = false
    private var nextJobID = 1
    private var uploadedCount = 0
    private var uploadedBytes = 0
    private var retryCount = 0
    private var busySince: Double?
    private var busySeconds = 0.0
    /// When each segment not yet listed on the origin was handed over.
    private var handedOverAt: [String: Double] = [:]
    private var listingLatency = PublishReport.ListingLatency()

    public init(limits: Limits) {
        self.limits = limits
    }

    /// Queues a file that is not a segment, such as an initialization section.
    public mutating func addFile(_ path: String, now: Double) {
        pending.append(Upload(path: path, notBefore: now))
    }

    /// Queues a segment and returns the paths of the segments dropped because the backlog overflowed.
    public mutating func addSegment(_ path: String, durationSeconds: Double, now: Double) -> [String] {
        pending.append(Upload(path: path, durationSeconds: durationSeconds, notBefore: now))
        handedOverAt[path] = now
        var dropped: [String] = []
        while queuedMediaSeconds > limits.backlogSeconds,
              let oldest = pending.firstIndex(where: { $0.durationSeconds != nil && $0.jobID == nil }) {
            let path = pending.remove(at: oldest).path
            handedOverAt[path] = nil
            givenUp.insert(path)
            skippable.insert(path)
            undelivered.append(.init(path: path, reason: "dropped: more than \(PlaylistNumber.threeDecimals(limits.backlogSeconds)) s of media waited for the origin"))
            dropped.append(path)
        }
        return dropped
    }

    /// The local media playlist as it now is; the origin gets the part of it that is safe to list,
    /// and every segment it listed before, until the origin's own window drops them.
    public mutating func updatePlaylist(_ playlist: MediaPlaylist) {
        if latestPlaylist == nil {
            historyFirstSequence = playlist.mediaSequence
            historyDiscontinuitySequence = playlist.discontinuitySequence
            confirmedEndSequence = playlist.mediaSequence
            queueEarlierRunFiles(listedBy: playlist)
        }
        latestPlaylist = playlist
        let historyEnd = historyFirstSequence + history.count
        for (offset, segment) in playlist.segments.enumerated() where playlist.mediaSequence + offset >= historyEnd {
            history.append(segment)
        }
    }

    /// A resumed stream's first playlist lists segments an earlier run wrote, which was perhaps killed
    /// before it uploaded them: they go up again, ahead of this run's files, or the origin's playlist
    /// could never list them.
    private mutating func queueEarlierRunFiles(listedBy playlist: MediaPlaylist) {
        var known = Set(pending.map(\.path)).union(uploaded).union(givenUp)
        var earlier: [Upload] = []
        for segment in playlist.segments {
            if let map = segment.mapURI, known.insert(map).inserted {
                earlier.append(Upload(path: map, notBefore: 0))
            }
            if known.insert(segment.uri).inserted {
                earlier.append(Upload(path: segment.uri, durationSeconds: segment.durationSeconds, notBefore: 0))
            }
        }
        pending.insert(contentsOf: earlier, at: 0)
    }

    /// The local playlist no longer lists `path`: its local copy may be deleted at `due`, once it is
    /// uploaded or given up. The origin's copy stays until the origin's playlist drops it.
    public mutating func removeFile(_ path: String, at due: Double) {
        localRemovals[path] = due
        if givenUp.contains(path) { skippable.insert(path) }
    }

    /// Local copies whose time has come and that no upload needs any more; the caller deletes them.
    public mutating func takeLocalRemovals(now: Double) -> [String] {
        let needed = Set(pending.map(\.path))
        let due = localRemovals.filter { $0.value <= now && !needed.contains($0.key) }.keys.sorted()
        for path in due { localRemovals[path] = nil }
        return due
    }

    /// When the last local copy that no upload needs may be deleted; nil when none waits.
    public var lastLocalRemovalTime: Double? {
        let needed = Set(pending.map(\.path))
        return localRemovals.filter { !needed.contains($0.key) }.values.max()
    }

    /// The key file `name` is on its way to the origin: segments that name it wait for `keyArrived`.
    public mutating func awaitKey(named name: String) {
        awaitedKeys.insert(name)
    }

    public mutating func keyArrived(named name: String) {
        awaitedKeys.remove(name)
    }

    /// No more files will come: the final playlist may carry ENDLIST once everything it lists is up.
    public mutating func finish() {
        finished = true
    }

    /// Whether the origin has confirmed a version of the playlist that lists a segment.
    public var originHoldsPlaylist: Bool { confirmedPlaylistText != nil }

    public var queuedMediaSeconds: Double {
        pending.reduce(0) { $0 + ($1.durationSeconds ?? 0) }
    }

    /// The requests to start now, oldest file first, within the concurrency limit.
    public mutating func startJobs(now: Double) -> [Job] {
        var jobs: [Job] = []
        var running = pending.count { $0.jobID != nil } + removals.count { $0.jobID != nil }
        // A later version of a path waits for the earlier one, so the origin ends with the latest.
        var pathsSeen: Set<String> = []
        for index in pending.indices {
            let upload = pending[index]
            guard pathsSeen.insert(upload.path).inserted, upload.jobID == nil, upload.notBefore <= now,
                  running < limits.maxConcurrentRequests else { continue }
            let job = makeJob(.upload(path: upload.path), attempt: upload.failedAttempts + 1)
            pending[index].jobID = job.id
            jobs.append(job)
            running += 1
        }
        for index in removals.indices {
            let removal = removals[index]
            guard removal.jobID == nil, removal.notBefore <= now, !pathsSeen.contains(removal.path),
                  running < limits.maxConcurrentRequests else { continue }
            let job = makeJob(.remove(path: removal.path), attempt: removal.failedAttempts + 1)
            removals[index].jobID = job.id
            jobs.append(job)
            running += 1
        }
        if playlistInFlight == nil, playlistNotBefore <= now, let (text, listed) = playlistToUpload() {
            let job = makeJob(.uploadPlaylist(path: limits.playlistPath, text: text), attempt: playlistFailedAttempts + 1)
            playlistInFlight = PlaylistUpload(jobID: job.id, text: text, listed: listed)
            jobs.append(job)
        }
        updateBusyTime(now: now)
        return jobs
    }

    /// Records how a job ended. `byteCount` is the body's size, counted when an upload succeeded.
    public mutating func complete(_ jobID: Int, response: PublishResponse, byteCount: Int = 0, now: Double) {
        if let index = pending.firstIndex(where: { $0.jobID == jobID }) {
            pending[index].unreachable = if case .noResponse(_, permanent: false) = response { true } else { false }
            completeUpload(at: index, RequestOutcome(response, method: .put), byteCount: byteCount, now: now)
        } else if let index = removals.firstIndex(where: { $0.jobID == jobID }) {
            completeRemoval(at: index, RequestOutcome(response, method: .delete), now: now)
        } else if let upload = playlistInFlight, upload.jobID == jobID {
            completePlaylist(upload, RequestOutcome(response, method: .put), now: now)
        }
        updateBusyTime(now: now)
    }

    /// The earliest time after `now` at which a waiting request becomes due, for a timer.
    public func nextWakeTime(after now: Double) -> Double? {
        let needed = Set(pending.map(\.path))
        let times = pending.filter { $0.jobID == nil }.map(\.notBefore)
            + removals.filter { $0.jobID == nil }.map(\.notBefore)
            + (playlistInFlight == nil && playlistToUpload() != nil ? [playlistNotBefore] : [])
            + localRemovals.filter { !needed.contains($0.key) }.map(\.value)
        return times.filter { $0 > now }.min()
    }

    /// Whether nothing is left to do before `now`: every file handed over is up or given up, due
    /// deletions are done, and the origin holds the playlist it may hold.
    public func isSettled(now: Double) -> Bool {
        pending.isEmpty && !hasRemovals(dueBy: now) && playlistInFlight == nil && playlistToUpload() == nil
    }

    /// Whether a deletion on the origin is running or becomes due by `deadline`; one whose retry
    /// waits past it is not.
    public func hasRemovals(dueBy deadline: Double) -> Bool {
        removals.contains { $0.jobID != nil || $0.notBefore <= deadline }
    }

    public var status: PublishStatus {
        PublishStatus(
            uploadedCount: uploadedCount, queuedCount: pending.count, failedCount: undelivered.count,
            uploadedBytes: uploadedBytes, queuedMediaSeconds: queuedMediaSeconds, retryCount: retryCount,
            bytesPerSecond: busySeconds > 0 ? Double(uploadedBytes) / busySeconds : 0)
    }

    /// The outcome so far; whatever is still queued or in flight counts as not delivered.
    public func report() -> PublishReport {
        var notDelivered = undelivered
        for upload in pending {
            let state = upload.jobID == nil ? "still queued" : "still uploading"
            let attempts = upload.lastFailure.map { " after \(upload.failedAttempts) failed tries (last: \($0))" } ?? ""
            notDelivered.append(.init(path: upload.path, reason: "\(state)\(attempts) when publishing stopped"))
        }
        let remote = remotePlaylist()
        let finalDelivered = remote.map { $0.playlist.render() == confirmedPlaylistText } ?? false
        let localEnd = latestPlaylist.map { $0.mediaSequence + $0.segments.count }
        let allListed = remote.map { $0.window.endSequenceNumber == localEnd } ?? false
        if latestPlaylist != nil && !(finalDelivered && allListed) {
            let reason = confirmedPlaylistText == nil
                ? "no version reached the origin"
                : "the origin holds an older version that lists fewer segments or lacks ENDLIST"
            notDelivered.append(.init(path: limits.playlistPath, reason: reason))
        }
        let waitingRemovals = removals.map { PublishReport.Undelivered(path: $0.path, reason: "not yet deleted") }
        return PublishReport(status: status, undelivered: notDelivered, removalsNotDone: failedRemovals + waitingRemovals,
                             finalPlaylistDelivered: latestPlaylist == nil || (finalDelivered && allListed),
                             listingLatency: listingLatency)
    }

    /// The playlist the origin may hold now: the longest run of uploaded segments of the history
    /// (past segments that will never come), as EVENT while a VOD playlist grows; nil while no
    /// segment can be listed. A sliding window keeps the local window's length, but its head keeps
    /// every segment no confirmed playlist has listed yet, so a lagging origin catches up in order.
    public func remotePlaylist() -> (playlist: MediaPlaylist, window: RemoteWindow)? {
        guard let latest = latestPlaylist else { return nil }
        // An EVENT or VOD playlist only grows, so a segment that will never come ends its listing;
        // a sliding window may move past it.
        let sliding = latest.playlistType == nil
        var start = 0
        var end = 0
        for (index, segment) in history.enumerated() {
            if isUp(segment) {
                end = index + 1
            } else if sliding && skippable.contains(segment.uri) {
                start = index + 1
                end = index + 1
            } else {
                break
            }
        }
        guard end > start else { return nil }
        if sliding {
            let firstUnlisted = max(0, confirmedEndSequence - historyFirstSequence)
            start = max(start, min(end - max(latest.segments.count, 1), firstUnlisted))
        }
        let listed = history[start..<end]
        var remote = latest
        remote.segments = Array(listed)
        remote.mediaSequence = historyFirstSequence + start
        remote.discontinuitySequence = historyDiscontinuitySequence + history[..<start].count(where: \.discontinuity)
        // A VOD playlist may not change; the origin's copy grows as an EVENT playlist, and EVENT
        // allows only appending, so the finished copy stays EVENT and gains ENDLIST.
        if remote.playlistType == .vod {
            remote.playlistType = .event
        }
        let localEnd = latest.mediaSequence + latest.segments.count
        remote.endList = latest.endList && finished && end == history.count && historyFirstSequence + end == localEnd
        let window = RemoteWindow(firstSequenceNumber: remote.mediaSequence,
                                  endSequenceNumber: remote.mediaSequence + listed.count, paths: listed.map(\.uri))
        return (remote, window)
    }

    private func isUp(_ segment: MediaPlaylist.Segment) -> Bool {
        uploaded.contains(segment.uri) && segment.mapURI.map(uploaded.contains) ?? true
            && !(segment.key.map { awaitedKeys.contains(Self.fileName($0.uri)) } ?? false)
    }

    /// The last path component of a URI: a key's file name, whatever prefix its URI has.
    private static func fileName(_ uri: String) -> String {
        uri.split(separator: "/").last.map(String.init) ?? uri
    }

    private func playlistToUpload() -> (text: String, window: RemoteWindow)? {
        guard let (playlist, window) = remotePlaylist() else { return nil }
        let text = playlist.render()
        guard text != confirmedPlaylistText, text != rejectedPlaylistText else { return nil }
        return (text, window)
    }

    private mutating func makeJob(_ operation: Operation, attempt: Int) -> Job {
        defer { nextJobID += 1 }
        return Job(id: nextJobID, operation: operation, attempt: attempt)
    }

    private mutating func completeUpload(at index: Int, _ outcome: RequestOutcome, byteCount: Int, now: Double) {
        switch outcome {
        case .succeeded:
            let upload = pending.remove(at: index)
            uploaded.insert(upload.path)
            uploadedCount += 1
            uploadedBytes += byteCount
            retryUnreachableUploads(now: now)
        case .retry(let reason, let afterSeconds):
            pending[index].failedAttempts += 1
            pending[index].failuresSinceReachable += 1
            pending[index].lastFailure = reason
            pending[index].notBefore = now + limits.backoff.delaySeconds(
                afterFailedAttempts: pending[index].failuresSinceReachable, retryAfterSeconds: afterSeconds)
            pending[index].jobID = nil
            retryCount += 1
        case .failed(let reason):
            let upload = pending.remove(at: index)
            handedOverAt[upload.path] = nil
            givenUp.insert(upload.path)
            if localRemovals[upload.path] != nil { skippable.insert(upload.path) }
            undelivered.append(.init(path: upload.path, reason: "the origin refused it: \(reason)"))
        }
    }

    private mutating func completeRemoval(at index: Int, _ outcome: RequestOutcome, now: Double) {
        switch outcome {
        case .succeeded:
            uploaded.remove(removals.remove(at: index).path)
        case .retry(_, let afterSeconds):
            removals[index].failedAttempts += 1
            removals[index].notBefore = now + limits.backoff.delaySeconds(
                afterFailedAttempts: removals[index].failedAttempts, retryAfterSeconds: afterSeconds)
            removals[index].jobID = nil
            retryCount += 1
        case .failed(let reason):
            let removal = removals.remove(at: index)
            failedRemovals.append(.init(path: removal.path, reason: "the origin refused to delete it: \(reason)"))
        }
    }

    private mutating func completePlaylist(_ upload: PlaylistUpload, _ outcome: RequestOutcome, now: Double) {
        playlistInFlight = nil
        switch outcome {
        case .succeeded:
            confirmedPlaylistText = upload.text
            playlistFailedAttempts = 0
            for path in upload.listed.paths {
                if let handedOver = handedOverAt.removeValue(forKey: path) {
                    listingLatency.record(now - handedOver)
                }
            }
            confirmed(upload.listed, now: now)
        case .retry(_, let afterSeconds):
            playlistFailedAttempts += 1
            playlistNotBefore = now + min(limits.backoff.delaySeconds(
                afterFailedAttempts: playlistFailedAttempts, retryAfterSeconds: afterSeconds), playlistRetryCapSeconds)
            retryCount += 1
        case .failed:
            rejectedPlaylistText = upload.text
        }
    }

    /// Viewers notice a stale playlist first, so its retries wait at most about a target duration.
    private var playlistRetryCapSeconds: Double {
        max(limits.backoff.initialSeconds, Double(latestPlaylist?.targetDurationSeconds ?? 1))
    }

    /// The origin now holds a playlist listing `window`: what it no longer lists leaves the history,
    /// and the files of it are deleted from the origin once the retention time has passed.
    private mutating func confirmed(_ window: RemoteWindow, now: Double) {
        let first = max(0, window.firstSequenceNumber - historyFirstSequence)
        let end = min(history.count, max(first, window.endSequenceNumber - historyFirstSequence))
        let listedDuration = history[first..<end].reduce(0) { $0 + $1.durationSeconds }
        let holdingDuration = max(longestConfirmedDurationSeconds, listedDuration)
        longestConfirmedDurationSeconds = holdingDuration
        confirmedEndSequence = max(confirmedEndSequence, window.endSequenceNumber)
        let leaving = history.prefix(max(0, window.firstSequenceNumber - historyFirstSequence))
        guard !leaving.isEmpty else { return }
        history.removeFirst(leaving.count)
        historyFirstSequence += leaving.count
        historyDiscontinuitySequence += leaving.count(where: \.discontinuity)
        let stillUsedMaps = Set(history.compactMap(\.mapURI) + (latestPlaylist?.segments.compactMap(\.mapURI) ?? []))
        var leavingMaps: [String] = []
        for segment in leaving {
            if uploaded.contains(segment.uri) {
                removals.append(Removal(path: segment.uri, notBefore: now + segment.durationSeconds + holdingDuration))
            }
            if let map = segment.mapURI, !stillUsedMaps.contains(map), !leavingMaps.contains(map) {
                leavingMaps.append(map)
            }
        }
        for map in leavingMaps where uploaded.contains(map) {
            let due = removals.map(\.notBefore).max() ?? now
            removals.append(Removal(path: map, notBefore: due))
        }
    }

    /// The origin answered, so uploads that found it unreachable need not sit out the backoff that
    /// grew during the outage: they go again now, and a later failure backs off from the start.
    private mutating func retryUnreachableUploads(now: Double) {
        for index in pending.indices where pending[index].unreachable && pending[index].jobID == nil {
            pending[index].notBefore = min(pending[index].notBefore, now)
            pending[index].unreachable = false
            pending[index].failuresSinceReachable = 0
        }
    }

    /// Upload time for the throughput figure: time during which at least one file request ran.
    private mutating func updateBusyTime(now: Double) {
        let running = pending.contains { $0.jobID != nil }
        if running, busySince == nil {
            busySince = now
        } else if !running, let since = busySince {
            busySeconds += now - since
            busySince = nil
        }
    }
}
