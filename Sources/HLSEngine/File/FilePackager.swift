import Foundation
import HLSKit
import HLSMedia
import HLSOutput

/// Why packaging recordings failed, beyond the errors of reading, decoding and storing. Carries no
/// exit status: the command line decides that.
public enum PackagingError: Error, CustomStringConvertible {
    /// The store holds a stream, and replacing it was not asked for.
    case holdsStream(location: String)
    /// The inputs gave nothing to start a stream with.
    case nothingToStream(inputs: [String])
    /// An error without a message that names the inputs.
    case failed(inputs: [String], underlying: any Error)

    public var description: String {
        switch self {
        case .holdsStream(let location): "\(location) already holds a stream"
        case .nothingToStream(let inputs):
            "\(inputs.joined(separator: ", ")): no video keyframe or audio sample to start a stream with"
        case .failed(let inputs, let underlying): "\(inputs.joined(separator: ", ")): packaging failed: \(underlying)"
        }
    }
}

/// Recordings → one VOD stream: copied when they allow it, transcoded otherwise.
public struct FilePackager {
    public enum Mode: Equatable, Sendable {
        case automatic, copy, transcode
    }

    public struct Outcome {
        public var summary: StreamWriter.Summary
        public var copied: Bool
        public var reason: String
        public var skippedCorruptPackets: Int
        /// What reached the origin, when publishing.
        public var publishReport: PublishReport?
        /// The renditions written, relative to the output directory: `720p`, `audio` …; "" is the top.
        public var renditions: [String]
        /// Every cut point (chapter or asked for) inside the stream, and where its segment starts.
        public var cuts: [Cut] = []
    }

    /// A cut point and the segment start it gave: the first frame at or after it when transcoding (an IDR
    /// is forced there), the first keyframe at or after it when copying.
    public struct Cut: Sendable, Equatable {
        /// Where the cut was asked for, seconds of input time (from the first input's start).
        public var askedSeconds: Double
        /// How much later the segment starts.
        public var movedSeconds: Double
    }

    /// Copy mode cuts only at keyframes: further apart than this many segment durations, segments
    /// would be too long for players, so automatic mode transcodes instead.
    public static let copyableKeyframeGapSegments: Int64 = 2

    public var inputs: [String]
    /// Where the stream goes.
    public var store: any StreamStore
    public var mode: Mode
    public var transcodeSettings: TranscodeSettings
    public var overwrite: Bool
    /// Told the total media seconds when known, then the media time reached, as packaging goes on.
    public var onTotalSeconds: ((Double?) -> Void)?
    public var onProgress: ((Double) -> Void)?
    /// Where segments must start besides the grid (and the inputs' chapters): microseconds from the start
    /// of the first input, on the joined timeline.
    public var cutMicroseconds: [Int64] = []
    /// AES-128 encryption of every segment (no I-frame playlists).
    public var encryption: SegmentEncryption?
    /// Upload the keys with the stream, to `keys/` at the origin (`--publish-keys`).
    public var publishKeys = false
    /// Told what the user should know that is not the outcome: files a failed run could not take back.
    public var onMessage: ((EngineMessage) -> Void)?
    /// Makes the publisher that uploads each file once it is stored; nil writes to disk only.
    public var publish: ((_ store: any StreamStore, _ directory: String) -> StreamPublisher)?

    public init(inputs: [String], store: any StreamStore, mode: Mode, transcodeSettings: TranscodeSettings,
                overwrite: Bool) {
        self.inputs = inputs
        self.store = store
        self.mode = mode
        self.transcodeSettings = transcodeSettings
        self.overwrite = overwrite
    }

    private var segmentMilliseconds: Int64 { transcodeSettings.segmentMilliseconds }

