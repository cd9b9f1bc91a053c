import Foundation
import HLSEngine
import HLSKit
import HLSMedia

/// A plan's refusals in the command line's words, each with its exit status.
extension CommandError {
    init(_ error: PlanError) {
        self.init(error, addressOption: "--serve")
    }

    /// `addressOption` names the server's address (--serve or --listen) where a server option lacks it.
    init(_ error: PlanError, addressOption: String) {
        switch error {
        case .needsServing:
            self.init("--tls-cert, --tls-key, --tls-ocsp, --max-clients, --idle-timeout, --header-timeout and "
                + "--auth-…/--metrics-token need \(addressOption) ADDR:PORT", exitCode: .usage)
        case .secretUnreadable(let option, let path):
            self.init("--\(option) \(path) cannot be read", exitCode: .noInput)
        case .tokenFileEmpty(let path):
            self.init("--auth-token-file \(path) is empty", exitCode: .dataError)
        case .signingKeyShort(let path):
            self.init("--auth-key \(path) holds under \(ServerPlan.minimumSigningKeyBytes) bytes; make one with: "
                + "openssl rand -hex 32 > \(path)", exitCode: .dataError)
        case .pemUnreadable(let option, let path):
            self.init("--\(option) \(path) cannot be read; give a PEM file", exitCode: .noInput)
        case .notPEM(let option, let path):
            self.init("--\(option) \(path) is not PEM text (-----BEGIN …)", exitCode: .dataError)
        case .ocspUnreadable(let path):
            self.init("--tls-ocsp \(path) cannot be read; give the DER OCSP response your renewal job fetches "
                + "(openssl ocsp … -respout \(path))", exitCode: .noInput)
        case .authorityFileUnreadable(let path):
            self.init("--ca-file \(path): cannot be read; give a PEM file of certificates", exitCode: .noInput)
        case .overlayUnavailable(let reason):
            self.init("--overlay: \(reason)", exitCode: .unavailable)
        case .encoderUnavailable(let kind, let reason, let software):
            self.init("--encoder \(kind.rawValue): \(reason); give --encoder \(software) to encode in software "
                + "or auto to use whatever this machine has", exitCode: .unavailable)
        case .cameraFormatMissing(let device, let asked, let readable, let unreadable, let offered):
            var has = readable.joined(separator: ", ")
            if unreadable > 0 {
                has += (has.isEmpty ? "" : ", and ") + "\(unreadable) format\(unreadable == 1 ? "" : "s") hlscap does not read"
            }
            let advice = offered.isEmpty ? "use another camera"
                : "give --input-format " + offered.map(\.rawValue).joined(separator: " or ")
            self.init("\(device): offers no \(asked) format (it has \(has)); \(advice)", exitCode: .noInput)
        case .folderWithoutClip(let folder):
            self.init("\(folder) is a folder, not a media file; to export a clip of the recordings in it give "
                + "--from TIME and --to TIME (or --duration)", exitCode: .noInput)
        default:
            self.init(Self.usageLine(error), exitCode: .usage)
        }
    }

