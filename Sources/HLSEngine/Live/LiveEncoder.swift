import Foundation
import HLSBase
import HLSKit
import HLSMedia
import HLSOutput

/// Where the stream's timeline sits on the capture clock and the wall clock.
struct LiveTiming: Sendable {
    /// Capture time (µs, monotonic) of the first frame of either kind: time zero of the encoders.
    var originMicroseconds: Int64?
    /// Capture time of the first video frame: the segmenter puts it at the start offset.
    var leadMicroseconds: Int64?
    /// Wall-clock time matching `originMicroseconds`.
    var originDate: Date?
    var startOffsetSeconds = Segmenter.Configuration.defaultStartOffsetSeconds

    /// Capture time (µs) of an output time on the lead track.
    func captureMicroseconds(ticks: Int64, timescale: Timescale) -> Int64? {
        guard let lead = leadMicroseconds ?? originMicroseconds else { return nil }
        return lead + timescale.convert(ticks - startOffsetSeconds * timescale.perSecond, to: .microseconds)
    }

    /// EXT-X-PROGRAM-DATE-TIME: the wall-clock time at which the segment's first frame was captured,
    /// from the whole segment, so every rendition's part of it gets the same instant.
    func programDateTime(of segment: Segment) -> Date? {
        guard let origin = originMicroseconds, let originDate,
              let start = captureMicroseconds(ticks: segment.startTicks, timescale: segment.timescale) else { return nil }
        return originDate.addingTimeInterval(Double(start - origin) / 1_000_000)
    }

    /// From the capture of the segment's last sample to `nowMicroseconds`.
    func publishLatencyMicroseconds(of segment: Segment, lastSampleTicks: Int64, nowMicroseconds: Int64) -> Int64? {
        guard let end = captureMicroseconds(ticks: segment.startTicks + segment.durationTicks - lastSampleTicks,
                                            timescale: segment.timescale) else { return nil }
        return nowMicroseconds - end
    }
}

/// The writing queue's state: maps capture times onto the stream's timeline, then scales and encodes
/// every rendition and cuts segments with one segmenter, so all renditions share one grid.
final class LiveEncoder {
    let tracks: [TrackDescription]
    let layout: StreamLayout
    /// The rates each rendition is held to, for the master playlist written before anything is measured.
    let declared: [RenditionMeasure]
    private(set) var timing = LiveTiming()
    var firstSequenceNumber = 1

    private let configuration: LiveConfiguration
    private let statistics: LiveStatistics
    private let clock: any Scheduler
    private let video: VideoRenditions?
    private let audio: AudioLane?
    /// The capture time written into every picture before it is encoded.
    private let overlay: TimeOverlayFilter?
    /// A ladder on copied video (`--ladder source,480p,360p`): the source's pictures, decoded for the rungs
    /// below it, which `video` encodes.
    private let sourceDecoder: SampleDecoder?
    /// Whether copied video is also decoded, for a ladder's rungs.
    var decodesCopiedVideo: Bool { sourceDecoder != nil }
    /// Presentation times (the copied track's ticks, stream time) of the source keyframes that start
    /// segments, oldest first: the rungs below get their IDRs there, so segment N of every rung starts at
    /// the same picture.
    private var rungKeyframeTicks: [Int64] = []
    private var segmenter: Segmenter?
    private var lastVideoTicks: Int64?
    /// Parts cut since the last `takeParts` (LL-HLS).
    private var parts: [Segmenter.PartPiece] = []
    /// The next video frame (the next audio block without video) starts a segment: an operator's mark,
    /// or a device that came back.
    var startsSegmentAtNextFrame = false
    /// That segment follows EXT-X-DISCONTINUITY: a capture device came back (`--reconnect`).
    var nextSegmentFollowsDiscontinuity = false
    /// The recording beside the stream, fed the same frames and the same audio.
    let recorder: LiveRecorder?
    /// The video is a source's own, copied: its keyframes cut the segments.
    let copiesVideo: Bool
    /// A frame of the lead track (the video, or the sound without video) came at or past the duration:
    /// every frame of the stream is in, and it may end.
    private(set) var reachedDuration = false

