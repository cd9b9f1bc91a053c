import Foundation
import HLSKit
import HLSMedia

/// Where the stream's timeline sits on the capture clock and the wall clock.
struct LiveTiming {
    /// Capture time (µs, monotonic) of the first frame of either kind: time zero of the encoders.
    var originMicroseconds: Int64?
    /// Capture time of the first video frame: the segmenter puts it at `startOffsetSeconds`.
    var leadMicroseconds: Int64?
    /// Wall-clock time matching `originMicroseconds`.
    var originDate: Date?
    var startOffsetSeconds = Segmenter.Configuration.defaultStartOffsetSeconds

    /// Capture time (µs) of an output time on the lead track.
    func captureMicroseconds(ticks: Int64, timescale: UInt32) -> Int64? {
        guard let lead = leadMicroseconds ?? originMicroseconds else { return nil }
        return lead + rescale(ticks - startOffsetSeconds * Int64(timescale), from: Int64(timescale), to: 1_000_000)
    }

    /// EXT-X-PROGRAM-DATE-TIME: the wall-clock time at which the segment's first frame was captured.
    func programDateTime(of segment: Segment) -> Date? {
        guard let origin = originMicroseconds, let originDate,
              let start = captureMicroseconds(ticks: segment.startTicks, timescale: segment.timescale) else { return nil }
        return originDate.addingTimeInterval(Double(start - origin) / 1_000_000)
    }

    /// From the capture of the segment's last sample to now.
    func publishLatencyMicroseconds(of segment: Segment, lastSampleTicks: Int64) -> Int64? {
        guard let end = captureMicroseconds(ticks: segment.startTicks + segment.durationTicks - lastSampleTicks,
                                            timescale: segment.timescale) else { return nil }
        return MonotonicClock.nowMicroseconds() - end
    }
}

/// The writing queue's state: maps capture times onto the stream's timeline, scales, encodes and segments.
final class LiveEncoding {
    static let videoTrack = 0

    let tracks: [TrackDescription]
    private(set) var timing = LiveTiming()
    var firstSequenceNumber = 1

    private let settings: LivePipeline.Settings
    private let statistics: LiveStatistics
    private let videoEncoder: VideoEncoder?
    private let audioEncoder: AudioEncoder?
    private let resampler: Resampler?
    private let fifo: AudioFIFO?
    private let audioTrack: Int
    private var scaler: Scaler?
    private var schedule: KeyframeSchedule
    private var segmenter: Segmenter?
    private var lastVideoTicks: Int64?

    init(settings: LivePipeline.Settings, hasVideo: Bool, hasAudio: Bool, statistics: LiveStatistics) throws {
        self.settings = settings
        self.statistics = statistics
        let frameRate = Rational(Int32(settings.framesPerSecond), 1)
        var tracks: [TrackDescription] = []
        if hasVideo {
            let encoder = try VideoEncoder(settings: VideoEncoderSettings(
                width: settings.size.width, height: settings.size.height, frameRate: frameRate,
                bitrate: settings.videoBitrate ?? Self.defaultVideoBitrate(settings),
                preset: settings.preset, zeroLatency: true,
                keyframeIntervalFrames: Int(settings.segmentMilliseconds) * settings.framesPerSecond / 1000,
                threadCount: Self.encoderThreads(settings)),
                trackIndex: tracks.count)
            tracks.append(TrackDescription(trackID: UInt32(tracks.count + 1), timescale: UInt32(VideoEncoder.timescale),
                                           format: .h264(encoder.format)))
            videoEncoder = encoder
        } else {
            videoEncoder = nil
        }
        audioTrack = tracks.count
        if hasAudio {
            let audioSettings = AudioEncoderSettings(bitrate: settings.audioBitrate)
            let encoder = try AudioEncoder(settings: audioSettings, trackIndex: audioTrack)
            tracks.append(TrackDescription(trackID: UInt32(tracks.count + 1), timescale: UInt32(audioSettings.sampleRate),
                                           format: .aac(AACFormat(audioSpecificConfig: encoder.audioSpecificConfig,
                                                                  averageBitrate: UInt32(settings.audioBitrate)))))
            audioEncoder = encoder
            resampler = Resampler(for: audioSettings)
            fifo = try AudioFIFO(for: audioSettings)
        } else {
            audioEncoder = nil
            resampler = nil
            fifo = nil
        }
        self.tracks = tracks
        schedule = KeyframeSchedule(segmentMilliseconds: settings.segmentMilliseconds, timescale: VideoEncoder.timescale)
    }