    public func run() throws -> Outcome {
        try prepareOutput()
        switch mode {
        case .copy:
            return try copy(into: store, maximumKeyframeGapMilliseconds: nil, reason: "copying was asked for")
        case .transcode:
            return try transcode(into: store, reason: "encoding options given")
        case .automatic:
            if let reason = try firstReasonNotToCopy() {
                return try transcode(into: store, reason: reason)
            }
            // An upload cannot be taken back: read the samples once before anything is published.
            if publish != nil, let reason = try firstReasonNotToCopySamples() {
                return try transcode(into: store, reason: reason)
            }
            do {
                return try copy(into: store,
                                maximumKeyframeGapMilliseconds: Self.copyableKeyframeGapSegments * segmentMilliseconds,
                                reason: "H.264/HEVC and AAC with keyframes at most "
                                    + "\(Self.copyableKeyframeGapSegments) segment durations apart")
            } catch let gap as KeyframeGapTooLong {
                return try transcode(into: store, reason: gap.description)
            } catch let refusal as CopyError {
                return try transcode(into: store, reason: refusal.summary)
            }
        }
    }

    /// Why the inputs cannot simply be copied, or nil when they can (keyframe gaps are found while copying).
    /// Joined inputs whose parameters differ would need a second init section, which FFmpeg's HLS reader
    /// and older hls.js ignore: one transcoded timeline plays everywhere.
    private func firstReasonNotToCopy() throws -> String? {
        var previous: (input: String, tracks: [TrackDescription])?
        for input in inputs {
            do {
                let source = try CopySource(demuxer: FileDemuxer(path: input, audio: transcodeSettings.audioTracks))
                if let previous, previous.tracks != source.tracks {
                    return "\(input) and \(previous.input) differ in their encoding parameters, and a second init "
                        + "section is not followed by every player"
                }
                previous = (input, source.tracks)
            } catch let error as CopyError {
                return error.summary
            }
        }
        return nil
    }

    private func copy(into store: any StreamStore, maximumKeyframeGapMilliseconds: Int64?,
                      reason: String) throws -> Outcome {
        var output: Output?
        var nextSequenceNumber = 1
        var cuts: [Cut] = []
        var previous: (input: String, tracks: [TrackDescription])?
        do {
            // Where each input starts on the joined timeline, for the cut points asked for.
            var elapsedMicroseconds: Int64 = 0
            for input in inputs {
                let source = try CopySource(demuxer: FileDemuxer(path: input, audio: transcodeSettings.audioTracks))
                source.askedCutMicroseconds = cutMicroseconds.filter { $0 >= elapsedMicroseconds }
                    .map { source.startMicroseconds + $0 - elapsedMicroseconds }
                // One init section for the whole stream: after a second one (a new EXT-X-MAP past a
                // discontinuity) hls.js stops and FFmpeg keeps decoding with the first one's parameters.
                if let previous, previous.tracks != source.tracks {
                    throw CopyError(path: input, reason: "its encoding parameters differ from \(previous.input)'s ("
                        + Self.difference(from: previous.tracks, to: source.tracks) + "), and copied inputs share one "
                        + "init section", transcodingHelps: true)
                }
                previous = (input, source.tracks)
                let current: Output
                if let output {
                    current = output
                } else {
                    let languages = source.inputStreams.filter { $0.kind == .audio }.map(\.language)
                    let layout = StreamLayout.make(tracks: source.tracks, videoNames: nil, audioLanguages: languages)
                    current = try makeOutput(store: store, layout: layout)
                    output = current
                }
                try current.beginSection(tracks: source.tracks)
                let packaged = try package(source, into: current, firstSequenceNumber: nextSequenceNumber,
                                           keyframeGapLimit: maximumKeyframeGapMilliseconds.map { ($0, input) })
                nextSequenceNumber = packaged.nextSequenceNumber
                cuts += packaged.cuts.map {
                    Cut(askedSeconds: $0.askedSeconds + Double(elapsedMicroseconds) / 1e6, movedSeconds: $0.movedSeconds)
                }
                elapsedMicroseconds += packaged.durationMicroseconds
            }
            guard let output else { throw PackagingError.nothingToStream(inputs: inputs) }
            let (summary, report) = try finish(output)
            return Outcome(summary: summary, copied: true, reason: reason, skippedCorruptPackets: 0,
                           publishReport: report, renditions: output.writer.renditionDirectories, cuts: cuts)
        } catch {
            output?.takeBack(reporting: onMessage)
            // Reasons to transcode instead go up as they are; the caller decides.
            throw error
        }
    }

