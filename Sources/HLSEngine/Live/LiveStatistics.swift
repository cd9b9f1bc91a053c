import Foundation
import HLSBase
import HLSKit
import HLSOutput

/// Counters shared by the capture threads, the writing queue and the output queue.
///
/// Unchecked sendable: every mutable property is read and written under `lock`.
public final class LiveStatistics: @unchecked Sendable {
    private let lock = NSLock()
    private let clock: any Scheduler
    private let startMicroseconds: Int64
    private var frames = 0
    private var recentFrameTimes: [Int64] = []
    private var droppedFrames = 0
    /// The video is the source's own, copied, not encoded.
    private var videoCopied = false
    private var segments = 0
    private var mediaBytes = 0
    private var mediaSeconds = 0.0
    private var lastSegment = "-"
    private var audioPeak: Float = 0
    /// The audio device's sample clock against the system clock, once measured.
    private var audioClock: (partsPerMillion: Double, resyncs: Int)?
    /// Devices that were lost and came back (`--reconnect`): how often, and for how long in all.
    private var outages: [(device: String, count: Int, seconds: Double)] = []
    /// Devices still away when the stream stopped, and for how long they had been.
    private var awayAtStop: [(device: String, seconds: Double)] = []
    private var renditionNames: [String] = []
    private var renditionBytes: [Int] = []
    private var recordingRemovals: [RecordingRetention.Reason: Removals] = [:]
    public private(set) var latenciesMicroseconds: [Int64] = []
    /// Uploads, when publishing: their counts join the status line.
    var publisher: LayoutPublisher?

    public init(clock: any Scheduler = SystemClock()) {
        self.clock = clock
        startMicroseconds = clock.monotonicMicroseconds()
    }

    /// Names the video renditions whose rates the status line shows, in layout order.
    func nameRenditions(_ names: [String]) {
        lock.withLock {
            renditionNames = names
            renditionBytes = Array(repeating: 0, count: names.count)
        }
    }

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

    func measureAudioClock(partsPerMillion: Double, resyncs: Int) {
        lock.withLock { audioClock = (partsPerMillion, resyncs) }
    }

    func countOutage(device: String, seconds: Double) {
        lock.withLock {
            if let index = outages.firstIndex(where: { $0.device == device }) {
                outages[index].count += 1
                outages[index].seconds += seconds
            } else {
                outages.append((device, 1, seconds))
            }
        }
    }

    /// The stream stopped while `device` was still away (`--reconnect`), lost `seconds` before.
    func noteAwayAtStop(device: String, seconds: Double) {
        lock.withLock { awayAtStop.append((device, seconds)) }
    }

    func countSegment(_ segment: Segment, bytes: Int, renditionBytes perRendition: [Int], latencyMicroseconds: Int64?,
                      path: String) {
        lock.withLock {
            for (index, count) in perRendition.enumerated() where index < renditionBytes.count {
                renditionBytes[index] += count
            }
            segments += 1
            mediaBytes += bytes
            mediaSeconds += segment.durationSeconds
            lastSegment = path
            if let latencyMicroseconds { latenciesMicroseconds.append(latencyMicroseconds) }
        }
    }

    public var droppedFrameCount: Int { lock.withLock { droppedFrames } }

    /// The counters as they stand, for metrics.
    public struct Snapshot: Sendable {
        public var frames: Int
        public var droppedFrames: Int
        public var segments: Int
        public var mediaBytes: Int
        public var mediaSeconds: Double
        /// Video renditions by name with the bytes of their segments; every rendition gets every
        /// frame that was not dropped, and the drops happen before any rendition sees a frame.
        public var renditions: [(name: String, bytes: Int)]
        /// From the capture of a segment's last frame to the playlist that lists it, the latest.
        public var lastListingLatencySeconds: Double?
        public var upload: PublishStatus?
        /// Recording files retention deleted, by why.
        public var recordingRemovals: [RecordingRetention.Reason: Removals]
    }

    public struct Removals: Sendable, Equatable {
        public var files = 0
        public var bytes: Int64 = 0
    }