    /// `copied`: tracks a source hands on encoded (a network camera's H.264, its AAC), written as they are
    /// instead of encoding that kind; they come first, the video before its sound.
    init(configuration: LiveConfiguration, delivers: CaptureKinds, copied: [TrackDescription] = [],
         statistics: LiveStatistics, clock: any Scheduler,
         messages: @escaping @Sendable (EngineMessage) -> Void) throws {
        self.configuration = configuration
        self.statistics = statistics
        self.clock = clock
        var tracks: [TrackDescription] = copied
        // What each track's encoder is held to, for the master playlist written before anything is measured.
        var trackMeasures: [RenditionMeasure] = []
        let segmentMilliseconds = configuration.segmentMilliseconds
        let framesPerSecond = configuration.framesPerSecond
        // Each chunk of a part is a fragment with every track's samples of one video frame.
        let fragmentsPerSecond = configuration.partMilliseconds == nil ? 0 : framesPerSecond
        for track in copied {
            // A copied track's rate is the source's: a guess for the master playlist, from the size.
            let bitrate = track.isVideo
                ? VideoRenditionSettings.defaultBitrate(size: configuration.size, frameRate: Rational(Int32(framesPerSecond), 1)) * 2
                : configuration.audioBitrate
            let measured = Self.withContainerOverhead(bitrate, framesPerSecond: track.isVideo ? framesPerSecond : 47,
                                                      fragmentsPerSecond: fragmentsPerSecond)
            var measure = RenditionMeasure(tracks: [track], peakBitrate: measured + measured / 2, averageBitrate: measured,
                                           framesPerSecond: track.isVideo ? Double(framesPerSecond) : nil,
                                           iFramePeakBitrate: track.isVideo ? measured : 0, iFrameAverageBitrate: 0)
            measure.isEstimate = true
            trackMeasures.append(measure)
        }
        copiesVideo = copied.contains(where: \.isVideo)
        let copiedVideo = copied.first(where: \.isVideo)
        // With copied video, the ladder's rungs below the source are encoded from its decoded pictures.
        let encodedRungs = copiesVideo ? (configuration.ladder ?? []).filter { !$0.isSource } : nil
        if delivers.contains(.video), encodedRungs?.isEmpty != true {
            let settings = Self.videoRenditions(configuration, rungs: encodedRungs)
            let renditionsEncoder = try VideoRenditions(
                renditions: settings, frameRate: Rational(Int32(framesPerSecond), 1),
                preset: configuration.preset, zeroLatency: true,
                // A ladder's master playlist declares every rung's rate before anything is measured.
                constantBitRate: configuration.ladder != nil,
                // Rungs that follow a camera's keyframes get no IDR of their own between two of them.
                segmentMilliseconds: copiesVideo
                    ? max(segmentMilliseconds, Int64(configuration.targetDurationSeconds ?? 0) * 1000) : segmentMilliseconds,
                threadCount: configuration.encoderThreads(for: settings[0].size), firstTrackIndex: tracks.count,
                makeEncoder: configuration.makeVideoEncoder)
            tracks += renditionsEncoder.tracks
            for (index, rendition) in settings.enumerated() {
                let encoderSettings = VideoEncoderSettings(
                    width: rendition.size.width, height: rendition.size.height,
                    frameRate: renditionsEncoder.frameRate, bitrate: rendition.bitrate, zeroLatency: true,
                    keyframeIntervalFrames: 1)
                let peak = Self.withContainerOverhead(encoderSettings.peakSegmentBitrate(
                    segmentMilliseconds: segmentMilliseconds), framesPerSecond: framesPerSecond,
                    fragmentsPerSecond: fragmentsPerSecond)
                trackMeasures.append(RenditionMeasure(
                    tracks: [renditionsEncoder.tracks[index]], peakBitrate: peak,
                    averageBitrate: Self.withContainerOverhead(rendition.bitrate, framesPerSecond: framesPerSecond,
                                                               fragmentsPerSecond: fragmentsPerSecond),
                    framesPerSecond: Double(framesPerSecond), iFramePeakBitrate: peak, iFrameAverageBitrate: 0))
            }
            video = renditionsEncoder
            overlay = try configuration.overlay.map { overlay throws in try TimeOverlayFilter(overlay: overlay) }
            sourceDecoder = try copiedVideo.map { try SampleDecoder(track: $0) }
        } else {
            video = nil
            overlay = nil
            sourceDecoder = nil
        }
        if delivers.contains(.audio), !copied.contains(where: { !$0.isVideo }) {
            let audioSettings = AudioEncoderSettings(bitrate: configuration.audioBitrate)
            // A microphone's clock drifts from the camera's: the audio keeps to its capture times.
            let lane = try AudioLane(settings: audioSettings, trackIndex: tracks.count, followsTimestamps: true)
            lane.measuresLevel = true
            let track = TrackDescription(trackID: UInt32(tracks.count + 1), timescale: Timescale(audioSettings.sampleRate),
                                         format: .aac(AACFormat(audioSpecificConfig: lane.encoder.audioSpecificConfig,
                                                                averageBitrate: UInt32(configuration.audioBitrate))))
            let average = Self.withContainerOverhead(configuration.audioBitrate, framesPerSecond: audioSettings.sampleRate / 1024,
                                                     fragmentsPerSecond: fragmentsPerSecond)
            trackMeasures.append(RenditionMeasure(tracks: [track], peakBitrate: average + average / 10,
                                                  averageBitrate: average, framesPerSecond: nil, iFramePeakBitrate: 0,
                                                  iFrameAverageBitrate: 0))
            tracks.append(track)
            audio = lane
        } else {
            audio = nil
        }
        self.tracks = tracks
        // The same layout as a file's: one rendition, or with a ladder every rung and the audio apart.
        layout = StreamLayout.make(tracks: tracks, videoNames: configuration.ladder.map { $0.map(\.name) })
        declared = layout.renditions.map { rendition in
            let own = rendition.trackIndexes.map { trackMeasures[$0] }
            var measure = own[0]
            for other in own.dropFirst() {
                measure.tracks += other.tracks
                measure.peakBitrate += other.peakBitrate
                measure.averageBitrate += other.averageBitrate
            }
            return measure
        }
        recorder = try configuration.record.map { record in
            let size = record.size ?? configuration.size
            let rate = record.bitrate ?? Int(Double(2 * VideoRenditionSettings.defaultBitrate(
                size: size, frameRate: Rational(Int32(framesPerSecond), 1))) * (record.codec == .hevc ? 0.8 : 1))
            // A copied source is recorded as it is, unless the recording asks for its own encoding.
            let copiedVideo = record.encodes ? nil : copied.first(where: \.isVideo)
            return try LiveRecorder(
                settings: .init(store: record.store, path: record.path, size: size, codec: record.codec, bitrate: rate,
                                framesPerSecond: framesPerSecond, preset: configuration.preset,
                                segmentMilliseconds: configuration.segmentMilliseconds,
                                makeVideoEncoder: configuration.makeVideoEncoder, split: record.split),
                copying: copiedVideo, audio: tracks.first { !$0.isVideo }, clock: clock, messages: { [statistics] message in
                    if case .recordingRemoved(path: _, reason: let reason, byteCount: let byteCount) = message {
                        statistics.countRecordingRemoved(reason: reason, byteCount: byteCount)
                    }
                    messages(message)
                })
        }
    }

