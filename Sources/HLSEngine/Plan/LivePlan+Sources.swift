import Foundation
import HLSKit
import HLSMedia

/// What the opened sources tell a plan: the decisions that need them take these values, so they are
/// tested without opening anything.
public struct SourceFacts: Sendable {
    /// A URL or a file, read through libavformat.
    public struct Media: Sendable {
        public var name: String
        /// Why it cannot be copied, when it cannot.
        public var copyRefusal: String?
        /// Streams it has that the stream does not carry.
        public var otherStreams: [String] = []
        /// Its first copied track is video.
        public var copiesVideo = false
        public var keyframeIntervalSeconds: Double?
        /// Its video's size and whole frame rate, when it has video.
        public var videoSize: (width: Int, height: Int)?
        public var videoFramesPerSecond: Int?

        public init(name: String) {
            self.name = name
        }
    }

    /// A camera whose own H.264 is copied, in the mode it was opened in.
    public struct CameraCopy: Sendable {
        public var name: String
        public var keyframeIntervalSeconds: Double?
        public var width: Int
        public var height: Int
        public var framesPerSecond: Int?

        public init(name: String, keyframeIntervalSeconds: Double?, width: Int, height: Int, framesPerSecond: Int?) {
            self.name = name
            self.keyframeIntervalSeconds = keyframeIntervalSeconds
            self.width = width
            self.height = height
            self.framesPerSecond = framesPerSecond
        }
    }

    public var media: [Media] = []
    public var cameraCopy: CameraCopy?
    /// Some source hands its video on as it is.
    public var copiesVideo = false

    public init() {}

    public init(_ sources: [any CaptureSource]) {
        for source in sources {
            if let source = source as? MediaSource {
                var media = Media(name: source.name)
                media.copyRefusal = source.copyRefusal
                media.otherStreams = source.otherStreams
                media.copiesVideo = source.copiedTracks.first?.isVideo == true
                media.keyframeIntervalSeconds = source.keyframeIntervalSeconds
                if let video = source.video {
                    media.videoSize = (video.width, video.height)
                    media.videoFramesPerSecond = video.averageFrameRate?.wholeFramesPerSecond
                }
                self.media.append(media)
            }
            if cameraCopy == nil, let camera = source as? CameraCopySource {
                cameraCopy = CameraCopy(name: camera.name, keyframeIntervalSeconds: camera.keyframeIntervalSeconds,
                                        width: camera.choice.width, height: camera.choice.height,
                                        framesPerSecond: camera.choice.frameRate.wholeFramesPerSecond)
            }
        }
        copiesVideo = sources.contains { $0.copiedTracks.contains(where: \.isVideo) }
    }
}

extension LivePlan {
    /// Decides what needs the opened sources: a copied source's target duration (its keyframes cut the
    /// segments), a camera's mode, a URL's or file's own size and rate unless others were asked for, and
    /// the ladder's source rung at the source's height. Returns what to tell the user.
    public mutating func resolve(opened facts: SourceFacts) throws(PlanError) -> [PlanNotice] {
        var notices: [PlanNotice] = []
        let segmentSeconds = Double(configuration.segmentMilliseconds) / 1000
        for media in facts.media {
            if let refusal = media.copyRefusal, inputs.copy { notices.append(.copyRefused(input: media.name, reason: refusal)) }
            if !media.otherStreams.isEmpty { notices.append(.streamsLeftOut(input: media.name, streams: media.otherStreams)) }
            guard media.copiesVideo else { continue }
            let (target, notice) = Self.copiedTargetDuration(segmentSeconds: segmentSeconds,
                                                             keyframeIntervalSeconds: media.keyframeIntervalSeconds,
                                                             input: media.name)
            configuration.targetDurationSeconds = target
            notices += notice.map { [$0] } ?? []
        }
        if let camera = facts.cameraCopy {
            let (target, notice) = Self.copiedTargetDuration(segmentSeconds: segmentSeconds,
                                                             keyframeIntervalSeconds: camera.keyframeIntervalSeconds,
                                                             input: camera.name, stampedOnCapture: true)
            configuration.targetDurationSeconds = target
            notices += notice.map { [$0] } ?? []
            configuration.size = OutputSize(width: camera.width & ~1, height: camera.height & ~1)
            configuration.framesPerSecond = camera.framesPerSecond ?? configuration.framesPerSecond
        }
        if let video = facts.media.first(where: { $0.videoSize != nil }) {
            if request.size == nil, let size = video.videoSize, size.width >= 2, size.height >= 2 {
                configuration.size = OutputSize(width: size.width & ~1, height: size.height & ~1)
            }
            if request.framesPerSecond == nil, let rate = video.videoFramesPerSecond {
                configuration.framesPerSecond = rate
            }
        }
        if let ladder = configuration.ladder, ladder.contains(where: \.isSource) {
            do {
                configuration.ladder = try Ladder.resolvingSource(ladder, sourceHeight: configuration.size.height)
            } catch {
                throw .ladderSource(error)
            }
            if !facts.copiesVideo { notices.append(.sourceRungEncoded(configuration.size)) }
        }
        return notices
    }