    public func snapshot() -> Snapshot {
        lock.withLock {
            Snapshot(frames: frames, droppedFrames: droppedFrames, segments: segments, mediaBytes: mediaBytes,
                     mediaSeconds: mediaSeconds, renditions: Array(zip(renditionNames, renditionBytes)),
                     lastListingLatencySeconds: latenciesMicroseconds.last.map { Double($0) / 1_000_000 },
                     upload: publisher?.status, recordingRemovals: recordingRemovals)
        }
    }

    /// One line: uptime, input rate, dropped frames, bitrate (each rung's with a ladder), last segment,
    /// audio level.
    public func statusLine() -> String {
        lock.withLock {
            let uptime = Int((clock.monotonicMicroseconds() - startMicroseconds) / 1_000_000)
            var fps = 0.0
            if let first = recentFrameTimes.first, let last = recentFrameTimes.last, last > first {
                fps = Double(recentFrameTimes.count - 1) * 1_000_000 / Double(last - first)
            }
            let kilobits = mediaSeconds > 0 ? Int(Double(mediaBytes) * 8 / mediaSeconds / 1000) : 0
            let level = audioPeak > 0 ? String(format: "%.0f dB", 20 * log10(Double(audioPeak))) : "-inf dB"
            var line = String(format: "live %02d:%02d:%02d  %.1f fps  dropped %d  %d kb/s  %d segments, last %@  audio %@",
                              uptime / 3600, uptime / 60 % 60, uptime % 60, fps, droppedFrames, kilobits, segments,
                              lastSegment, level)
            if let audioClock {
                // What the resampler makes up for: the microphone's clock against the camera's.
                line += String(format: " (clock %+.0f ppm%@)", audioClock.partsPerMillion,
                               audioClock.resyncs > 0 ? ", \(audioClock.resyncs) resyncs" : "")
            }
            if renditionNames.count > 1, mediaSeconds > 0 {
                let rates = zip(renditionNames, renditionBytes).map { name, bytes in
                    "\(name) \(Int(Double(bytes) * 8 / mediaSeconds / 1000))k"
                }
                line += "  (" + rates.joined(separator: ", ") + ")"
            }
            if !recordingRemovals.isEmpty {
                let files = recordingRemovals.values.reduce(0) { $0 + $1.files }
                let bytes = recordingRemovals.values.reduce(Int64(0)) { $0 + $1.bytes }
                line += String(format: "  recordings deleted %d (%.1f MB)", files, Double(bytes) / 1_000_000)
            }
            if let status = publisher?.status {
                line += String(format: "  upload %d up, %d queued, %d failed, %.1f MB/s", status.uploadedCount,
                               status.queuedCount, status.failedCount, status.bytesPerSecond / 1_000_000)
            }
            return line
        }
    }

    /// Retention deleted a recording file.
    func countRecordingRemoved(reason: RecordingRetention.Reason, byteCount: Int64) {
        lock.withLock {
            recordingRemovals[reason, default: Removals()].files += 1
            recordingRemovals[reason, default: Removals()].bytes += byteCount
        }
    }

    func noteVideoCopied() {
        lock.withLock { videoCopied = true }
    }

    public func summary() -> String {
        lock.withLock {
            let kilobits = mediaSeconds > 0 ? Int(Double(mediaBytes) * 8 / mediaSeconds / 1000) : 0
            var summary = String(format: "%d segments, %.3f s, %d kb/s, %d frames, %d dropped, mode live",
                                 segments, mediaSeconds, kilobits, frames, droppedFrames)
            if videoCopied { summary += ", video copied" }
            if let audioClock {
                summary += String(format: ", audio clock %+.0f ppm, %d resyncs", audioClock.partsPerMillion,
                                  audioClock.resyncs)
            }
            for outage in outages {
                summary += String(format: ", %@ reconnected %d %@ after %.1f s without it", outage.device, outage.count,
                                  outage.count == 1 ? "time" : "times", outage.seconds)
            }
            for away in awayAtStop {
                summary += String(format: ", %@ still away at the stop (lost %.1f s before it)", away.device, away.seconds)
            }
            return summary
        }
    }
}