    /// The encoded renditions: `rungs` when given (those below a copied source), else the ladder's, else one.
    private static func videoRenditions(_ configuration: LiveConfiguration,
                                        rungs: [LadderRung]? = nil) -> [VideoRenditionSettings] {
        guard let ladder = rungs ?? configuration.ladder else {
            let bitrate = configuration.videoBitrate
                ?? VideoRenditionSettings.defaultBitrate(size: configuration.size,
                                                         frameRate: Rational(Int32(configuration.framesPerSecond), 1))
            return [VideoRenditionSettings(size: configuration.size, bitrate: bitrate, name: "",
                                           codec: configuration.videoCodec)]
        }
        return ladder.map { rung in
            rung.renditionSettings(
                size: rung.size(sourceWidth: configuration.size.width, sourceHeight: configuration.size.height),
                framesPerSecond: Double(configuration.framesPerSecond), streamCodec: configuration.videoCodec)
        }
    }

    /// fMP4 adds a `trun` entry per sample and a `moof` per segment: about 2 % and 16 bytes a sample.
    /// LL-HLS parts, made of a fragment per video frame, add its boxes to every frame: about 100 bytes
    /// (`moof`, `mfhd`, `traf`, `tfhd`, `tfdt`, `trun`, `mdat`), counted `fragmentsPerSecond` times.
    static func withContainerOverhead(_ bitrate: Int, framesPerSecond: Int, fragmentsPerSecond: Int = 0) -> Int {
        bitrate + bitrate / 50 + framesPerSecond * 16 * 8 + fragmentsPerSecond * 100 * 8
    }

