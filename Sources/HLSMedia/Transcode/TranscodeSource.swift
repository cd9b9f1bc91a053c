import Foundation
import HLSKit

/// Decodes one or more recordings and encodes them into one continuous H.264/AAC timeline.
///
/// Per input: decode (threaded) → video: scale into the output size (letterboxed), rotate upright,
/// each frame at its own time (or a constant rate by dropping/repeating when one is asked for), x264
/// with an IDR forced on the segment grid and at the cut points (chapters, times asked for); audio:
/// resample to the encoder's rate and layout, exact 1024-sample frames, AAC. Each input's time zero
/// is its first video frame (or first audio frame when it has no video); the next input starts where
/// the longer of its tracks ended, and the shorter one is padded (the last picture held, or silence),
/// so both tracks stay aligned across joins. The last input's video is not padded.
public final class TranscodeSource {
    public let tracks: [TrackDescription]
    public let outputSize: OutputSize?
    public let frameRate: Rational?
    /// Sum of the inputs' durations, when they tell it: for progress.
    public let totalSeconds: Double?
    /// Packets a decoder rejected as corrupt; they were skipped.
    public private(set) var skippedCorruptPackets = 0
    /// The container's language of each output audio track, when the first input names it.
    public let audioLanguages: [String?]
    /// The video renditions' names, tallest first (`720p` …), when encoding a ladder.
    public var videoRenditionNames: [String] { video?.renditions.renditions.map(\.name) ?? [] }
    /// Output time reached so far, in seconds.
    public private(set) var mediaSeconds = 0.0
    /// Cut points on the output timeline (microseconds), each input's chapters and the times asked for,
    /// as the inputs' first frames place them; IDRs are forced there.
    public private(set) var cutMicroseconds: [Int64] = []
    /// The first input's time (from its container's start) at the output's first frame, in microseconds.
    public private(set) var inputTimeOffsetMicroseconds: Int64 = 0

    private let paths: [String]
    private let settings: TranscodeSettings
    private let video: VideoLane?
    /// One per audio track of the output, fed from the input's audio stream at the same position.
    private let audio: [AudioLane]
    private var input: InputState?
    private var nextInput = 0
    private var pending: [EncodedSample] = []
    private var pendingHead = 0
    private var finished = false
    /// Where the current input starts on the output timeline, in 90 kHz ticks.
    private var inputOffsetTicks: Int64 = 0
    /// Cut points asked for, microseconds from the start of the first input's container timeline.
    private let askedCutMicroseconds: [Int64]

    /// `askedCutMicroseconds`: where segments must start, microseconds from the start of the first input
    /// (its container's start time), on the joined timeline.
    public init(inputs paths: [String], settings: TranscodeSettings, askedCutMicroseconds: [Int64] = []) throws {
        precondition(!paths.isEmpty, "transcoding needs an input")
        self.paths = paths
        self.settings = settings
        self.askedCutMicroseconds = askedCutMicroseconds
        let first = try InputState(path: paths[0], audio: settings.audioTracks)
        var totalSeconds: Double? = 0
        var hasVideo = first.video != nil
        var hasAudio = !first.audio.isEmpty
        for path in paths.dropFirst() {
            let probe = try FileDemuxer(path: path, audio: settings.audioTracks)
            hasVideo = hasVideo || probe.streams.contains { $0.kind == .video }
            hasAudio = hasAudio || probe.streams.contains { $0.kind == .audio }
            totalSeconds = totalSeconds.flatMap { total in Self.duration(of: probe.streams).map { total + $0 } }
        }
        self.totalSeconds = totalSeconds.flatMap { total in Self.duration(of: first.demuxer.streams).map { total + $0 } }

        var tracks: [TrackDescription] = []
        if hasVideo {
            let firstVideo = try first.video?.stream ?? Self.firstVideoStream(in: paths)
            guard let stream = firstVideo else {
                throw CodecError.unsupportedSettings("no input has a video stream")
            }
            let lane = try VideoLane(stream: stream, settings: settings, trackIndex: tracks.count)
            tracks += lane.renditions.tracks
            video = lane
        } else {
            video = nil
        }
        // As many audio tracks as the first input has (one when only a later input has audio).
        let audioCount = hasAudio ? max(1, first.audio.count) : 0
        var lanes: [AudioLane] = []
        for position in 0..<audioCount {
            let lane = try AudioLane(settings: settings.audio, trackIndex: tracks.count)
            let language = position < first.audioStreams.count ? first.audioStreams[position].language : nil
            tracks.append(TrackDescription(trackID: UInt32(tracks.count + 1), timescale: Timescale(settings.audio.sampleRate),
                                           format: .aac(AACFormat(audioSpecificConfig: lane.encoder.audioSpecificConfig,
                                                                  averageBitrate: UInt32(settings.audio.bitrate))),
                                           language: language.map(Self.isoLanguage) ?? "und"))
            lanes.append(lane)
        }
        audio = lanes
        audioLanguages = (0..<audioCount).map { position in
            position < first.audioStreams.count ? first.audioStreams[position].language : nil
        }
        self.tracks = tracks
        outputSize = video.map { OutputSize(width: $0.width, height: $0.height) }
        frameRate = video?.frameRate
        input = first
        nextInput = 1
    }

