import Foundation
import HLSKit
import HLSMedia

/// `hlscap file INPUT… --out DIR`: packages recordings as a VOD HLS stream.
struct FileCommand: Command {
    static let name = "file"
    static let summary = "package a recording as HLS (copying H.264/AAC)"
    static let help = """
        Usage: hlscap file INPUT (--out DIR | --publish URL) [options]

        Packages a recording (MP4, MOV, MKV, MPEG-TS … anything FFmpeg reads) as an HLS stream of
        fragmented MP4: DIR/init.mp4, DIR/seg/000001.m4s …, DIR/playlist.m3u8 (VOD, with ENDLIST).
        H.264 video and AAC audio are copied without re-encoding; each segment starts at a keyframe.

        Options:
          --out DIR                 directory for the stream (created if missing)
          --copy                    copy the compressed samples (fail if the input cannot be copied)
          --segment-duration S      target segment length in seconds (default 2); segments are cut at
                                    the first keyframe at or after each multiple of S
          --overwrite               replace a stream already in DIR
        \(PublishOptions.help)
          --quiet                   print nothing but errors
          --help                    show this help

        Exit status: 0 done, 64 usage, 65 bad input data, 66 input missing or unreadable,
        73 DIR cannot be created or holds a stream, 74 write error or a file did not reach the origin.
        """

    var inputs: [String]
    var outputDirectory: String?
    var publish: PublishOptions?
    var segmentMilliseconds: Int64
    var overwrite: Bool
    var quiet: Bool

    init(arguments: inout ArgumentList) throws {
        _ = arguments.flag("--copy")
        overwrite = arguments.flag("--overwrite")
        quiet = arguments.flag("--quiet")
        segmentMilliseconds = try arguments.value("--segment-duration")
            .map { try Parse.milliseconds($0, option: "--segment-duration") } ?? 2000
        guard (500...60_000).contains(segmentMilliseconds) else {
            throw CommandError.usage("--segment-duration must be between 0.5 and 60 seconds")
        }
        publish = try PublishOptions(arguments: &arguments)
        outputDirectory = try arguments.value("--out")
        guard outputDirectory != nil || publish != nil else {
            throw CommandError.usage("--out DIR or --publish URL is required: where the stream goes")
        }
        inputs = try arguments.positionals()
        guard inputs.count == 1 else {
            throw CommandError.usage(inputs.isEmpty ? "no input file given" : "give one input file")
        }
    }

    func run() throws {
        let spoolDirectory = outputDirectory == nil ? try PublishOptions.makeSpoolDirectory() : nil
        defer { spoolDirectory.map { try? FileManager.default.removeItem(atPath: $0) } }
        let directory = outputDirectory ?? spoolDirectory!
        var packager = CopyPackager(input: inputs[0], outputDirectory: directory,
                                    segmentMilliseconds: segmentMilliseconds, overwrite: overwrite)
        packager.publish = publish.map { options in { store in options.makeFilePublisher(store: store) } }
        let (summary, report) = try packager.run()
        if !quiet {
            let bitrate = summary.durationSeconds > 0
                ? Int(Double(summary.mediaBytes) * 8 / summary.durationSeconds / 1000) : 0
            let playlist = outputDirectory.map { $0 + "/playlist.m3u8" } ?? publish!.origin.appendingPathComponent(StreamWriter.playlistName).absoluteString
            print(String(format: "%@: %d segments, %.3f s, %d kb/s, mode copy",
                         playlist, summary.segmentCount, summary.durationSeconds, bitrate))
            if let report, let publish { print(report.summaryLine(origin: publish.origin)) }
        }
        if let report, let publish, !report.isComplete {
            throw report.incompleteError(origin: publish.origin)
        }
    }
}
