import Foundation
import HLSEngine
import HLSKit
import HLSMedia
import HLSOutput

/// `hlscap file INPUT… --out DIR`: packages recordings as a VOD HLS stream.
struct FileCommand: Command {
    static let name = "file"
    static let summary = "package recordings as HLS (copying H.264/AAC when possible)"
    static let help = """
        Usage: hlscap file INPUT… (--out DIR | --publish URL) [options]
               hlscap file RECORDINGS-DIR --from TIME (--to TIME | --duration SPAN) (--out DIR | -o FILE.mp4)

        Packages recordings (MP4, MOV, MKV, WebM, MPEG-TS … anything FFmpeg reads) as one HLS stream of
        fragmented MP4: DIR/init.mp4, DIR/seg/000001.m4s …, DIR/playlist.m3u8 (VOD, with ENDLIST) and
        DIR/master.m3u8. Several inputs are joined one after another.

        H.264/AAC inputs whose keyframes are at most 2 segment durations apart are copied without
        re-encoding; anything else is decoded and encoded (H.264 High through libx264, AAC-LC).
        Each segment starts with a keyframe.

        Mode:
          --copy                    copy the compressed samples; fail if an input cannot be copied
                                    (joined inputs follow EXT-X-DISCONTINUITY, with a new init
                                    section when their parameters differ)
          --transcode               always decode and encode (one continuous timeline)

        Encoding (each implies --transcode):
          --size WxH                picture size; "1280x" or "x720" keeps the aspect ratio
                                    (default: the first input's, made even; other inputs letterboxed)
          --fps RATE                convert to a constant frame rate: 30, 29.97, 30000/1001 (default:
                                    every frame keeps its own time, a variable rate included)
          --video-bitrate RATE      H.264 bit rate with a VBV cap at the same rate (default ~0.1 bit/pixel)
          --preset NAME             x264 preset (default veryfast)
          --audio-bitrate RATE      AAC bit rate (default 128k)
          --audio-rate HZ           AAC sample rate (default 48000)
          --audio-channels N        1 or 2 (default 2)
          --audio-track N           keep only this audio track, numbered from 1 in file order
                                    (repeatable; default: every audio track, each its own
                                    rendition in DIR/audio/<language or number>/ when there are several)
          --video-codec CODEC       h264 (default) or hevc (libx265, hvc1)
          --ladder RUNGS            several video renditions: heights such as 720p,480p,360p (Apple's
                                    rates), 1080p@5000k,720p@2500k, or 1080p:hevc@4000k,720p;
                                    DIR/master.m3u8, DIR/720p/…, DIR/audio/…

        A clip of recordings (a folder written by `hlscap live --record`):
          --from TIME               where the clip starts, e.g. 2026-12-01T10:02:00Z (RFC 3339); the
                                    copy starts at the keyframe at or before it, and the summary says
                                    how far that moved the start
          --to TIME                 where it ends (exclusive), or
          --duration SPAN           how long it is: 780, 90s, 13m, 2h
          -o FILE.mp4               one fragmented MP4 file instead of a stream in --out DIR
          The clip is copied, never encoded; gaps between recordings are closed.

        Output:
          --out DIR                 directory for the stream (created if missing)
          --segment-duration S      target segment length in seconds (default 2)
          --cut-at S,S…             also start a segment at these seconds of input time (the joined
                                    timeline); the inputs' chapters start segments too. Transcoding
                                    forces a keyframe there; copying cuts at the next keyframe
          --overwrite               replace a stream already in DIR
        \(PublishOptions.help)
        \(EncryptionOptions.help)
          --quiet                   no progress line
          --help                    show this help

        Exit status: 0 done, 64 usage, 65 bad input data, 66 input missing or unreadable,
        73 DIR cannot be created or holds a stream, 74 write error or a file did not reach the origin.
        """

