import Foundation
import HLSEngine
import HLSKit
import HLSMedia
import HLSOutput

/// `hlscap file INPUT… --out DIR`: packages recordings as a VOD HLS stream.
struct FileCommand: Command {
    static let name = "file"
    static let summary = "package recordings as HLS (copying H.264/AAC when possible)"
    // `help` is in FileCommand+Help.swift.

    var inputs: [String]
    var outputDirectory: String?
    var publish: PublishOptions?
    var encryption: EncryptionPlan?
    var mode: FilePackager.Mode
    var transcodeSettings = TranscodeSettings()
    var cutMicroseconds: [Int64] = []
    var overwrite: Bool
    var quiet: Bool
    /// `--from`/`--to`: a clip of the recordings in the one input folder.
    var clip: (from: Date, to: Date)?
    /// `-o FILE.mp4`: the clip as one file.
    var outputFile: String?

    init(arguments: inout ArgumentList) throws {
        var request = FileRequest()
        request.copy = arguments.flag("--copy")
        request.transcode = arguments.flag("--transcode")
        overwrite = arguments.flag("--overwrite")
        quiet = arguments.flag("--quiet")
        if let size = try arguments.value("--size") {
            do {
                _ = try OutputSize.resolve(requested: size, inputWidth: 2, inputHeight: 2)
            } catch {
                throw CommandError.usage("--size: \(error)")
            }
            request.size = size
        }
        request.frameRate = try arguments.value("--fps").map { try Parse.frameRate($0, option: "--fps") }
        request.audioTracks = try arguments.values("--audio-track").map {
            try Parse.integer($0, option: "--audio-track", in: 1...64)
        }
        request.videoCodec = try arguments.value("--video-codec").map { try Parse.videoCodec($0, option: "--video-codec") }
        request.ladder = try arguments.value("--ladder").map { try Parse.ladder($0, option: "--ladder") }
        request.videoBitrate = try arguments.value("--video-bitrate").map { try Parse.bitrate($0, option: "--video-bitrate") }
        request.preset = try arguments.value("--preset")
        request.audioBitrate = try arguments.value("--audio-bitrate").map { try Parse.bitrate($0, option: "--audio-bitrate") }
        request.audioSampleRate = try arguments.value("--audio-rate")
            .map { try Parse.integer($0, option: "--audio-rate", in: 8_000...96_000) }
        request.audioChannelCount = try arguments.value("--audio-channels")
            .map { try Parse.integer($0, option: "--audio-channels", in: 1...2) }
        request.segmentMilliseconds = try arguments.value("--segment-duration")
            .map { try Parse.milliseconds($0, option: "--segment-duration") }
        request.cutMicroseconds = try arguments.value("--cut-at").map { try Parse.cutPoints($0, option: "--cut-at") } ?? []
        publish = try PublishOptions(arguments: &arguments)
        request.publishing = publish != nil
        request.outputDirectory = try arguments.value("--out")
        request.outputFile = try arguments.value("-o")
        try Self.readClipRange(&arguments, into: &request)
        request.encryption = try EncryptionOptions.request(&arguments)
        request.inputs = try arguments.positionals()
        let plan: FilePlan
        do {
            plan = try request.plan()
        } catch {
            throw CommandError(error)
        }
        inputs = request.inputs
        outputDirectory = request.outputDirectory
        outputFile = request.outputFile
        mode = plan.mode
        transcodeSettings = plan.transcodeSettings
        cutMicroseconds = request.cutMicroseconds
        clip = plan.clip.map { ($0.from, $0.to) }
        encryption = plan.encryption
    }

    /// `--from`, `--to` and `--duration`, each read as a date-time or a span.
    private static func readClipRange(_ arguments: inout ArgumentList, into request: inout FileRequest) throws {
        if let text = try arguments.value("--from") {
            guard let date = ProgramDateTime.parse(text[...]) else {
                throw CommandError.usage("--from \(text) is not a date-time such as 2026-12-01T10:02:00Z")
            }
            request.clipFrom = date
        }
        if let text = try arguments.value("--to") {
            guard let date = ProgramDateTime.parse(text[...]) else {
                throw CommandError.usage("--to \(text) is not a date-time such as 2026-12-01T10:15:00Z")
            }
            request.clipTo = date
        }
        if let text = try arguments.value("--duration") {
            guard let seconds = DurationText.seconds(text) else {
                throw CommandError.usage("--duration \(text) is not a span such as 780, 90s, 13m or 2h")
            }
            request.clipDurationSeconds = seconds
        }
    }

