import Foundation
import HLSKit
import HLSMedia

/// Counters shared by the capture threads, the writing queue and the output queue.
final class LiveStatistics {
    private let lock = NSLock()
    private let startMicroseconds = MonotonicClock.nowMicroseconds()
    private var frames = 0
    private var recentFrameTimes: [Int64] = []
    private var droppedFrames = 0
    private var segments = 0
    private var mediaBytes = 0
    private var mediaSeconds = 0.0
    private var lastSegment = "-"
    private var audioPeak: Float = 0
    private(set) var latenciesMicroseconds: [Int64] = []
    /// Uploads, when publishing: their counts join the status line.
    var publisher: StreamPublisher?

    func countFrame(captureMicroseconds: Int64) {
        lock.withLock {
            frames += 1
            recentFrameTimes.append(captureMicroseconds)
            if recentFrameTimes.count > 60 { recentFrameTimes.removeFirst(recentFrameTimes.count - 60) }
        }
    }

    func countDroppedFrame() {
        lock.withLock { droppedFrames += 1 }
    }

    func measureAudio(peak: Float) {
        lock.withLock { audioPeak = max(audioPeak * 0.9, peak) }
    }

    func countSegment(_ segment: Segment, bytes: Int, latencyMicroseconds: Int64?, path: String) {
        lock.withLock {
            segments += 1
            mediaBytes += bytes
            mediaSeconds += segment.durationSeconds
            lastSegment = path
            if let latencyMicroseconds { latenciesMicroseconds.append(latencyMicroseconds) }
        }
    }

    var droppedFrameCount: Int { lock.withLock { droppedFrames } }

    /// One line: uptime, input rate, dropped frames, bitrate, last segment, audio level.
    func statusLine() -> String {
        lock.withLock {
            let uptime = Int((MonotonicClock.nowMicroseconds() - startMicroseconds) / 1_000_000)
            var fps = 0.0
            if let first = recentFrameTimes.first, let last = recentFrameTimes.last, last > first {
                fps = Double(recentFrameTimes.count - 1) * 1_000_000 / Double(last - first)
            }
            let kilobits = mediaSeconds > 0 ? Int(Double(mediaBytes) * 8 / mediaSeconds / 1000) : 0
            let level = audioPeak > 0 ? String(format: "%.0f dB", 20 * log10(Double(audioPeak))) : "-inf dB"
            var line = String(format: "live %02d:%02d:%02d  %.1f fps  dropped %d  %d kb/s  %d segments, last %@  audio %@",
                              uptime / 3600, uptime / 60 % 60, uptime % 60, fps, droppedFrames, kilobits, segments,
                              lastSegment, level)
            if let status = publisher?.status {
                line += String(format: "  upload %d up, %d queued, %d failed, %.1f MB/s", status.uploadedCount,
                               status.queuedCount, status.failedCount, status.bytesPerSecond / 1_000_000)
            }
            return line
        }
    }

    func summary() -> String {
        lock.withLock {
            let kilobits = mediaSeconds > 0 ? Int(Double(mediaBytes) * 8 / mediaSeconds / 1000) : 0
            return String(format: "%d segments, %.3f s, %d kb/s, %d frames, %d dropped, mode live",
                          segments, mediaSeconds, kilobits, frames, droppedFrames)
        }
    }
}

/// Redraws the status line on stderr a few times a second, when stderr is a terminal.
final class StatusLine {
    private let statistics: LiveStatistics
    private var timer: DispatchSourceTimer?
    private let isTerminal = isatty(STDERR_FILENO) != 0

    init(statistics: LiveStatistics) {
        self.statistics = statistics
    }

    func start() {
        guard isTerminal else { return }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        timer.schedule(deadline: .now() + .milliseconds(500), repeating: .milliseconds(500))
        timer.setEventHandler { [statistics] in
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + statistics.statusLine()).utf8))
        }
        timer.resume()
        self.timer = timer
    }

    func stop() {
        timer?.cancel()
        if isTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}

/// SIGINT and SIGTERM delivered on a queue instead of killing the process; the handler learns whether
/// this is the second one.
final class SignalHandling {
    private var sources: [DispatchSourceSignal] = []
    private var count = 0
    private let queue = DispatchQueue(label: "hlscap.signals")

    init(_ handler: @escaping (_ second: Bool) -> Void) {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [weak self] in
                guard let self else { return }
                count += 1
                handler(count > 1)
            }
            source.resume()
            sources.append(source)
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
