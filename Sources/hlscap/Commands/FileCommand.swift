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
        encryption = try EncryptionOptions(arguments: &arguments, outputDirectory: outputDirectory,
                                               publishing: publish != nil)
        guard outputDirectory != nil || publish != nil else {
            throw CommandError.usage("--out DIR or --publish URL is required: where the stream goes")
        }
        inputs = try arguments.positionals()
        guard !inputs.isEmpty else { throw CommandError.usage("no input file given") }
    }

    func run() throws {
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
}
