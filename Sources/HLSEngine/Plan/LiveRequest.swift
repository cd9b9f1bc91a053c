import Foundation
import HLSKit
import HLSMedia
import HLSOutput

/// What the user asked of a live stream, option by option, each value read but nothing decided: nil is
/// "not given", and the plan (`LivePlan`) decides the defaults and whether the options go together.
public struct LiveRequest: Sendable {
    // Inputs.
    /// nil: the first V4L2 camera.
    public var video: CaptureInputs.Video?
    /// nil: the sound of the video's URL or file, else the default ALSA capture device.
    public var audio: CaptureInputs.Audio?
    /// A URL to wait for a publisher on (rtmp://ADDR:PORT/APP/KEY or srt://ADDR:PORT).
    public var listen: String?
    public var realtime = true
    public var loop = false
    public var reconnect = false
    public var rtspTransport: String?
    /// A PEM file of the authorities https:// inputs are verified against.
    public var authorityFile: String?
    public var stallTimeoutSeconds: Double?
    public var inputFormat: CameraInputFormat?
    /// Decode and encode a URL's, file's or camera's video even when it could be copied.
    public var transcode = false

    // Encoding.
    public var size: OutputSize?
    public var framesPerSecond: Int?
    public var videoBitrate: Int?
    public var videoCodec: VideoCodec?
    public var audioBitrate: Int?
    public var preset: String?
    /// An encoder's name (x264, x265, software, vaapi, v4l2m2m, nvenc) or auto.
    public var encoder: String?
    public var ladder: [LadderRung]?
    /// A strftime format, or "clock".
    public var overlay: String?
    public var overlayLocalTime = false
    public var overlayFont: String?

    // The recording.
    /// Its path, with strftime placeholders when split by time.
    public var record: String?
    public var recordSize: OutputSize?
    public var recordCodec: VideoCodec?
    public var recordBitrate: Int?
    /// A period such as 1h, as written.
    public var recordEvery: String?
    public var recordLocalTime = false
    public var retention = RecordingRetention()

    // The stream.
    public var segmentMilliseconds: Int64?
    public var window: Int?
    public var dvrSeconds: Int?
    public var durationMilliseconds: Int64?
    public var resume = false
    public var overwrite = false
    public var outputDirectory: String?
    public var publishing = false
    public var encryption = EncryptionRequest()
    public var serving = false
    public var lowLatency = false
    public var partMilliseconds: Int64?

    public init() {}

    /// What this request makes; throws the first rule it breaks.
    public func plan() throws(PlanError) -> LivePlan {
        try LivePlan(self)
    }
}
