import Foundation
import HLSBase
import HLSEngine
import HLSServer

/// A live stream's status for the server's index page, API and metrics, kept from what the engine
/// says (its messages, its segments, its counters): the adapter between the engine and the server,
/// which knows no engine.
final class LiveStreamStatus: StreamStatusSource, LiveStreamObserver {
    private struct State {
        var state: StreamStatus.State = .starting
        var lastSegmentMicroseconds: Int64?
        var errors: [String] = []
        var counted: LiveStatistics.Snapshot?
    }

    /// Problems kept for the API and the page.
    static let keptErrors = 5

    private let input: String
    private let recordingFolder: String?
    private let clock: any Scheduler
    private let state = Locked(State())

    init(input: String, recordingFolder: String?, clock: any Scheduler = SystemClock()) {
        self.input = Self.withoutCredentials(input)
        self.recordingFolder = recordingFolder
        self.clock = clock
    }

    /// A URL without its user name and password; anything else as it is.
    static func withoutCredentials(_ input: String) -> String {
        guard var components = URLComponents(string: input), components.scheme != nil,
              components.user != nil || components.password != nil else { return input }
        components.user = nil
        components.password = nil
        return components.string ?? input
    }

    /// What the engine said, as the stream's state and problems.
    func heard(_ message: EngineMessage, line: String) {
        state.withLock { state in
            switch message {
            case .deviceLost:
                state.state = .reconnecting
            case .deviceBack:
                if state.state == .reconnecting { state.state = .live }
                return
            case .streamStopped(let error):
                state.state = .stopped(reason: "\(error)")
            case .uploadDropped, .recordingStopped, .removalFailed, .takeBackFailed, .endFailed:
                break
            default:
                return
            }
            state.errors.append(line)
            if state.errors.count > Self.keptErrors { state.errors.removeFirst(state.errors.count - Self.keptErrors) }
        }
    }

    /// The stream ended: cleanly (`reason` nil says it ended), or failing with `reason`.
    func ended(reason: String?) {
        state.withLock { state in
            if case .stopped = state.state { return }
            state.state = .stopped(reason: reason ?? "ended")
        }
    }

    func counted(_ statistics: LiveStatistics.Snapshot) {
        state.withLock { $0.counted = statistics }
    }

    func segmentPublished(_ report: LiveSegmentReport) {
        let now = clock.monotonicMicroseconds()
        state.withLock { state in
            state.lastSegmentMicroseconds = now
            if state.state == .starting { state.state = .live }
        }
    }

    func status() -> StreamStatus {
        let (kept, now) = (state.withLock { $0 }, clock.monotonicMicroseconds())
        var status = StreamStatus(state: kept.state, input: input, errors: kept.errors)
        status.lastSegmentAgeSeconds = kept.lastSegmentMicroseconds.map { Double(now - $0) / 1_000_000 }
        if let recordingFolder { status.recording = .init(folder: recordingFolder) }
        guard let snapshot = kept.counted else { return status }
        let rate = { (bytes: Int) in snapshot.mediaSeconds > 0 ? Int(Double(bytes) * 8 / snapshot.mediaSeconds) : nil }
        status.bitsPerSecond = rate(snapshot.mediaBytes)
        status.renditions = snapshot.renditions.map { .init(name: $0.name, bitsPerSecond: rate($0.bytes)) }
        status.framesDropped = snapshot.droppedFrames
        status.recording?.filesDeleted = snapshot.recordingRemovals.values.reduce(0) { $0 + $1.files }
        if let upload = snapshot.upload {
            status.publishBacklog = .init(files: upload.queuedCount, mediaSeconds: upload.queuedMediaSeconds,
                                          failures: upload.failedCount)
        }
        return status
    }
}