    /// What differs between two inputs' tracks, in the terms a user knows them: "H.264 1280x720 to
    /// H.264 960x540", "AAC 48000 Hz 2 ch encoded with other settings", "2 tracks to 1".
    static func difference(from previous: [TrackDescription], to current: [TrackDescription]) -> String {
        guard previous.count == current.count else { return "\(previous.count) tracks to \(current.count)" }
        return zip(previous, current).filter { $0 != $1 }.map { before, after in
            let (was, now) = (summary(before), summary(after))
            return was == now ? "\(was) encoded with other settings" : "\(was) to \(now)"
        }.joined(separator: ", ")
    }

    private static func summary(_ track: TrackDescription) -> String {
        switch track.format {
        case .h264(let format): "H.264 \(format.width)x\(format.height)"
        case .hevc(let format): "HEVC \(format.width)x\(format.height)"
        case .aac(let format):
            "AAC \(format.audioSpecificConfig.sampleRate) Hz \(format.audioSpecificConfig.channelCount) ch"
        }
    }

    private func transcode(into store: any StreamStore, reason: String) throws -> Outcome {
        var output: Output?
        do {
            let source = try TranscodeSource(inputs: inputs, settings: transcodeSettings,
                                             askedCutMicroseconds: cutMicroseconds)
            onTotalSeconds?(source.totalSeconds)
            let layout = StreamLayout.make(
                tracks: source.tracks, videoNames: transcodeSettings.ladder == nil ? nil : source.videoRenditionNames,
                audioLanguages: source.audioLanguages)
            let started = try makeOutput(store: store, layout: layout)
            output = started
            try started.beginSection(tracks: source.tracks)
            let packaged = try package(source, into: started, firstSequenceNumber: 1, keyframeGapLimit: nil)
            let (summary, report) = try finish(started)
            return Outcome(summary: summary, copied: false, reason: reason,
                           skippedCorruptPackets: source.skippedCorruptPackets, publishReport: report,
                           renditions: started.writer.renditionDirectories, cuts: packaged.cuts)
        } catch {
            output?.takeBack(reporting: onMessage)
            throw error
        }
    }

    private func makeOutput(store: any StreamStore, layout: StreamLayout) throws(StoreError) -> Output {
        let keyStore = publishKeys ? encryption?.keyStore : nil
        let publisher = try publish.map { make throws(StoreError) in
            try LayoutPublisher(layout: layout, store: store, keyStore: keyStore) { store, directory in make(store, directory) }
        }
        if let publisher, keyStore != nil { encryption?.onNewKey = { publisher.addKey($0) } }
        var writer = StreamWriter(store: store, layout: layout, policy: .vod)
        writer.encryption = encryption
        return Output(writer: writer, publisher: publisher)
    }

    private func finish(_ output: Output) throws -> (StreamWriter.Summary, PublishReport?) {
        let summary = try output.finish()
        guard summary.segmentCount > 0 else {
            throw PackagingError.nothingToStream(inputs: inputs)
        }
        return (summary, output.publisher?.finish())
    }

    /// Reads the inputs' packets once, without decoding, for what copying would meet on the way: a keyframe
    /// gap too long, or samples whose own parameter sets would not decode.
    private func firstReasonNotToCopySamples() throws -> String? {
        let limit = Self.copyableKeyframeGapSegments * segmentMilliseconds
        for input in inputs {
            do {
                let source = try CopySource(demuxer: FileDemuxer(path: input, audio: transcodeSettings.audioTracks))
                var check = KeyframeGapCheck(limitMilliseconds: limit, input: input)
                while let sample = try source.nextSample() {
                    try check.check(sample, timescale: source.tracks[sample.track].timescale,
                                    isVideo: source.tracks[sample.track].isVideo)
                }
            } catch let gap as KeyframeGapTooLong {
                return gap.description
            } catch let refusal as CopyError {
                return refusal.summary
            }
        }
        return nil
    }

    /// What one source gave the stream.
    private struct Packaged {
        var nextSequenceNumber: Int
        var durationMicroseconds: Int64
        var cuts: [Cut]
    }