    func run() throws {
        if let clip { return try runClip(from: clip.from, to: clip.to) }
        // Before anything is captured or read: a store that refuses the stream is said at once.
        try publish?.checkTarget()
        let spoolDirectory = outputDirectory == nil ? try PublishOptions.makeSpoolDirectory() : nil
        defer { spoolDirectory.map(PublishOptions.removeSpoolDirectory) }
        let directory = outputDirectory ?? spoolDirectory!
        let progress = quiet ? nil : Progress.onTerminal()
        let store: DirectoryStore
        do {
            store = try DirectoryStore(root: directory)
        } catch {
            throw CommandError(error)
        }
        var packager = FilePackager(inputs: inputs, store: store, mode: mode, transcodeSettings: transcodeSettings,
                                    overwrite: overwrite)
        packager.cutMicroseconds = cutMicroseconds
        packager.encryption = try EncryptionOptions.make(encryption)
        packager.publishKeys = encryption?.publishKeys ?? false
        packager.onTotalSeconds = { progress?.totalSeconds = $0 }
        packager.onProgress = { progress?.advance(toSeconds: $0) }
        packager.onMessage = EngineMessage.print
        packager.publish = publish.map { options in
            { store, directory in options.makeFilePublisher(store: store, directory: directory) }
        }
        let outcome: FilePackager.Outcome
        do {
            outcome = try packager.run()
            progress?.clear()
        } catch {
            progress?.clear()
            throw CommandError(error, packaging: inputs)
        }
        if outcome.skippedCorruptPackets > 0 {
            printError("warning: skipped \(outcome.skippedCorruptPackets) corrupt packet(s); the stream is valid "
                + "but may show a glitch there")
        }
        // A cut point no segment starts at was past the input's end (or, copying, past its last keyframe).
        for cut in cutMicroseconds where !outcome.cuts.contains(where: { abs($0.askedSeconds * 1e6 - Double(cut)) < 1000 }) {
            printError(String(format: "warning: --cut-at %.3f: no segment starts there, as the input ends before it%@",
                              Double(cut) / 1e6, outcome.copied ? " or has no keyframe after it" : ""))
        }
        let summary = outcome.summary
        let name = outcome.renditions == [""] ? StreamLayout.playlistName : StreamLayout.masterPlaylistName
        let playlist = outputDirectory.map { $0 + "/" + name }
            ?? publish!.origin.appendingPathComponent(name).absoluteString
        // Copying cuts at keyframes: say where each cut point went (transcoding puts them within a frame).
        let moved = outcome.copied ? outcome.cuts.filter { $0.movedSeconds > 0 } : []
        let cuts = moved.isEmpty ? "" : "; cuts moved to the next keyframe: " + moved.map {
            String(format: "%.3f s by %.3f s", $0.askedSeconds, $0.movedSeconds)
        }.joined(separator: ", ")
        print(String(format: "%@: %d segments, %.3f s, %d kb/s, mode %@ (%@)%@",
                     playlist, summary.segmentCount, summary.durationSeconds, summary.averageBitrate / 1000,
                     outcome.copied ? "copy" : "transcode", mode == .copy ? "--copy" : outcome.reason, cuts))
        if let report = outcome.publishReport, let publish {
            print(report.summaryLine(origin: publish.displayName))
            if !report.isComplete { throw report.incompleteError(origin: publish.displayName) }
        }
    }

