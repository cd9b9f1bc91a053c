import Dispatch
import Foundation
import HLSBase
import HLSKit
import HLSOutput

/// The output side of a live stream, on its own serial queue so that a slow disk or origin never
/// blocks capture: the writer that stores segments and playlists, the publisher, the observers, and
/// the files that left the window, deleted when their retention time (RFC 8216bis 6.2.2) has passed
/// on the engine's clock. Capture and admission reach it only through `publish`; stopping, through
/// `finish` or `endAtOnce`.
///
/// Unchecked sendable: `writer`, `publisher`, `retired` and `finished` are touched only on `queue` (and
/// by `retire` before the first segment); the flags shared with other threads are under `state`.
final class LiveOutput: @unchecked Sendable {
    let queue = DispatchQueue(label: "hlscap.live.output")
    private let store: any StreamStore
    private let clock: any Scheduler
    private let observers: [any LiveStreamObserver]
    private let statistics: LiveStatistics
    private let messages: @Sendable (EngineMessage) -> Void
    /// A segment could not be stored: the stream's writing has stopped.
    private let onStreamStopped: @Sendable (StoreError) -> Void
    /// The playlists could not be ended.
    private let onFinishFailed: @Sendable (StoreError) -> Void

    private var writer: StreamWriter
    private let publisher: LayoutPublisher?
    /// Files that left the window, deleted after their retention time, at the latest at a clean stop;
    /// times on the monotonic clock, in seconds.
    private var retired = RetiredFiles()
    private var finished = false

    private let state = Locked(State())
    /// Signalled when a clean stop's wait for retention times is over: by the clock, or by `endAtOnce`.
    private let retentionWaitOver = DispatchSemaphore(value: 0)

    private struct State {
        /// A write failed: segments are no longer written.
        var streamStopped = false
        /// A second interrupt gave up waiting for retention times.
        var abandonedWaits = false
        var endedAtOnce = false
    }

    init(writer: StreamWriter, publisher: LayoutPublisher?, store: any StreamStore, clock: any Scheduler,
         observers: [any LiveStreamObserver], statistics: LiveStatistics,
         messages: @escaping @Sendable (EngineMessage) -> Void,
         onStreamStopped: @escaping @Sendable (StoreError) -> Void,
         onFinishFailed: @escaping @Sendable (StoreError) -> Void) {
        self.writer = writer
        self.publisher = publisher
        self.store = store
        self.clock = clock
        self.observers = observers
        self.statistics = statistics
        self.messages = messages
        self.onStreamStopped = onStreamStopped
        self.onFinishFailed = onFinishFailed
    }

    var streamStopped: Bool { state.withLock { $0.streamStopped } }
    /// `endAtOnce` ended the playlists.
    var endedAtOnce: Bool { state.withLock { $0.endedAtOnce } }

    /// From the writing queue: stores finished segments, hands chunks and parts to the observers, lists
    /// and publishes them, in order.
    func publish(_ segments: [Segment], parts: [Segmenter.PartPiece], timing: LiveTiming) {
        guard !segments.isEmpty || !parts.isEmpty, !streamStopped else { return }
        queue.async { [self] in
            // After a failed write, a later segment would leave a gap in the playlist that looks valid.
            guard !streamStopped else { return }
            if !observers.isEmpty {
                for piece in parts {
                    switch piece {
                    case .chunk(let chunk):
                        for own in writer.render(chunk: chunk) { observe { $0.chunk(own) } }
                    case .part(let part):
                        for own in writer.render(part: part) { observe { $0.part(own) } }
                    }
                }
            }
            for segment in segments {
                do throws(StoreError) {
                    try write(segment, timing: timing)
                } catch {
                    state.withLock { $0.streamStopped = true }
                    onStreamStopped(error)
                    return
                }
            }
        }
    }

    private func write(_ segment: Segment, timing: LiveTiming) throws(StoreError) {
        let written = try writer.write(segment, programDateTime: timing.programDateTime(of: segment))
        let lastSampleTicks = Int64(segment.tracks.first?.samples.last?.durationTicks ?? 0)
        let latency = timing.publishLatencyMicroseconds(of: segment, lastSampleTicks: lastSampleTicks,
                                                        nowMicroseconds: clock.monotonicMicroseconds())
        statistics.countSegment(segment, bytes: written.byteCount, renditionBytes: written.renditionByteCounts,
                                latencyMicroseconds: latency, path: written.path)
        let report = LiveSegmentReport(path: written.path, durationSeconds: segment.durationSeconds,
                                       byteCount: written.byteCount, latencyMicroseconds: latency,
                                       droppedFramesSoFar: statistics.droppedFrameCount)
        observe { $0.segmentPublished(report) }
        for removal in written.removals { scheduleRemoval(removal) }
        if let publisher {
            for path in written.paths where StreamFileKind(path: path) == .segment {
                for dropped in publisher.addSegment(path, durationSeconds: segment.durationSeconds) {
                    messages(.uploadDropped(path: dropped))
                }
            }
            publisher.updatePlaylists(writer.playlists)
            if written.wroteMaster { publisher.addFile(StreamLayout.masterPlaylistName) }
        }
        let playlists = writer.mediaPlaylists
        observe { $0.playlists(playlists) }
        tellCounters()
    }