    /// The line for a refusal that is a usage error (64).
    private static func usageLine(_ error: PlanError) -> String {
        switch error {
        case .listenWithVideo: "--listen and --video exclude each other: the publisher is the video"
        case .listenAddress(let url): "--listen \(url): give rtmp://ADDR:PORT/APP/KEY or srt://ADDR:PORT"
        case .srtListenAddress(let url): "--listen \(url): write srt://ADDR:PORT, such as srt://0.0.0.0:9000"
        case .rtmpListenAddress(let url): "--listen \(url): write rtmp://ADDR:PORT/APP/KEY, such as rtmp://0.0.0.0:1935/live/cam1"
        case .rtmpListenPath(let url):
            "--listen \(url): the path is /APP/KEY, an application and a stream key, such as /live/cam1"
        case .loopWithoutFile: "--loop repeats a file given to --video or --audio"
        case .reconnectWithFile: "--reconnect waits for cameras, microphones and URLs; a file cannot come back"
        case .rtspTransport: "--rtsp-transport takes tcp or udp"
        case .authorityFileWithoutHTTPS: "--ca-file is for an https:// input given to --video or --audio"
        case .stallTimeout: "--stall-timeout takes seconds from 0.5 to 3600"
        case .transcodeWithoutInput: "--transcode is for a URL, a file or a camera given to --video"
        case .inputFormatWithoutCamera: "--input-format chooses what a V4L2 camera delivers; --video is not a camera"
        case .nothingToCapture: "--video none and --audio none leave nothing to capture"
        case .resumeAndOverwrite: "--resume and --overwrite exclude each other"
        case .framesPerSecond: "--fps takes a whole number of frames per second from 1 to 240"
        case .unknownEncoder(let name): "--encoder \(name): give x264 (x265 for HEVC), vaapi, v4l2m2m, nvenc or auto"
        case .ladderConflict(let option): "--ladder and --\(option) exclude each other: each rung has its height and rate"
        case .ladderWithStreamBitrate:
            "--ladder and --video-bitrate exclude each other: give each rung its rate, as in --ladder 720p@2500k,360p@600k"
        case .ladderWithoutVideo: "--ladder needs video; it cannot be used with --video none"
        case .ladderSourceInFile:
            "--ladder source is for hlscap live, where it copies the input's own video as the top rung; here every "
                + "rung is encoded: give heights such as 720p,480p,360p"
        case .ladderSource(let reason): "--ladder: \(reason)"
        case .needsOverlay(let option): "--\(option) needs --overlay"
        case .overlayFormat(let reason): "--overlay: \(reason); give clock or a strftime format such as '%H:%M:%S'"
        case .overlayWithoutVideo: "--overlay writes the time into the picture; it cannot be used with --video none"
        case .segmentDuration: "--segment-duration must be between 0.5 and 60 seconds"
        case .window: "--window takes 0 (keep all) or at least 3 segments"
        case .dvrAndWindow: "--dvr sets the window from a duration; give --dvr or --window, not both"
        case .lowLatencyWithoutServing:
            "--low-latency needs --serve ADDR:PORT: blocking reloads and parts are answered by the process that captures"
        case .partDuration: "--part-duration must be between 0.1 s and a third of --segment-duration"
        case .partDurationWithoutLowLatency: "--part-duration needs --low-latency"
        case .noDestination: "--out DIR or --publish URL is required: where the stream goes"
        case .encryptionWithLowLatency:
            "--encrypt and --low-latency exclude each other: parts would go out clear while their segment is encrypted"
        case .sampleAESWithResume:
            "--encrypt cbcs and --resume exclude each other: the new run's key would replace the init section the "
                + "listed segments were encrypted for"
        case .needsEncryption: "--key-rotation, --key-dir, --key-url and --publish-keys need --encrypt aes-128 or cbcs"
        case .publishKeysWithoutPublishing: "--publish-keys uploads keys with the stream: it needs --publish URL"
        case .keyRotationWithSampleAES:
            "--key-rotation works with --encrypt aes-128: cbcs names its key in the init section, so it keeps one key "
                + "for the run"
        case .keyDirectoryMissing: "--encrypt without --out needs --key-dir DIR: the keys must be kept somewhere"
        case .keyURIPrefix: "--key-url takes a URL or path prefix without quotes, such as https://keys.example/live/"
        case .needsPublishing: "--header, --publish-…, --playlist-cache-control and --s3-… options need --publish URL"
        case .publishTimeout: "--publish-timeout must be more than 0"
        case .s3AddressingTwice: "--s3-path-style and --s3-virtual-hosted exclude each other"
        case .s3Target(let reason): "--publish: \(reason)"
        case .s3ACL(let acl): "--s3-acl takes one of \(OriginPlan.cannedACLs.joined(separator: ", ")) (got \"\(acl)\")"
        case .s3PartSize: "--s3-part-size must be between 5M and 5G (S3's limits)"
        case .s3OptionsWithoutS3: "--s3-… options need --publish s3://BUCKET/PREFIX/"
        case .publishURL(let url): "--publish takes an http://, https:// or s3:// URL (got \"\(url)\")"
        case .playlistCacheControl: "--playlist-cache-control takes a Cache-Control value such as max-age=1"
        case .header(let line): "--header takes 'Name: value' (got \"\(line)\")"
        case .needsRecording(let option): "--\(option) needs --record PATH"
        case .authTokenTwice: "--auth-token and --auth-token-file exclude each other"
        case .emptySecret: "--auth-token and --metrics-token take a non-empty secret"
        case .tlsPairing: "--tls-cert and --tls-key go together"
        case .ocspWithoutCertificate: "--tls-ocsp staples a response for --tls-cert's certificate: give --tls-cert and --tls-key too"
        case .serverNumber(let option, let range):
            "--\(option) takes a whole number from \(range.lowerBound) to \(range.upperBound)"
        case .recordingPattern(let path, let reason): "--record \(path): \(reason)"
        case .recordingPeriod(let reason): "--record-every \(reason)"
        case .recordingNameWithoutTime(let path):
            "--record-every needs a time in --record's name, such as 'rec/%Y-%m-%d/%H-%M-%S.mp4': every file would "
                + "be named \(path)"
        case .recordingNamesCollide(let path, let finest, let period):
            "--record \(path) names files no finer than \(finest) s, so files started every \(period) s would "
                + "collide; add %H, %M or %S"
        case .retentionWithoutSplit:
            "--keep, --keep-size and --min-free need a recording split by time (--record PATTERN --record-every "
                + "PERIOD): they delete whole files, never the one being written"
        case .keepShorterThanPeriod(let keep, let period):
            "--keep \(keep) s is shorter than one file (--record-every \(period) s); keep at least one period"
        case .copyConflict(let option): "--copy and --\(option) exclude each other: copying keeps the input's encoding"
        case .noInputFile: "no input file given"
        case .clipStartMissing: "--from TIME is missing: where the clip starts, e.g. 2026-12-01T10:02:00Z"
        case .clipEndMissing: "--to TIME or --duration SPAN is missing: where the clip ends"
        case .clipEndTwice: "--to and --duration exclude each other: give one end"
        case .clipEndNotAfterStart(let from, let to):
            "--to \(ProgramDateTime.format(to)) is not after --from \(ProgramDateTime.format(from))"
        case .clipFileWithoutClip(let file): "-o \(file) writes a clip of recordings: give a folder with --from and --to"
        case .clipFileName(let file): "-o \(file): the clip file's name ends in .mp4"
        case .clipFileAndStream(let option): "-o FILE and --\(option) exclude each other: one file or a stream"
        case .clipFileEncrypted(let file):
            "-o \(file) and --encrypt exclude each other: an encrypted clip is a stream in --out DIR"
        case .clipEncoded(let option): "a clip of recordings is copied, never encoded: leave out --\(option)"
        case .clipCuts: "--cut-at does not apply to a clip of recordings"
        case .clipNeedsFolder(let inputs):
            "--from and --to take one folder of recordings (written by hlscap live --record), not "
                + inputs.joined(separator: " ")
        case .authorityFileUnreadable, .overlayUnavailable, .encoderUnavailable, .folderWithoutClip, .cameraFormatMissing,
             .needsServing, .secretUnreadable, .tokenFileEmpty, .signingKeyShort, .pemUnreadable, .notPEM, .ocspUnreadable:
            "\(error)"
        }
    }
}