    /// Up to 720p30 one thread keeps up in real time with room to spare and costs less CPU than
    /// sliced threads, which split every frame; larger pictures get every core.
    static func encoderThreads(_ settings: LivePipeline.Settings) -> Int {
        let pixelsPerSecond = settings.size.width * settings.size.height * settings.framesPerSecond
        return pixelsPerSecond <= 1280 * 720 * 30 ? 1 : 0
    }

    /// About 0.1 bit per pixel: 2.8 Mb/s for 720p30, 6.2 Mb/s for 1080p30.
    static func defaultVideoBitrate(_ settings: LivePipeline.Settings) -> Int {
        let bits = settings.size.width * settings.size.height * settings.framesPerSecond / 10
        return max(200_000, bits / 100_000 * 100_000)
    }

    private func makeSegmenter() -> Segmenter {
        Segmenter(configuration: .init(
            tracks: tracks.map { Segmenter.Track(timescale: $0.timescale, isVideo: $0.isVideo) },
            segmentMilliseconds: settings.segmentMilliseconds, firstSequenceNumber: firstSequenceNumber))
    }

    private func anchor(_ captureMicroseconds: Int64) -> Int64 {
        if timing.originMicroseconds == nil {
            timing.originMicroseconds = captureMicroseconds
            let age = MonotonicClock.nowMicroseconds() - captureMicroseconds
            timing.originDate = Date().addingTimeInterval(-Double(age) / 1_000_000)
        }
        return captureMicroseconds - timing.originMicroseconds!
    }

    /// With `--duration`, capture past the end is left out, so the stream is exactly that long.
    private func isPastDuration(_ microsecondsSinceOrigin: Int64) -> Bool {
        guard let milliseconds = settings.durationMilliseconds else { return false }
        return microsecondsSinceOrigin >= milliseconds * 1000
    }

    func encode(video frame: Frame) throws -> [Segment] {
        guard let videoEncoder, let capture = frame.pts else { return [] }
        let sinceOrigin = anchor(capture)
        guard !isPastDuration(sinceOrigin) else { return [] }
        statistics.countFrame(captureMicroseconds: capture)
        let ticks = rescale(sinceOrigin, from: 1_000_000, to: VideoEncoder.timescale)
        // The encoder needs increasing times; a frame stamped no later than the previous one is a duplicate.
        if let last = lastVideoTicks, ticks <= last { return [] }
        if timing.leadMicroseconds == nil { timing.leadMicroseconds = capture }
        lastVideoTicks = ticks
        let picture = try scaled(frame)
        picture.pts = ticks
        picture.timeBase = Rational(1, Int32(VideoEncoder.timescale))
        let firstTicks = rescale(timing.leadMicroseconds! - timing.originMicroseconds!, from: 1_000_000,
                                 to: VideoEncoder.timescale)
        let forceKeyframe = schedule.isKeyframe(ticksSinceStart: ticks - firstTicks)
        return segment(try videoEncoder.encode(picture, forceKeyframe: forceKeyframe))
    }

    func encode(audio frame: Frame) throws -> [Segment] {
        guard let audioEncoder, let resampler, let fifo, let capture = frame.pts else { return [] }
        frame.pts = anchor(capture)
        guard !isPastDuration(frame.pts!) else { return [] }
        frame.timeBase = MonotonicClock.timeBase
        var samples: [EncodedSample] = []
        for converted in try resampler.convert(frame) {
            statistics.measureAudio(peak: converted.peakLevel())
            try fifo.write(converted)
            while let block = try fifo.readFrame() {
                samples += try audioEncoder.encode(block)
            }
        }
        return segment(samples)
    }

    /// Flushes the encoders and ends the segmenter: the last, possibly short, segment.
    func finish() throws -> [Segment] {
        var samples: [EncodedSample] = []
        if let videoEncoder { samples += try videoEncoder.flush() }
        if let audioEncoder, let fifo {
            if let remainder = try fifo.readRemainder() { samples += try audioEncoder.encode(remainder) }
            samples += try audioEncoder.flush()
        }
        var segments = segment(samples)
        if var segmenter {
            segments += segmenter.finish()
            self.segmenter = segmenter
        }
        return segments
    }

    private func segment(_ samples: [EncodedSample]) -> [Segment] {
        guard !samples.isEmpty else { return [] }
        var segmenter = self.segmenter ?? makeSegmenter()
        var segments: [Segment] = []
        for sample in samples { segments += segmenter.append(sample) }
        self.segmenter = segmenter
        return segments
    }

    private func scaled(_ frame: Frame) throws -> Frame {
        guard frame.width != settings.size.width || frame.height != settings.size.height else { return frame }
        if scaler == nil {
            scaler = Scaler(width: settings.size.width, height: settings.size.height)
        }
        return try scaler!.scale(frame)
    }
}