    private static func duration(of streams: [InputStreamInfo]) -> Double? {
        streams.compactMap(\.durationSeconds).max()
    }

    private static func firstVideoStream(in paths: [String]) throws -> InputStreamInfo? {
        for path in paths {
            if let stream = try FileDemuxer(path: path).streams.first(where: { $0.kind == .video }) { return stream }
        }
        return nil
    }

    /// The next encoded sample, or nil once every input is encoded and the encoders are drained.
    public func nextSample() throws -> EncodedSample? {
        while pendingHead == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingHead = 0
            guard !finished else { return nil }
            try step()
        }
        defer { pendingHead += 1 }
        let sample = pending[pendingHead]
        if let video, sample.track == video.trackIndex {
            mediaSeconds = max(mediaSeconds, VideoEncoder.timescale.seconds(sample.decodeTime))
        }
        return sample
    }

    /// Reads and processes one packet, or ends an input, or ends the stream.
    private func step() throws {
        guard let input else {
            if let video { pending += try video.flush() }
            for lane in audio { pending += try lane.flush() }
            finished = true
            return
        }
        if let packet = try input.demuxer.nextPacket() {
            try process(packet, in: input)
            return
        }
        try drainDecoders(of: input)
        var endTicks = inputOffsetTicks + input.durationTicks
        let isLastInput = nextInput == paths.count
        if let video {
            // The last input's pictures end with its last frame: holding one over audio that outlasts them
            // would add frames the input does not have. Before a join, audio that outlasts them by less than
            // a frame (AAC frames round its end up) holds no picture either.
            let heldUntilTicks = isLastInput && input.hasVideoFrames ? inputOffsetTicks + input.videoEndTicks
                : endTicks - VideoLane.frameTicks(video.frameRate) + 1
            pending += try video.pad(fromTicks: inputOffsetTicks, untilTicks: heldUntilTicks)
            // Frames at their own times: the next input starts where both tracks have ended, so none of its
            // audio is cut, and the last picture lasts until then. At a constant rate it starts on the next
            // free frame slot: its first frame would otherwise round to a slot already filled, and be dropped.
            let nextSlotTicks = video.nextSlotTicks ?? endTicks
            endTicks = video.keepsFrameTimes ? max(endTicks, nextSlotTicks) : nextSlotTicks
        }
        for lane in audio { try lane.pad(untilTicks: endTicks, into: &pending) }
        inputOffsetTicks = endTicks
        if nextInput < paths.count {
            self.input = try InputState(path: paths[nextInput], audio: settings.audioTracks)
            nextInput += 1
            for lane in audio { lane.startInput() }
        } else {
            self.input = nil
        }
    }

    private func process(_ packet: DemuxedPacket, in input: InputState) throws {
        guard let decoder = input.decoder(forStream: packet.streamIndex) else { return }
        do {
            try decoder.send(packet)
        } catch CodecError.corruptPacket {
            skippedCorruptPackets += 1
        }
        try receiveFrames(from: decoder, in: input)
    }

    private func drainDecoders(of input: InputState) throws {
        for decoder in [input.video].compactMap({ $0 }) + input.audio {
            try decoder.sendEndOfStream()
            try receiveFrames(from: decoder, in: input)
        }
        // Audio held back for a first video frame that never came still belongs to the stream.
        if input.origin == nil {
            let origin = input.heldAudio.first.flatMap { Self.ticks($0.frame) } ?? 0
            input.origin = origin
            placeCuts(of: input, origin: origin)
        }
        try releaseHeldAudio(of: input)
    }

    private func receiveFrames(from decoder: Decoder, in input: InputState) throws {
        while true {
            let result: Decoder.DecodeResult
            do {
                result = try decoder.receive()
            } catch CodecError.corruptPacket {
                skippedCorruptPackets += 1
                continue
            }
            guard case .frame(let frame) = result else { return }
            if decoder === input.video {
                try handle(video: frame, in: input, rotation: decoder.stream.rotationDegrees)
            } else if let position = input.audio.firstIndex(where: { $0 === decoder }) {
                try handle(audio: frame, lane: position, in: input)
            }
        }
    }

    private func handle(video frame: Frame, in input: InputState, rotation: Int) throws {
        guard let video else { return }
        let ticks = Self.ticks(frame) ?? input.nextVideoTicks(frameRate: video.frameRate)
        if input.origin == nil {
            input.origin = ticks
            placeCuts(of: input, origin: ticks)
            try releaseHeldAudio(of: input)
        }
        let relative = ticks - input.origin!
        input.noteVideo(relativeTicks: relative, frameRate: video.frameRate)
        pending += try video.encode(frame, atTicks: inputOffsetTicks + relative, rotation: rotation)
    }

    /// Once an input's first frame fixes its place on the output timeline: its chapters, and for the
    /// first input the times asked for, become forced IDRs and cut points.
    private func placeCuts(of input: InputState, origin: Int64) {
        let containerStart = input.demuxer.startMicroseconds
        var container = input.demuxer.chapterStartMicroseconds
        if nextInput == 1 {
            container += askedCutMicroseconds.map { containerStart + $0 }
            inputTimeOffsetMicroseconds = VideoEncoder.timescale.convert(origin, to: .microseconds)
                - containerStart
        }
        for point in container.sorted() {
            let ticks = inputOffsetTicks
                + Timescale.microseconds.convert(point, to: VideoEncoder.timescale) - origin
            // A chapter before an input's first frame would fall into the input before it.
            guard ticks > 0, ticks >= inputOffsetTicks else { continue }
            video?.renditions.addCut(atTicks: ticks)
            cutMicroseconds.append(VideoEncoder.timescale.convert(ticks, to: .microseconds))
        }
    }

    private func handle(audio frame: Frame, lane: Int, in input: InputState) throws {
        guard lane < audio.count else { return }
        // An input's time zero is its first video frame: audio waits until that is known.
        guard input.origin != nil else {
            input.heldAudio.append((lane, frame))
            return
        }
        try encode(audio: frame, lane: lane, in: input)
    }

    private func releaseHeldAudio(of input: InputState) throws {
        let held = input.heldAudio
        input.heldAudio = []
        for (lane, frame) in held { try encode(audio: frame, lane: lane, in: input) }
    }

    private func encode(audio frame: Frame, lane: Int, in input: InputState) throws {
        guard let origin = input.origin else { return }
        let relative = Self.ticks(frame).map { $0 - origin }
        let end = try audio[lane].encode(frame, atTicks: relative.map { inputOffsetTicks + $0 }, into: &pending)
        input.noteAudio(endTicks: end - inputOffsetTicks)
    }

    /// ISO 639-2/T for `mdhd` from a container's tag: three letters as they are, else undetermined.
    private static func isoLanguage(_ tag: String) -> String {
        tag.count == 3 && tag.allSatisfy { $0.isASCII && $0.isLetter } ? tag.lowercased() : "und"
    }

    /// A frame's time in 90 kHz ticks.
    private static func ticks(_ frame: Frame) -> Int64? {
        frame.pts(inTimescale: VideoEncoder.timescale)
    }
}

