import Foundation
import HLSKit
import HLSMedia

/// Recordings → one VOD stream: copied when they allow it, transcoded otherwise.
struct FilePackager {
    enum Mode: Equatable {
        case automatic, copy, transcode
    }

    struct Outcome {
        var summary: StreamWriter.Summary
        var copied: Bool
        var reason: String
        var skippedCorruptPackets: Int
        /// What reached the origin, when publishing.
        var publishReport: PublishReport?
    }

    /// Copy mode cuts only at keyframes: further apart than this many segment durations, segments
    /// would be too long for players, so automatic mode transcodes instead.
    static let copyableKeyframeGapSegments: Int64 = 2

    var inputs: [String]
    var outputDirectory: String
    var mode: Mode
    var transcodeSettings: TranscodeSettings
    var overwrite: Bool
    var progress: Progress?
    /// Makes the publisher that uploads each file once it is stored; nil writes to disk only.
    var publish: ((DirectoryStore) -> StreamPublisher)?

    private var segmentMilliseconds: Int64 { transcodeSettings.segmentMilliseconds }

    func run() throws -> Outcome {
        let store = try prepareOutput()
        switch mode {
        case .copy:
            do {
                return try copy(into: store, maximumKeyframeGapMilliseconds: nil, reason: "--copy")
            } catch {
                throw Self.commandError(error)
            }
        case .transcode:
            return try transcode(into: store, reason: "encoding options given")
        case .automatic:
            if let reason = try firstReasonNotToCopy() {
                return try transcode(into: store, reason: reason)
            }
            // An upload cannot be taken back: find long keyframe gaps before anything is published.
            if publish != nil, let gap = try firstKeyframeGapTooLong() {
                return try transcode(into: store, reason: gap.description)
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
    private func firstReasonNotToCopy() throws -> String? {
        for input in inputs {
            do {
                _ = try CopySource(demuxer: FileDemuxer(path: input))
            } catch let error as CopyError {
                return error.summary
            } catch {
                throw Self.commandError(error)
            }
        }
        return nil
    }

    private func copy(into store: DirectoryStore, maximumKeyframeGapMilliseconds: Int64?,
                      reason: String) throws -> Outcome {
        var output = Output(writer: StreamWriter(store: store), publisher: publish?(store))
        var nextSequenceNumber = 1
        do {
            for input in inputs {
                let source = try CopySource(demuxer: FileDemuxer(path: input))
                try output.beginSection(tracks: source.tracks)
                nextSequenceNumber = try package(source, into: &output, firstSequenceNumber: nextSequenceNumber,
                                                 keyframeGapLimit: maximumKeyframeGapMilliseconds.map { ($0, input) })
            }
            let (summary, report) = try finish(&output)
            return Outcome(summary: summary, copied: true, reason: reason, skippedCorruptPackets: 0,
                           publishReport: report)
        } catch {
            output.writer.removeWrittenFiles()
            // Reasons to transcode instead go up as they are; the caller decides.
            if error is KeyframeGapTooLong || error is CopyError { throw error }
            throw Self.commandError(error, packaging: inputs)
        }
    }

    private func transcode(into store: DirectoryStore, reason: String) throws -> Outcome {
        var output = Output(writer: StreamWriter(store: store), publisher: publish?(store))
        do {
            let source = try TranscodeSource(inputs: inputs, settings: transcodeSettings)
            progress?.totalSeconds = source.totalSeconds
            try output.beginSection(tracks: source.tracks)
            _ = try package(source, into: &output, firstSequenceNumber: 1, keyframeGapLimit: nil)
            let (summary, report) = try finish(&output)
            return Outcome(summary: summary, copied: false, reason: reason,
                           skippedCorruptPackets: source.skippedCorruptPackets, publishReport: report)
        } catch {
            output.writer.removeWrittenFiles()
            throw Self.commandError(error, packaging: inputs)
        }
    }

    private func finish(_ output: inout Output) throws -> (StreamWriter.Summary, PublishReport?) {
        let summary = try output.finish()
        guard summary.segmentCount > 0 else {
            throw CommandError("\(inputs.joined(separator: ", ")): no video keyframe or audio sample to start a "
                + "stream with", exitCode: .dataError)
        }
        return (summary, output.publisher?.finish())
    }

    /// Reads the inputs' video packets once, without decoding, for a keyframe gap copy mode must refuse.
    private func firstKeyframeGapTooLong() throws -> KeyframeGapTooLong? {
        let limit = Self.copyableKeyframeGapSegments * segmentMilliseconds
        for input in inputs {
            let source = try CopySource(demuxer: FileDemuxer(path: input))
            var check = KeyframeGapCheck(limitMilliseconds: limit, input: input)
            do {
                while let sample = try source.nextSample() {
                    try check.check(sample, timescale: Int64(source.tracks[sample.track].timescale),
                                    isVideo: source.tracks[sample.track].isVideo)
                }
            } catch let gap as KeyframeGapTooLong {
                return gap
            }
        }
        return nil
    }

    /// Segments one source into the writer; returns the next free sequence number.
    private func package(_ source: SampleSource, into output: inout Output, firstSequenceNumber: Int,
                         keyframeGapLimit: (milliseconds: Int64, input: String)?) throws -> Int {
        let tracks = source.tracks.map { Segmenter.Track(timescale: $0.timescale, isVideo: $0.isVideo) }
        var segmenter = Segmenter(configuration: .init(tracks: tracks, segmentMilliseconds: segmentMilliseconds,
                                                       firstSequenceNumber: firstSequenceNumber))
        var gapCheck = keyframeGapLimit.map { KeyframeGapCheck(limitMilliseconds: $0.milliseconds, input: $0.input) }
        var next = firstSequenceNumber
        while let sample = try source.nextSample() {
            try gapCheck?.check(sample, timescale: Int64(tracks[sample.track].timescale),
                                isVideo: tracks[sample.track].isVideo)
            for segment in segmenter.append(sample) {
                try output.write(segment)
                next = segment.sequenceNumber + 1
                progress?.advance(toSeconds: segment.startSeconds + segment.durationSeconds)
            }
        }
        for segment in segmenter.finish() {
            try output.write(segment)
            next = segment.sequenceNumber + 1
        }
        return next
    }

    private func prepareOutput() throws -> DirectoryStore {
        let store: DirectoryStore
        do {
            store = try DirectoryStore(root: outputDirectory)
        } catch {
            throw Self.commandError(error)
        }
        if StreamWriter.holdsStream(store) {
            guard overwrite else {
                throw CommandError("\(outputDirectory) already holds a stream; add --overwrite to replace it "
                    + "or choose another --out", exitCode: .cannotCreate)
            }
            do {
                try StreamWriter.removeStream(in: store)
            } catch {
                throw Self.commandError(error)
            }
        }
        return store
    }

    /// The message and exit status for `error`; one without a message of its own met while
    /// packaging `inputs` names them.
    static func commandError(_ error: any Error, packaging inputs: [String] = []) -> CommandError {
        switch error {
        case let error as CommandError:
            return error
        case let error as MediaInputError:
            return CommandError(error.description, exitCode: ExitCode(rawValue: error.exitCode) ?? .dataError)
        case let error as CopyError:
            return CommandError(error.description, exitCode: .dataError)
        case let error as CodecError:
            return CommandError("\(error)", exitCode: .dataError)
        case let error as StoreError:
            return CommandError(error.description, exitCode: ExitCode(rawValue: error.kind.rawValue) ?? .ioError)
        default:
            let context = inputs.isEmpty ? "" : inputs.joined(separator: ", ") + ": packaging failed: "
            return CommandError(context + "\(error)", exitCode: .software)
        }
    }
}

/// The stream writer, and the publisher that uploads what it stores.
private struct Output {
    var writer: StreamWriter
    let publisher: StreamPublisher?

    mutating func beginSection(tracks: [TrackDescription]) throws {
        if let initPath = try writer.beginSection(tracks: tracks) { publisher?.addFile(initPath) }
    }

    mutating func write(_ segment: Segment) throws {
        try writer.write(segment)
        publisher?.addSegment(StreamWriter.segmentPath(segment.sequenceNumber), durationSeconds: segment.durationSeconds)
        publisher?.updatePlaylist(writer.vodPlaylist)
    }

    mutating func finish() throws -> StreamWriter.Summary {
        let summary = try writer.finishVOD()
        publisher?.updatePlaylist(writer.vodPlaylist)
        publisher?.addFile(StreamWriter.masterPlaylistName)
        return summary
    }
}

/// Copying met keyframes too far apart for sensible segments.
struct KeyframeGapTooLong: Error, CustomStringConvertible {
    var input: String
    var gapSeconds: Double
    var atSeconds: Double

    var description: String {
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

    mutating func check(_ sample: EncodedSample, timescale: Int64, isVideo: Bool) throws {
        guard isVideo else { return }
        let time = sample.presentationTime
        let last = lastKeyframe ?? time
        if (time - last) * 1000 > limitMilliseconds * timescale {
            throw KeyframeGapTooLong(input: input, gapSeconds: Double(time - last) / Double(timescale),
                                     atSeconds: Double(last) / Double(timescale))
        }
        if sample.isSync { lastKeyframe = time }
    }
}

extension Segment {
    /// Where the segment starts in the input, in seconds: its output time less the segmenter's offset.
    var startSeconds: Double {
        Double(startTicks) / Double(timescale) - Double(Segmenter.Configuration.defaultStartOffsetSeconds)
    }
}