    /// Segments one source into the writer.
    private func package(_ source: SampleSource, into output: Output, firstSequenceNumber: Int,
                         keyframeGapLimit: (milliseconds: Int64, input: String)?) throws -> Packaged {
        let tracks = source.tracks.map { Segmenter.Track(timescale: $0.timescale, isVideo: $0.isVideo) }
        var segmenter = Segmenter(configuration: .init(tracks: tracks, segmentMilliseconds: segmentMilliseconds,
                                                       firstSequenceNumber: firstSequenceNumber))
        let leadTimescale = tracks[segmenter.leadTrack].timescale
        var cutsGiven = Set<Int64>()
        var gapCheck = keyframeGapLimit.map { KeyframeGapCheck(limitMilliseconds: $0.milliseconds, input: $0.input) }
        var next = firstSequenceNumber
        var durationMicroseconds: Int64 = 0
        func write(_ segment: Segment) throws {
            try output.write(segment)
            next = segment.sequenceNumber + 1
            durationMicroseconds += segment.timescale.convert(segment.durationTicks, to: .microseconds)
        }
        func giveNewCuts() {
            for cut in source.cutMicroseconds where !cutsGiven.contains(cut) {
                cutsGiven.insert(cut)
                segmenter.addCut(atSourceTicks: Timescale.microseconds.convert(cut, to: leadTimescale))
            }
        }
        giveNewCuts()
        while let sample = try source.nextSample() {
            giveNewCuts()
            try gapCheck?.check(sample, timescale: tracks[sample.track].timescale,
                                isVideo: tracks[sample.track].isVideo)
            for segment in segmenter.append(sample) {
                try write(segment)
                onProgress?(segment.startSeconds + segment.durationSeconds)
            }
        }
        for segment in segmenter.finish() { try write(segment) }
        let leadDelta = segmenter.leadDelta ?? 0
        let cuts = segmenter.placedCuts.map { placed in
            let inputMicroseconds = leadTimescale.convert(placed.askedTicks - leadDelta, to: .microseconds)
                + source.inputTimeOffsetMicroseconds
            return Cut(askedSeconds: Double(inputMicroseconds) / 1e6,
                       movedSeconds: leadTimescale.seconds(placed.placedTicks - placed.askedTicks))
        }
        return Packaged(nextSequenceNumber: next, durationMicroseconds: durationMicroseconds, cuts: cuts)
    }

    private func prepareOutput() throws {
        if try StreamWriter.holdsStream(store) {
            guard overwrite else { throw PackagingError.holdsStream(location: store.location) }
            try StreamWriter.removeStream(in: store)
        }
    }
}

extension FilePackager {
    /// What a clip of the recordings became.
    public struct ClipOutcome {
        public var segmentCount: Int
        public var durationSeconds: Double
        public var byteCount: Int
        /// Per part, seconds its start moved back to a keyframe (negative: on to the first one after it).
        public var movedSeconds: [Double]
    }

    /// Parts of recordings as one VOD stream, copied on one timeline (`hlscap file DIR --from … --to …
    /// --out`): gaps between the parts are closed, every segment starts at a keyframe.
    public func packageClip(_ parts: [ClipSource.Part]) throws -> (Outcome, ClipOutcome) {
        try prepareOutput()
        var output: Output?
        do {
            let source = try ClipSource(parts: parts)
            let layout = StreamLayout.make(tracks: source.tracks, videoNames: nil, audioLanguages: [])
            let started = try makeOutput(store: store, layout: layout)
            output = started
            try started.beginSection(tracks: source.tracks)
            _ = try package(source, into: started, firstSequenceNumber: 1, keyframeGapLimit: nil)
            let (summary, report) = try finish(started)
            let outcome = Outcome(summary: summary, copied: true, reason: "a clip of the recordings is copied",
                                  skippedCorruptPackets: 0, publishReport: report,
                                  renditions: started.writer.renditionDirectories)
            return (outcome, ClipOutcome(segmentCount: summary.segmentCount, durationSeconds: summary.durationSeconds,
                                         byteCount: summary.mediaBytes,
                                         movedSeconds: source.movedMicroseconds.map { Double($0) / 1e6 }))
        } catch {
            output?.takeBack(reporting: onMessage)
            throw error
        }
    }