    private var segmenting: Segmenter.Configuration {
        var segmenting = Segmenter.Configuration(
            tracks: tracks.map { Segmenter.Track(timescale: $0.timescale, isVideo: $0.isVideo) },
            segmentMilliseconds: configuration.segmentMilliseconds, firstSequenceNumber: firstSequenceNumber,
            partMilliseconds: configuration.partMilliseconds)
        // A part is served as its frames come: a held request for it gets the first of them at once.
        segmenting.chunksParts = configuration.partMilliseconds != nil
        return segmenting
    }

    private func makeSegmenter() -> Segmenter {
        Segmenter(configuration: segmenting)
    }

    /// PART-TARGET of every playlist (LL-HLS): the longest part any rendition lists, whether timed by
    /// its video or, for an audio rendition of its own, by whole AAC frames; up to the millisecond, so
    /// the three decimals of the playlist never round it below a part. Nil without parts.
    var partTargetSeconds: Double? {
        let segmenting = segmenting
        let longest = layout.renditions.compactMap { rendition -> Double? in
            guard let timing = rendition.trackIndexes.first(where: { tracks[$0].isVideo }) ?? rendition.trackIndexes.first
            else { return nil }
            return segmenting.longestPartSeconds(track: timing, sampleTicks: tracks[timing].isVideo ? 0 : Int64(AudioEncoder.frameSampleCount))
        }.max()
        return longest.map { ($0 * 1000).rounded(.up) / 1000 }
    }

    private func anchor(_ captureMicroseconds: Int64) -> Int64 {
        let origin = timing.originMicroseconds ?? captureMicroseconds
        if timing.originMicroseconds == nil {
            timing.originMicroseconds = origin
            timing.originDate = clock.wallTime(atMonotonicMicroseconds: captureMicroseconds)
        }
        return captureMicroseconds - origin
    }

    /// With a duration, capture past the end is left out, so the stream is exactly that long. The first
    /// frame of the lead track past the end says the stream has all of its frames.
    private func isPastDuration(_ microsecondsSinceOrigin: Int64, lead: Bool) -> Bool {
        guard let milliseconds = configuration.durationMilliseconds,
              microsecondsSinceOrigin >= milliseconds * 1000 else { return false }
        if lead { reachedDuration = true }
        return true
    }

    /// Whether the sound leads the stream: there is no video, encoded or copied.
    private var soundLeads: Bool { video == nil && !copiesVideo }