    /// A clip of the recordings in `inputs[0]`, copied into a stream or one file.
    private func runClip(from: Date, to: Date) throws {
        let folder = inputs[0]
        guard let scanned = try? RecordingScanner.scan(folder: folder) else {
            throw CommandError("\(folder): cannot be read; check the folder and its permissions", exitCode: .noInput)
        }
        let summaries = scanned.map { (path: folder + "/" + $0.path, summary: $0.summary) }
        let found = RecordingClip.parts(files: summaries, from: from, to: to)
        guard !found.isEmpty else {
            throw CommandError("\(folder): no recording between \(ProgramDateTime.format(from)) and "
                + "\(ProgramDateTime.format(to)); hlscap recordings \(folder) lists what there is", exitCode: .noInput)
        }
        let parts = found.map {
            ClipSource.Part(path: $0.path, startMicroseconds: Int64(($0.startSeconds * 1e6).rounded()),
                            endMicroseconds: $0.endSeconds.map { Int64(($0 * 1e6).rounded()) })
        }
        let clip: FilePackager.ClipOutcome
        let written: String
        do {
            if let outputFile {
                let url = URL(fileURLWithPath: outputFile)
                if FileManager.default.fileExists(atPath: outputFile), !overwrite {
                    throw CommandError("\(outputFile) exists; add --overwrite to replace it or choose another -o",
                                       exitCode: .cannotCreate)
                }
                let store = try DirectoryStore(root: url.deletingLastPathComponent().path)
                clip = try FilePackager.writeClip(parts, store: store, path: url.lastPathComponent,
                                                  segmentMilliseconds: transcodeSettings.segmentMilliseconds)
                written = outputFile
            } else {
                let spoolDirectory = outputDirectory == nil ? try PublishOptions.makeSpoolDirectory() : nil
                defer { spoolDirectory.map(PublishOptions.removeSpoolDirectory) }
                let store = try DirectoryStore(root: outputDirectory ?? spoolDirectory!)
                var packager = FilePackager(inputs: parts.map(\.path), store: store, mode: .copy,
                                            transcodeSettings: transcodeSettings, overwrite: overwrite)
                packager.encryption = try EncryptionOptions.make(encryption)
                packager.publishKeys = encryption?.publishKeys ?? false
                packager.onMessage = EngineMessage.print
                packager.publish = publish.map { options in
                    { store, directory in options.makeFilePublisher(store: store, directory: directory) }
                }
                let (outcome, made) = try packager.packageClip(parts)
                clip = made
                written = outputDirectory.map { $0 + "/" + StreamLayout.playlistName }
                    ?? publish!.origin.appendingPathComponent(StreamLayout.playlistName).absoluteString
                if let report = outcome.publishReport, let publish {
                    print(report.summaryLine(origin: publish.displayName))
                    if !report.isComplete { throw report.incompleteError(origin: publish.displayName) }
                }
            }
        } catch {
            throw CommandError(error, packaging: parts.map(\.path))
        }
        print(Self.clipSummary(written: written, clip: clip, parts: found, from: from, to: to))
    }

    /// One line: what was written, from how many recordings, where it starts and ends against the range
    /// asked for, and the gaps closed.
    static func clipSummary(written: String, clip: FilePackager.ClipOutcome, parts: [RecordingClip.Part],
                            from: Date, to: Date) -> String {
        var line = String(format: "%@: %d segments, %.3f s, %.1f MB, copied from %d recording%@", written,
                          clip.segmentCount, clip.durationSeconds, Double(clip.byteCount) / 1_000_000, parts.count,
                          parts.count == 1 ? "" : "s")
        if let first = parts.first, let moved = clip.movedSeconds.first {
            let early = from.timeIntervalSince(first.start.addingTimeInterval(-moved))
            if early > 0.0005 {
                line += String(format: "; starts %.3f s before --from, at the keyframe before it", early)
            } else if early < -0.0005 {
                line += String(format: "; starts %.3f s after --from, %@", -early,
                               first.start > from ? "where the recordings begin" : "at the first keyframe")
            }
        }
        if let last = parts.last, last.end < to {
            line += String(format: "; ends %.3f s before --to, where the recordings end", to.timeIntervalSince(last.end))
        }
        let gaps = parts.map(\.gapBeforeSeconds).filter { $0 > RecordingRangePlaylist.gapSeconds }
        if !gaps.isEmpty {
            line += String(format: "; %d gap%@ closed (%.1f s)", gaps.count, gaps.count == 1 ? "" : "s", gaps.reduce(0, +))
        }
        return line
    }
}
