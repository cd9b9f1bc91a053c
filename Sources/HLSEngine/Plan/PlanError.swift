import Foundation
import HLSKit
import HLSMedia
import HLSOutput

/// Why a request cannot become a stream, one case per rule, each naming by its case (and by option keys
/// such as "record-size" where several options share the rule) what to change. Carries no exit status and
/// no command-line text: the command line says it in its own words.
public enum PlanError: Error, Equatable, Sendable {
    // What is read.
    /// A listen address is given with a video input: the publisher is the video.
    case listenWithVideo
    /// A listen address that is neither rtmp:// nor srt://.
    case listenAddress(String)
    /// An srt:// listen address without a port.
    case srtListenAddress(String)
    /// An rtmp:// listen address without a host.
    case rtmpListenAddress(String)
    /// An rtmp:// listen address whose path is not /APP/KEY.
    case rtmpListenPath(String)
    /// Looping without a file among the inputs.
    case loopWithoutFile
    /// Reconnecting with a file among the inputs: a file cannot come back.
    case reconnectWithFile
    /// An RTSP transport other than tcp or udp.
    case rtspTransport(String)
    /// The certificate authority file cannot be read.
    case authorityFileUnreadable(String)
    /// A certificate authority file without an https:// input.
    case authorityFileWithoutHTTPS
    /// A stall timeout outside 0.5 … 3600 s.
    case stallTimeout
    /// Transcoding asked for without a URL, a file or a camera as the video.
    case transcodeWithoutInput
    /// A camera input format asked for while the video is no camera.
    case inputFormatWithoutCamera
    /// Neither video nor audio.
    case nothingToCapture
    /// The camera at `device` offers no `asked` format: the codes of those it has that hlscap reads, how
    /// many others it has, and the kinds it does offer.
    case cameraFormatMissing(device: String, asked: CameraInputFormat, readable: [String], unreadable: Int,
                             offered: [CameraInputFormat])

    // What the stream is.
    case resumeAndOverwrite
    /// A frame rate outside 1 … 240 (live: whole frames per second).
    case framesPerSecond
    /// An encoder name that is none of those known.
    case unknownEncoder(String)
    /// None of the encoders asked for opens here: the first one's reason, and the software encoder's name
    /// for the codec, which always works.
    case encoderUnavailable(VideoEncoderKind, reason: String, software: String)
    /// A ladder with a stream-wide option that each rung sets for itself ("size", "video-bitrate").
    case ladderConflict(String)
    /// A live ladder with one video bit rate for the stream: each rung has its own.
    case ladderWithStreamBitrate
    case ladderWithoutVideo
    /// A ladder's source rung in file packaging, where every rung is encoded.
    case ladderSourceInFile
    /// A source rung whose rungs below it are not below the source.
    case ladderSource(Ladder.Invalid)
    /// An option of the time overlay ("overlay-local-time", "overlay-font") without the overlay.
    case needsOverlay(String)
    case overlayFormat(TimeOverlayError)
    /// The overlay's font or libavfilter's drawtext is missing.
    case overlayUnavailable(TimeOverlayError)
    case overlayWithoutVideo
    /// A segment duration outside 0.5 … 60 s.
    case segmentDuration
    /// A window below 3 segments (and not 0).
    case window(Int)
    case dvrAndWindow
    case lowLatencyWithoutServing
    /// A part duration below 0.1 s or above a third of the segment duration.
    case partDuration
    case partDurationWithoutLowLatency
    /// Neither a directory nor an origin (nor, for a clip, a file).
    case noDestination
    case encryptionWithLowLatency
    /// Key options (rotation, directory, URI prefix, publishing keys) without encryption.
    case needsEncryption
    case publishKeysWithoutPublishing
    /// Key rotation with SAMPLE-AES, which names its key in the init section.
    case keyRotationWithSampleAES
    /// Encryption without a stream directory to keep the keys beside, and no key directory.
    case keyDirectoryMissing
    /// A key URI prefix that is empty or holds quotes or line breaks.
    case keyURIPrefix(String)
    case sampleAESWithResume

    // The origin.
    /// An upload option (headers, backlog, timeouts, playlist caching, an S3 option) without an origin.
    case needsPublishing
    /// A request timeout of 0.
    case publishTimeout
    /// Path-style and virtual-hosted addressing both asked for.
    case s3AddressingTwice
    case s3Target(S3Target.ParseError)
    /// An ACL that is none of S3's canned ACLs for objects.
    case s3ACL(String)
    /// A multipart part size outside S3's 5 MiB … 5 GiB.
    case s3PartSize
    /// An S3 option with an HTTP origin.
    case s3OptionsWithoutS3
    /// An origin URL that is neither http(s):// with a host nor s3://.
    case publishURL(String)
    /// A playlist Cache-Control that is empty or holds a line break.
    case playlistCacheControl
    /// A header line that is not 'Name: value'.
    case header(String)

    // The built-in server.
    /// A server option (certificate, connection limit, timeouts, tokens, signing key) without an address.
    case needsServing
    case authTokenTwice
    /// A secret file ("auth-token-file", "auth-key") that cannot be read.
    case secretUnreadable(option: String, path: String)
    /// A token file that holds nothing but blanks.
    case tokenFileEmpty(String)
    /// A signing key file that holds under `ServerPlan.minimumSigningKeyBytes` bytes.
    case signingKeyShort(String)
    /// An empty stream or metrics token.
    case emptySecret
    /// A certificate without its key, or a key without its certificate.
    case tlsPairing
    /// A certificate or key file ("tls-cert", "tls-key") that cannot be read.
    case pemUnreadable(option: String, path: String)
    /// A certificate or key file that is not PEM text.
    case notPEM(option: String, path: String)
    /// An OCSP response file ("tls-ocsp") that cannot be read.
    case ocspUnreadable(String)
    /// An OCSP response without the certificate it is for.
    case ocspWithoutCertificate
    /// A connection limit or timeout ("max-clients", "idle-timeout", "header-timeout") outside `range`.
    case serverNumber(option: String, ClosedRange<Int>)

    // The recording.
    /// A recording option ("record-size", "record-codec", "record-bitrate", "record-every",
    /// "record-local-time") without a recording.
    case needsRecording(String)
    case recordingPattern(path: String, RecordingPattern.ParseError)
    case recordingPeriod(RecordingPeriod.ParseError)
    /// A recording split by time whose name has no time in it: every file would be named `path`.
    case recordingNameWithoutTime(path: String)
    /// The name's finest placeholder is coarser than the period: two files would have one name.
    case recordingNamesCollide(path: String, finestSeconds: Int, periodSeconds: Int)
    /// Retention without a recording split by time.
    case retentionWithoutSplit
    case keepShorterThanPeriod(keepSeconds: Int, periodSeconds: Int)

    // File packaging.
    /// Copying with an option that asks for an encoding ("transcode", "size", "fps" …).
    case copyConflict(String)
    case noInputFile
    case clipStartMissing
    case clipEndMissing
    case clipEndTwice
    case clipEndNotAfterStart(from: Date, to: Date)
    /// A clip file without a clip.
    case clipFileWithoutClip(String)
    /// A clip file whose name does not end in .mp4.
    case clipFileName(String)
    /// A clip file with a stream destination ("out" or "publish").
    case clipFileAndStream(String)
    case clipFileEncrypted(String)
    /// A clip with an option that asks for an encoding.
    case clipEncoded(String)
    case clipCuts
    /// A clip of inputs that are not one folder.
    case clipNeedsFolder([String])
    /// A folder given without a clip range.
    case folderWithoutClip(String)
}