    func encode(video frame: Frame) throws -> [Segment] {
        guard let video, let capture = frame.pts else { return [] }
        let sinceOrigin = anchor(capture)
        guard !isPastDuration(sinceOrigin, lead: true) else { return [] }
        statistics.countFrame(captureMicroseconds: capture)
        let ticks = Timescale.microseconds.convert(sinceOrigin, to: VideoEncoder.timescale)
        // The encoder needs increasing times; a frame stamped no later than the previous one is a duplicate.
        if let last = lastVideoTicks, ticks <= last { return [] }
        if timing.leadMicroseconds == nil { timing.leadMicroseconds = capture }
        lastVideoTicks = ticks
        if startsSegmentAtNextFrame {
            video.addCut(atTicks: ticks)
            cutSegment(atLeadTicks: ticks)
        }
        let capturedAt = timing.originDate.map { $0.addingTimeInterval(VideoEncoder.timescale.seconds(ticks)) }
            ?? clock.now()
        // Drawn once on the captured picture, before any rung is scaled from it or the recording takes it.
        let picture = try overlay?.draw(on: frame, capturedAt: capturedAt) ?? frame
        recorder?.take(video: picture, atTicks: ticks, capturedAt: capturedAt)
        return segment(try video.encode(picture, atTicks: ticks))
    }

    /// A sample copied from the source, its decode time on the capture clock in its track's timescale.
    func encode(copied input: EncodedSample) throws -> [Segment] {
        let timescale = tracks[input.track].timescale
        let capture = timescale.convert(input.decodeTime, to: .microseconds)
        let isVideo = tracks[input.track].isVideo
        // The stream starts at the camera's first keyframe: the pictures before it cannot be decoded, and
        // the sound before it is left out. Neither is the start of the stream's time (`--duration`).
        if isVideo {
            if timing.leadMicroseconds == nil, !input.isSync { return [] }
        } else if isBeforeCopiedVideo(capture) {
            return []
        }
        let sinceOrigin = anchor(capture)
        guard !isPastDuration(sinceOrigin, lead: isVideo || soundLeads), let origin = timing.originMicroseconds else {
            return []
        }
        var sample = input
        // One offset for every sample of the track, so its own ticks (and durations) stay exact.
        sample.decodeTime -= Timescale.microseconds.convert(origin, to: timescale)
        if isVideo {
            if timing.leadMicroseconds == nil { timing.leadMicroseconds = capture }
            statistics.countFrame(captureMicroseconds: capture)
            if startsSegmentAtNextFrame { cutSegment(atLeadTicks: sample.decodeTime + Int64(sample.compositionOffset)) }
            if sample.isSync, sourceDecoder != nil, startsSegment(atSourceTicks: sample.presentationTime) {
                rungKeyframeTicks.append(sample.presentationTime)
            }
            recorder?.take(copied: sample, capturedAt: timing.originDate.map {
                $0.addingTimeInterval(timescale.seconds(sample.decodeTime))
            } ?? clock.now())
            if let sourceDecoder {
                return segment([sample] + (try encodeRungs(sourceDecoder.decode(sample), timescale: timescale)))
            }
        } else {
            recorder?.take(audio: [sample])
        }
        return segment([sample])
    }

    /// Whether the copied keyframe presented at `ticks` (its track's, stream time) starts a segment: the
    /// segmenter's own rule, asked before the sample reaches it; the first keyframe starts the stream.
    private func startsSegment(atSourceTicks ticks: Int64) -> Bool {
        guard let segmenter, let delta = segmenter.leadDelta else { return true }
        return segmenter.startsSegment(atPresentationTime: ticks + delta)
    }