    var inputs: [String]
    var outputDirectory: String?
    var publish: PublishOptions?
    var encryption: EncryptionOptions?
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
        let copy = arguments.flag("--copy")
        let transcode = arguments.flag("--transcode")
        overwrite = arguments.flag("--overwrite")
        quiet = arguments.flag("--quiet")
        var encodingOptions: [String] = []
        if let size = try arguments.value("--size") {
            do {
                _ = try OutputSize.resolve(requested: size, inputWidth: 2, inputHeight: 2)
            } catch {
                throw CommandError.usage("--size: \(error)")
            }
            transcodeSettings.size = size
            encodingOptions.append("--size")
        }
        if let fps = try arguments.value("--fps") {
            transcodeSettings.frameRate = try Parse.frameRate(fps, option: "--fps")
            encodingOptions.append("--fps")
        }
        let audioTracks = try arguments.values("--audio-track").map {
            try Parse.integer($0, option: "--audio-track", in: 1...64)
        }
        if !audioTracks.isEmpty { transcodeSettings.audioTracks = .numbers(audioTracks) }
        if let codec = try arguments.value("--video-codec") {
            transcodeSettings.videoCodec = try Parse.videoCodec(codec, option: "--video-codec")
            encodingOptions.append("--video-codec")
        }
        if let ladder = try arguments.value("--ladder") {
            transcodeSettings.ladder = try Parse.ladder(ladder, option: "--ladder")
            if transcodeSettings.ladder?.contains(where: \.isSource) == true {
                throw CommandError.usage("--ladder source is for hlscap live, where it copies the input's own video as the "
                    + "top rung; here every rung is encoded: give heights such as 720p,480p,360p")
            }
            encodingOptions.append("--ladder")
        }
        if let rate = try arguments.value("--video-bitrate") {
            transcodeSettings.videoBitrate = try Parse.bitrate(rate, option: "--video-bitrate")
            encodingOptions.append("--video-bitrate")
        }
        if let preset = try arguments.value("--preset") {
            transcodeSettings.preset = preset
            encodingOptions.append("--preset")
        }
        if let rate = try arguments.value("--audio-bitrate") {
            transcodeSettings.audio.bitrate = try Parse.bitrate(rate, option: "--audio-bitrate")
            encodingOptions.append("--audio-bitrate")
        }
        if let rate = try arguments.value("--audio-rate") {
            transcodeSettings.audio.sampleRate = try Parse.integer(rate, option: "--audio-rate", in: 8_000...96_000)
            encodingOptions.append("--audio-rate")
        }
        if let channels = try arguments.value("--audio-channels") {
            transcodeSettings.audio.channelCount = try Parse.integer(channels, option: "--audio-channels", in: 1...2)
            encodingOptions.append("--audio-channels")
        }
        transcodeSettings.segmentMilliseconds = try arguments.value("--segment-duration")
            .map { try Parse.milliseconds($0, option: "--segment-duration") } ?? 2000
        guard (500...60_000).contains(transcodeSettings.segmentMilliseconds) else {
            throw CommandError.usage("--segment-duration must be between 0.5 and 60 seconds")
        }
        if let cuts = try arguments.value("--cut-at") {
            cutMicroseconds = try Parse.cutPoints(cuts, option: "--cut-at")
        }
        if transcodeSettings.ladder != nil,
           let conflict = ["--size", "--video-bitrate"].first(where: encodingOptions.contains) {
            throw CommandError.usage("--ladder and \(conflict) exclude each other: each rung has its height and rate")
        }
        switch (copy, transcode || !encodingOptions.isEmpty) {
        case (true, true):
            let conflict = transcode ? "--transcode" : encodingOptions[0]
            throw CommandError.usage("--copy and \(conflict) exclude each other: copying keeps the input's encoding")
        case (true, false): mode = .copy
        case (false, true): mode = .transcode
        case (false, false): mode = .automatic
        }
        publish = try PublishOptions(arguments: &arguments)
        outputDirectory = try arguments.value("--out")
        outputFile = try arguments.value("-o")
        clip = try Self.clipRange(&arguments)
        if clip != nil || outputFile != nil {
            try Self.checkClipOptions(outputDirectory: outputDirectory, outputFile: outputFile, clip: clip != nil,
                                      publishing: publish != nil, encoding: transcode ? ["--transcode"] : encodingOptions,
                                      cuts: !cutMicroseconds.isEmpty)
        }
        encryption = try EncryptionOptions(arguments: &arguments, outputDirectory: outputDirectory,
                                               publishing: publish != nil)
        if let outputFile, encryption != nil {
            throw CommandError.usage("-o \(outputFile) and --encrypt exclude each other: an encrypted clip is a stream in --out DIR")
        }
        guard outputDirectory != nil || publish != nil || outputFile != nil else {
            throw CommandError.usage("--out DIR or --publish URL is required: where the stream goes")
        }
        inputs = try arguments.positionals()
        guard !inputs.isEmpty else { throw CommandError.usage("no input file given") }
        var isDirectory: ObjCBool = false
        let folder = inputs.count == 1 && FileManager.default.fileExists(atPath: inputs[0], isDirectory: &isDirectory)
            && isDirectory.boolValue
        if clip != nil, !folder {
            throw CommandError.usage("--from and --to take one folder of recordings (written by hlscap live --record), "
                + "not \(inputs.joined(separator: " "))")
        }
        if clip == nil, folder {
            throw CommandError("\(inputs[0]) is a folder, not a media file; to export a clip of the recordings in it give "
                + "--from TIME and --to TIME (or --duration)", exitCode: .noInput)
        }
    }

    /// `--from` with `--to` or `--duration`; nil when none is given.
    private static func clipRange(_ arguments: inout ArgumentList) throws -> (from: Date, to: Date)? {
        let fromText = try arguments.value("--from")
        let toText = try arguments.value("--to")
        let durationText = try arguments.value("--duration")
        guard fromText != nil || toText != nil || durationText != nil else { return nil }
        guard let fromText else { throw CommandError.usage("--from TIME is missing: where the clip starts, e.g. 2026-12-01T10:02:00Z") }
        guard let from = ProgramDateTime.parse(fromText[...]) else {
            throw CommandError.usage("--from \(fromText) is not a date-time such as 2026-12-01T10:02:00Z")
        }
        let to: Date
        switch (toText, durationText) {
        case (let text?, nil):
            guard let date = ProgramDateTime.parse(text[...]) else {
                throw CommandError.usage("--to \(text) is not a date-time such as 2026-12-01T10:15:00Z")
            }
            to = date
        case (nil, let text?):
            guard let seconds = DurationText.seconds(text) else {
                throw CommandError.usage("--duration \(text) is not a span such as 780, 90s, 13m or 2h")
            }
            to = from.addingTimeInterval(Double(seconds))
        case (nil, nil):
            throw CommandError.usage("--to TIME or --duration SPAN is missing: where the clip ends")
        case (_?, _?):
            throw CommandError.usage("--to and --duration exclude each other: give one end")
        }
        guard to > from else {
            throw CommandError.usage("--to \(ProgramDateTime.format(to)) is not after --from \(ProgramDateTime.format(from))")
        }
        return (from, to)
    }

    private static func checkClipOptions(outputDirectory: String?, outputFile: String?, clip: Bool, publishing: Bool,
                                         encoding: [String], cuts: Bool) throws {
        if let outputFile {
            guard clip else { throw CommandError.usage("-o \(outputFile) writes a clip of recordings: give a folder with --from and --to") }
            guard outputFile.hasSuffix(".mp4") else { throw CommandError.usage("-o \(outputFile): the clip file's name ends in .mp4") }
            if outputDirectory != nil || publishing {
                throw CommandError.usage("-o FILE and \(publishing ? "--publish" : "--out") exclude each other: one file or a stream")
            }
        }
        if let conflict = encoding.first {
            throw CommandError.usage("a clip of recordings is copied, never encoded: leave out \(conflict)")
        }
        if cuts { throw CommandError.usage("--cut-at does not apply to a clip of recordings") }
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
        packager.encryption = try encryption?.make()
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
        for input in outcome.inputsWithNewInitSection {
            printError("warning: \(input) starts a new init section after a discontinuity; FFmpeg's HLS reader "
                + "and older hls.js keep the first one and may fail to play it (without --copy it is transcoded)")
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
                packager.encryption = try encryption?.make()
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