    /// Parts of recordings as one fragmented MP4 file at `path` in `store` (`hlscap file DIR --from … -o
    /// clip.mp4`), a fragment per segment with its random-access index, as a recording is written; a
    /// failed export removes the file.
    public static func writeClip(_ parts: [ClipSource.Part], store: any StreamStore, path: String,
                                 segmentMilliseconds: Int64) throws -> ClipOutcome {
        let source = try ClipSource(parts: parts)
        let tracks = source.tracks.map { Segmenter.Track(timescale: $0.timescale, isVideo: $0.isVideo) }
        // A file of its own starts near zero, as a recording does.
        var segmenter = Segmenter(configuration: .init(tracks: tracks, segmentMilliseconds: segmentMilliseconds,
                                                       startOffsetSeconds: LiveRecorder.startOffsetSeconds))
        var writer = try RecordingWriter(store: store, path: path, tracks: source.tracks)
        var count = 0
        var durationSeconds = 0.0
        do {
            while true {
                let sample = try source.nextSample()
                let segments = sample.map { segmenter.append($0) } ?? segmenter.finish()
                for segment in segments {
                    try writer.append(segment)
                    count += 1
                    durationSeconds += segment.durationSeconds
                }
                if sample == nil { break }
            }
            guard count > 0 else { throw PackagingError.nothingToStream(inputs: parts.map(\.path)) }
            let byteCount = writer.byteCount
            try writer.finish()
            return ClipOutcome(segmentCount: count, durationSeconds: durationSeconds, byteCount: byteCount,
                               movedSeconds: source.movedMicroseconds.map { Double($0) / 1e6 })
        } catch {
            try? store.remove(path)
            throw error
        }
    }
}

/// The stream writer, and the publisher that uploads what it stores.
private final class Output {
    private(set) var writer: StreamWriter
    let publisher: LayoutPublisher?

    init(writer: StreamWriter, publisher: LayoutPublisher?) {
        self.writer = writer
        self.publisher = publisher
    }

    func beginSection(tracks: [TrackDescription]) throws {
        for path in try writer.beginSection(tracks: tracks) { publisher?.addFile(path) }
    }

    func write(_ segment: Segment) throws {
        let paths = try writer.write(segment).paths
        for path in paths { publisher?.addSegment(path, durationSeconds: segment.durationSeconds) }
        publisher?.updatePlaylists(writer.playlists)
    }

    func finish() throws -> StreamWriter.Summary {
        let summary = try writer.finish()
        publisher?.updatePlaylists(writer.playlists)
        for (path, _) in writer.playlists where path.hasSuffix(StreamLayout.iFramePlaylistName) {
            publisher?.addFile(path)
        }
        publisher?.addFile(StreamLayout.masterPlaylistName)
        return summary
    }

    /// A failed run: what was stored goes, so that no stream that looks valid is left; each file that
    /// cannot be removed is reported.
    func takeBack(reporting report: ((EngineMessage) -> Void)?) {
        for failure in writer.removeWrittenFiles() { report?(.takeBackFailed(failure)) }
    }
}

/// Copying met keyframes too far apart for sensible segments.
public struct KeyframeGapTooLong: Error, CustomStringConvertible {
    public var input: String
    public var gapSeconds: Double
    public var atSeconds: Double

    public var description: String {
        String(format: "%@ has no keyframe for more than %.1f s after %.1f s, over %d segment durations",
               input, gapSeconds, atSeconds, Int(FilePackager.copyableKeyframeGapSegments))
    }
}

/// Watches the video keyframes of a copied input.
private struct KeyframeGapCheck {
    var limitMilliseconds: Int64
    var input: String
    private var lastKeyframe: Int64?

    init(limitMilliseconds: Int64, input: String) {
        self.limitMilliseconds = limitMilliseconds
        self.input = input
    }

    mutating func check(_ sample: EncodedSample, timescale: Timescale, isVideo: Bool) throws {
        guard isVideo else { return }
        let time = sample.presentationTime
        let last = lastKeyframe ?? time
        if time - last > timescale.ticks(milliseconds: limitMilliseconds) {
            throw KeyframeGapTooLong(input: input, gapSeconds: timescale.seconds(time - last),
                                     atSeconds: timescale.seconds(last))
        }
        if sample.isSync { lastKeyframe = time }
    }
}

extension Segment {
    /// Where the segment starts in the input, in seconds: its output time less the segmenter's offset.
    var startSeconds: Double {
        timescale.seconds(startTicks) - Double(Segmenter.Configuration.defaultStartOffsetSeconds)
    }
}