    /// Encodes the source's decoded pictures in the rungs below it, each at its presentation time, with
    /// IDRs at the source keyframes that start segments.
    private func encodeRungs(_ pictures: [Frame], timescale: Timescale) throws -> [EncodedSample] {
        guard let video else { return [] }
        var samples: [EncodedSample] = []
        for picture in pictures {
            guard let presented = picture.pts else { continue }
            let ticks = timescale.convert(presented, to: VideoEncoder.timescale)
            if let last = lastVideoTicks, ticks <= last { continue }
            lastVideoTicks = ticks
            var keyframe = false
            // A keyframe picture the decoder could not give makes the next picture the IDR, still in its segment.
            while let first = rungKeyframeTicks.first, first <= presented {
                keyframe = true
                rungKeyframeTicks.removeFirst()
            }
            samples += try video.encode(picture, atTicks: ticks, forceKeyframe: keyframe)
        }
        return samples
    }

    /// Sound from before the copied video's first keyframe, where the stream starts: left out, so that
    /// the sound does not begin seconds before the picture.
    private func isBeforeCopiedVideo(_ captureMicroseconds: Int64) -> Bool {
        guard copiesVideo else { return false }
        guard let lead = timing.leadMicroseconds else { return true }
        return captureMicroseconds < lead
    }

    func encode(audio frame: Frame) throws -> [Segment] {
        guard let audio, let capture = frame.pts, !isBeforeCopiedVideo(capture) else { return [] }
        let sinceOrigin = anchor(capture)
        guard !isPastDuration(sinceOrigin, lead: soundLeads) else { return [] }
        if startsSegmentAtNextFrame, soundLeads, let lead = tracks.first {
            cutSegment(atLeadTicks: Timescale.microseconds.convert(sinceOrigin, to: lead.timescale))
        }
        var samples: [EncodedSample] = []
        _ = try audio.encode(frame, atTicks: Timescale.microseconds.convert(sinceOrigin, to: VideoEncoder.timescale),
                             into: &samples)
        statistics.measureAudio(peak: audio.lastPeakLevel)
        recorder?.take(audio: samples)
        return segment(samples)
    }

    /// Asks the segmenter for a segment starting at the lead track's first sample at or after `ticks` (its
    /// source time), following a discontinuity when one was asked for.
    private func cutSegment(atLeadTicks ticks: Int64) {
        var segmenter = self.segmenter.take() ?? makeSegmenter()
        segmenter.addCut(atSourceTicks: ticks, startsDiscontinuity: nextSegmentFollowsDiscontinuity)
        self.segmenter = segmenter
        startsSegmentAtNextFrame = false
        nextSegmentFollowsDiscontinuity = false
    }

    /// Flushes the encoders (the resampler's tail included) and ends the segmenter: the last, possibly
    /// short, segment.
    func finish() throws -> [Segment] {
        var samples: [EncodedSample] = []
        if let sourceDecoder, let copied = tracks.first(where: \.isVideo) {
            samples += try encodeRungs(sourceDecoder.flush(), timescale: copied.timescale)
        }
        if let video { samples += try video.flush() }
        if let audio {
            let tail = try audio.flush()
            recorder?.take(audio: tail)
            samples += tail
        }
        var segments = segment(samples)
        if var segmenter = self.segmenter.take() {
            segments += segmenter.finish()
            parts += segmenter.takePieces()
            self.segmenter = segmenter
        }
        return segments
    }

    /// The chunks and parts cut since the last call, in order; each part comes before the segment that holds it.
    func takeParts() -> [Segmenter.PartPiece] {
        defer { parts = [] }
        return parts
    }

    private func segment(_ samples: [EncodedSample]) -> [Segment] {
        guard !samples.isEmpty else { return [] }
        // Taken out while it changes: a copy left in the property would make every append copy its arrays.
        var segmenter = self.segmenter.take() ?? makeSegmenter()
        var segments: [Segment] = []
        for sample in samples { segments += segmenter.append(sample) }
        parts += segmenter.takePieces()
        self.segmenter = segmenter
        return segments
    }
}