    private func tellCounters() {
        guard !observers.isEmpty else { return }
        let counters = statistics.snapshot()
        observe { $0.counted(counters) }
    }

    private func observe(_ tell: (any LiveStreamObserver) -> Void) {
        for observer in observers { tell(observer) }
    }

    /// A file that left the window goes after its retention time (`retentionSeconds` from now).
    private func scheduleRemoval(_ removal: LivePlaylist.Removal) {
        // The publisher deletes the local copy itself, once the origin no longer needs it.
        if let publisher { return publisher.removeFile(removal.uri, afterSeconds: removal.retentionSeconds) }
        retire(removal.uri, afterSeconds: removal.retentionSeconds)
    }

    /// The one retention timer: `path` is deleted `seconds` from now on the engine's clock, or at a clean
    /// stop at the latest. On `queue`, or before the first segment (what a resumed run inherits).
    func retire(_ path: String, afterSeconds seconds: Double) {
        let removableAt = clock.monotonicSeconds + max(0, seconds)
        retired.add(path, removableAt: removableAt)
        clock.schedule(afterSeconds: seconds, on: queue) { [self] in
            removeRetiredFiles(now: max(removableAt, clock.monotonicSeconds))
        }
    }

    private func removeRetiredFiles(now: Double) {
        for path in retired.takeRemovable(now: now) {
            do {
                try store.remove(path)
            } catch {
                messages(.removalFailed(error))
            }
        }
    }

    /// After the last segment: ends the playlists, waits out the retention time of what left the window,
    /// and lets the publisher finish; `completion` gets its report (nil without one), off the queue so
    /// that a second interrupt can still end at once. Not called when `endAtOnce` came first or cut the
    /// wait short.
    func finish(_ completion: @escaping @Sendable (PublishReport?) -> Void) {
        queue.async { [self] in
            guard !endedAtOnce else { return }
            // Counted before the playlists end, so that whoever sees EXT-X-ENDLIST finds the final figures.
            tellCounters()
            do throws(StoreError) {
                _ = try writer.finish()
            } catch {
                onFinishFailed(error)
            }
            finished = true
            let playlists = writer.mediaPlaylists
            observe { $0.playlists(playlists) }
            // A viewer holding an earlier playlist may still fetch what left the window: wait out the
            // retention time, then delete it, saying so, since the wait can be long. A second interrupt
            // leaves the files for the next run. A stream whose writing failed ends at once instead, and
            // leaves those files to the run that resumes it.
            if let last = retired.lastRemovableAt, !streamStopped {
                let seconds = max(0, last - clock.monotonicSeconds)
                messages(.waitingForRetention(fileCount: retired.count, seconds: seconds))
                let timer = clock.schedule(afterSeconds: seconds, on: .global()) { [self] in retentionWaitOver.signal() }
                retentionWaitOver.wait()
                if state.withLock({ $0.abandonedWaits }) {
                    timer.cancel()
                    return  // `endAtOnce` is next on this queue.
                }
                removeRetiredFiles(now: max(last, clock.monotonicSeconds))
            }
            guard let publisher else { return completion(nil) }
            publisher.updatePlaylists(writer.playlists)
            // The I-frame playlists go up once, complete.
            for (path, _) in writer.playlists where path.hasSuffix(StreamLayout.iFramePlaylistName) {
                publisher.addFile(path)
            }
            // Waiting for the origin off the queue lets a second interrupt end at once; on a thread of its
            // own, as the wait blocks (many streams ending at once would take Dispatch's pool).
            Thread { completion(publisher.finish()) }.start()
        }
    }

    /// A second interrupt: ends the playlists as they stand, without waiting for uploads, retention
    /// times or a busy disk for more than `graceMilliseconds`. Files still waiting for their retention
    /// time are left, listed for the next run in the store to delete when their time comes.
    func endAtOnce(graceMilliseconds: Int) {
        state.withLock { $0.abandonedWaits = true }
        retentionWaitOver.signal()
        let ended = DispatchSemaphore(value: 0)
        queue.async { [self] in
            state.withLock { $0.endedAtOnce = true }
            if !finished {
                finished = true
                do throws(StoreError) {
                    _ = try writer.finish()
                } catch {
                    messages(.endFailed(error))
                }
            }
            leaveRetiredFiles()
            ended.signal()
        }
        _ = ended.wait(timeout: .now() + .milliseconds(graceMilliseconds))
    }

    /// Lists the files that still wait for their retention time where the next run finds them.
    private func leaveRetiredFiles() {
        guard retired.count > 0 else { return }
        let manifest = retired.manifest(monotonicNow: clock.monotonicSeconds, now: clock.now())
        do {
            try store.write(Array(manifest.utf8), to: StreamLayout.retiredListName)
            messages(.leftForNextRun(fileCount: retired.count))
        } catch {
            messages(.removalFailed(error))
        }
    }
}