extension PlanNotice {
    /// The warning's line, without the leading "hlscap: ".
    var line: String {
        switch self {
        case .copiedSegmentsUnbounded(let input, let searchedSeconds, let segmentSeconds):
            "\(input): no second keyframe came within \(searchedSeconds) s, so copied segments may be that long; "
                + "set the camera's keyframe (I-frame) interval to \(String(format: "%g", segmentSeconds)) s, or give --transcode"
        case .copiedSegmentsJitter(let input, let interval, let longest, let segmentSeconds):
            String(format: "%@: the camera sends a keyframe every %.2f s and its frames are stamped as they are "
                       + "captured, so a keyframe stamped a little early can make a copied segment last up to "
                       + "%.2f s instead of %@ s; give --transcode for segments that keep to it",
                   input, interval, longest, String(format: "%g", segmentSeconds))
        case .copiedSegmentsLonger(let input, let interval, let longest, let segmentSeconds):
            String(format: "%@: the camera sends a keyframe every %.2f s, so copied segments last up to %.2f s instead "
                       + "of %@ s; set its keyframe (I-frame) interval to %@ s or a divisor of it, or give --transcode",
                   input, interval, longest, String(format: "%g", segmentSeconds), String(format: "%g", segmentSeconds))
        case .sourceRungEncoded(let size):
            "--ladder source: the input's video is not copied (a camera, --transcode, --reconnect, --loop, "
                + "--overlay, --size or --fps, or a codec HLS cannot carry), so the source rung is encoded at "
                + "\(size.width)x\(size.height)"
        case .softwareEncoderFallback(let why, let encoder):
            "--encoder auto: no hardware encoder here (\(why)); encoding with \(encoder)"
        case .copyRefused(let input, let reason): "\(input): \(reason)"
        case .streamsLeftOut(let input, let streams):
            "\(input): its \(streams.joined(separator: ", ")) "
                + (streams.count == 1 ? "stream is" : "streams are") + " left out: the stream carries video and sound"
        case .waitingForPublisher(let address): "waiting for a publisher on \(address)"
        }
    }

    /// Says each notice on stderr.
    static func say(_ notices: [PlanNotice]) {
        say(notices, to: { printError($0) })
    }

    /// Says each notice through `say`, which writes a line for stderr.
    static func say(_ notices: [PlanNotice], to say: (String) -> Void) {
        for notice in notices { say(notice.line) }
    }
}