/// One input being decoded.
private final class InputState {
    let demuxer: FileDemuxer
    let video: Decoder?
    /// One decoder per selected audio stream, in order.
    let audio: [Decoder]
    /// The input's time zero (90 kHz, its own clock): its first video frame, or first audio frame.
    var origin: Int64?
    var heldAudio: [(lane: Int, frame: Frame)] = []
    /// Where the input's last picture ends (its time plus a frame), relative to its time zero.
    private(set) var videoEndTicks: Int64 = 0
    private var audioEndTicks: Int64 = 0
    private var lastVideoTicks: Int64?

    init(path: String, audio selection: FileDemuxer.AudioSelection) throws {
        let demuxer = try FileDemuxer(path: path, audio: selection)
        self.demuxer = demuxer
        for stream in demuxer.streams where stream.kind == .video {
            guard stream.width <= OutputSize.maxSide, stream.height <= OutputSize.maxSide else {
                throw CodecError.unsupportedSettings("\(path): the video is \(stream.width)x\(stream.height); "
                    + "hlscap takes pictures up to \(OutputSize.maxSide) pixels a side")
            }
        }
        let videoIndex = demuxer.streams.firstIndex { $0.kind == .video }
        video = try videoIndex.map { try Decoder(demuxer: demuxer, streamIndex: $0) }
        audio = try demuxer.streams.indices.filter { demuxer.streams[$0].kind == .audio }
            .map { try Decoder(demuxer: demuxer, streamIndex: $0) }
    }

    var audioStreams: [InputStreamInfo] { demuxer.streams.filter { $0.kind == .audio } }

    func decoder(forStream index: Int) -> Decoder? {
        if let video, demuxer.streams[index].kind == .video { return video }
        return audio.first(where: { $0.stream.index == demuxer.streams[index].index })
    }

    /// For frames without a timestamp: one frame after the previous one.
    func nextVideoTicks(frameRate: Rational) -> Int64 {
        guard let last = lastVideoTicks else { return origin ?? 0 }
        return (origin ?? 0) + last + VideoLane.frameTicks(frameRate)
    }

    func noteVideo(relativeTicks: Int64, frameRate: Rational) {
        lastVideoTicks = relativeTicks
        videoEndTicks = max(videoEndTicks, relativeTicks + VideoLane.frameTicks(frameRate))
    }

    /// Whether a video frame of this input was decoded.
    var hasVideoFrames: Bool { lastVideoTicks != nil }

    func noteAudio(endTicks: Int64) {
        audioEndTicks = max(audioEndTicks, endTicks)
    }

    /// Where the next input starts: the end of the longer track.
    var durationTicks: Int64 { max(videoEndTicks, audioEndTicks) }
}