    /// A source's keyframes cut copied video: segments as long as the segment duration asks when its
    /// keyframe interval divides it, longer otherwise (said once, with the fix); the target duration
    /// every segment keeps to.
    ///
    /// `stampedOnCapture`: a V4L2 camera's frames carry the times they were captured or dequeued, which
    /// jitter by milliseconds: a keyframe due on a boundary that comes a little early misses it, and that
    /// segment runs one keyframe interval longer.
    public static func copiedTargetDuration(segmentSeconds: Double, keyframeIntervalSeconds: Double?, input: String,
                                            stampedOnCapture: Bool = false) -> (seconds: Int, notice: PlanNotice?) {
        let asked = Int(segmentSeconds.rounded(.up))
        guard let interval = keyframeIntervalSeconds, interval > 0 else {
            let searchedSeconds = Int(KeyframeIntervalSearch.limitMicroseconds / 1_000_000)
            return (max(asked, searchedSeconds), .copiedSegmentsUnbounded(input: input, searchedSeconds: searchedSeconds,
                                                                          segmentSeconds: segmentSeconds))
        }
        // The first keyframe at or after each boundary starts a segment: a whole number of intervals.
        let longest = interval >= segmentSeconds ? interval : (segmentSeconds / interval - 0.01).rounded(.up) * interval
        // A keyframe this close after a boundary may be stamped before it. A frame's worth of jitter at 30 fps.
        let jitterSeconds = 0.034
        if stampedOnCapture, interval < segmentSeconds, longest - segmentSeconds < jitterSeconds {
            let jittered = longest + interval
            return (max(asked, Int((jittered + 0.25).rounded())),
                    .copiedSegmentsJitter(input: input, keyframeIntervalSeconds: interval, longestSeconds: jittered,
                                          segmentSeconds: segmentSeconds))
        }
        guard longest > segmentSeconds + 0.05 else { return (asked, nil) }
        return (max(asked, Int((longest + 0.25).rounded())),
                .copiedSegmentsLonger(input: input, keyframeIntervalSeconds: interval, longestSeconds: longest,
                                      segmentSeconds: segmentSeconds))
    }

    /// Which encoder encodes the stream's (and the recording's) pictures: the first of those asked for that
    /// `firstWorking` opens here. A named hardware encoder that is missing is unavailable, with what it
    /// lacks; auto falls back to software, said once. Software alone is not probed.
    public mutating func chooseEncoder(
        firstWorking: ([VideoEncoderKind], VideoEncoderSettings)
            -> (kind: VideoEncoderKind?, refusals: [(kind: VideoEncoderKind, reason: String)]) = VideoEncoderKind.firstWorking
    ) throws(PlanError) -> [PlanNotice] {
        guard encoders != [.software] else { return [] }
        var settings = VideoEncoderSettings(width: 640, height: 360, frameRate: Rational(30, 1), bitrate: 1_000_000,
                                            preset: "ultrafast", zeroLatency: true, keyframeIntervalFrames: 60, threadCount: 1)
        settings.codec = configuration.videoCodec
        let (chosen, refusals) = firstWorking(encoders, settings)
        guard let chosen else {
            throw .encoderUnavailable(encoders[0], reason: refusals.first?.reason ?? "it cannot encode here",
                                      software: VideoEncoderKind.software.optionName(for: configuration.videoCodec))
        }
        configuration.makeVideoEncoder = { settings, trackIndex in
            var settings = settings
            settings.kind = chosen
            return try VideoEncoder(settings: settings, trackIndex: trackIndex)
        }
        guard chosen == .software, encoders.count > 1 else { return [] }
        let why = refusals.map { "\($0.kind.rawValue): \($0.reason)" }.joined(separator: "; ")
        return [.softwareEncoderFallback(why: why, encoder: chosen.encoderName(for: configuration.videoCodec))]
    }
}
