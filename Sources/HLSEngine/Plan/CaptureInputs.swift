import Glibc
import HLSKit
import HLSMedia

/// `--video` and `--audio`: what the user names, and the capture sources that read it. The one place
/// that knows the kinds of input; the engine takes whatever sources it is given.
public struct CaptureInputs: Sendable {
    public enum Video: Equatable, Sendable {
        /// `media`: a URL or a file, read through libavformat (`MediaSource`).
        case firstCamera, device(String), media(String), test, none

        public init(_ text: String) {
            switch text {
            case "test": self = .test
            case "none": self = .none
            default: self = CaptureInputs.isMedia(text) ? .media(text) : .device(text)
            }
        }

        public var media: String? {
            if case .media(let location) = self { return location }
            return nil
        }
    }

    public enum Audio: Equatable, Sendable {
        /// `test`, or `test:+5000ppm`: the tone as a microphone whose sample clock runs that fast.
        /// `media`: a URL or a file; the video's own input when `--video` names one and `--audio` is not given.
        case device(String), media(String), test(clockPartsPerMillion: Int), none

        public init(_ text: String) {
            switch text {
            case "test": self = .test(clockPartsPerMillion: 0)
            case "none": self = .none
            case _ where CaptureInputs.isMedia(text): self = .media(text)
            default:
                if text.hasPrefix("test:"), text.hasSuffix("ppm"),
                   let partsPerMillion = Int(text.dropFirst("test:".count).dropLast("ppm".count)) {
                    self = .test(clockPartsPerMillion: partsPerMillion)
                } else {
                    self = .device(text)
                }
            }
        }

        public var isTest: Bool {
            if case .test = self { return true }
            return false
        }
    }

    /// A URL (`rtsp://…`) or a regular file, as opposed to a device node or an ALSA name.
    public static func isMedia(_ text: String) -> Bool {
        if MediaSource.Configuration.isURL(text) { return true }
        var status = stat()
        return stat(text, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
    }

    public var video = Video.firstCamera
    public var audio = Audio.device("default")
    /// With a URL or a file: start a file again at its end.
    public var loop = false
    /// `--rtsp-transport`.
    public var rtspTransport = "tcp"
    /// `--ca-file`: whom an https input's certificate must be signed by.
    public var trust = CertificateTrust()
    /// `--stall-timeout`: how long a URL may deliver nothing.
    public var stallTimeoutSeconds = 10.0
    /// A URL's or file's H.264/HEVC and AAC handed on as they are (not `--transcode`, nothing to encode).
    public var copy = false
    /// A camera's own H.264 may be handed on as it is: nothing asks for an encoding (`--size` and `--fps`
    /// choose the camera's mode instead).
    public var cameraCopy = false
    /// `--input-format`: what to ask the camera for; nil: H.264 when it fits, else raw or MJPEG.
    public var inputFormat: CameraInputFormat?
    public var size = OutputSize(width: 1280, height: 720)
    public var framesPerSecond = 30
    /// With the test source: as fast as it encodes instead of in real time.
    public var realtime = true
    /// Wait for a camera or microphone that fails or goes away, a stand-in keeping its track flowing.
    public var reconnect = false
    /// With the test source or a file out of real time: its stream time, after which it ends.
    public var durationMilliseconds: Int64?
    /// `--listen`: the URL waits for a publisher.
    public var listen: MediaSource.Configuration.Listen?

    public init() {}

    /// The URL or file the audio is read from, when it is one.
    public var audioMedia: String? {
        if case .media(let location) = audio { return location }
        return nil
    }

    /// Whether `--video` names a V4L2 camera (the first one, or a device node).
    public var videoIsCamera: Bool {
        switch video {
        case .firstCamera, .device: true
        case .media, .test, .none: false
        }
    }

    /// A listener at `url` takes the publisher: libavformat reads it from `internalURL`, and the sound
    /// follows when it was to come from the same URL.
    public mutating func listen(at url: String, through internalURL: String, _ listen: MediaSource.Configuration.Listen) {
        self.listen = listen
        let follows = audio == .media(url)
        video = .media(internalURL)
        if follows { audio = .media(internalURL) }
    }

    /// The refusal of a camera that offers no `asked` format among its `formats` (each one's code, and
    /// the kind hlscap reads it as, nil for one it does not read); nil when it offers one.
    public static func missingFormat(_ asked: CameraInputFormat, device: String,
                                     formats: [(code: String, inputFormat: CameraInputFormat?)]) -> PlanError? {
        guard !formats.contains(where: { $0.inputFormat == asked }) else { return nil }
        // What it offers that hlscap reads, by kind; the formats it cannot read only counted (vivid has 80).
        let readable = formats.filter { $0.inputFormat != nil }
        return .cameraFormatMissing(device: device, asked: asked, readable: readable.map(\.code),
                                    unreadable: formats.count - readable.count,
                                    offered: CameraInputFormat.allCases.filter { format in
                                        readable.contains { $0.inputFormat == format }
                                    })
    }

    /// The sources to capture: the test source for whatever is `test` (one source, so its picture and
    /// sound share a clock), then the camera, then the microphone.
    public func makeSources() throws -> [any CaptureSource] {
        var sources: [any CaptureSource] = []
        if video == .test || audio.isTest {
            var test = TestSource.Configuration()
            test.width = size.width
            test.height = size.height
            test.framesPerSecond = framesPerSecond
            test.video = video == .test
            test.audio = audio.isTest
            if case .test(let partsPerMillion) = audio { test.audioClockPartsPerMillion = partsPerMillion }
            test.realtime = realtime
            if !realtime, let durationMilliseconds { test.durationMicroseconds = durationMilliseconds * 1000 }
            do {
                sources.append(try TestSource(test))
            } catch let error as CaptureError {
                throw error
            } catch {
                throw CaptureError(device: TestSource.deviceName, message: "\(error)")
            }
        }
        if let location = video.media {
            sources.append(try MediaSource(media(location, video: true, audio: audio == .media(location))))
        }
        if case .media(let location) = audio, location != video.media {
            sources.append(try MediaSource(media(location, video: false, audio: true)))
        }
        switch video {
        case .media:
            break
        case .firstCamera, .device:
            var camera = CameraSource.Configuration()
            if case .device(let path) = video { camera.device = path }
            camera.width = size.width
            camera.height = size.height
            camera.frameRate = Rational(Int32(framesPerSecond), 1)
            camera.reconnect = reconnect
            camera.inputFormat = inputFormat
            sources.append(try cameraSource(camera))
        case .test, .none:
            break
        }
        if case .device(let name) = audio {
            var microphone = MicrophoneSource.Configuration()
            microphone.device = name
            microphone.reconnect = reconnect
            sources.append(MicrophoneSource(microphone))
        }
        return sources
    }

    /// The camera's own H.264 copied when it fits: asked for with `--input-format h264`, or offered at the
    /// size and rate asked for without `--input-format`, and nothing asks for an encoding. Otherwise its
    /// pictures are read (decoded) for the encoder. A camera that lacks the format asked for is refused.
    private func cameraSource(_ configuration: CameraSource.Configuration) throws -> any CaptureSource {
        guard inputFormat != nil || cameraCopy else { return CameraSource(configuration) }
        // Without a device at all, the camera source says so when it starts, as it always has.
        guard configuration.device != nil || !V4L2Device.captureDevices().isEmpty else { return CameraSource(configuration) }
        let device = try CameraSource.openDevice(configuration)
        var configuration = configuration
        configuration.device = device.path
        if let inputFormat, let refusal = Self.missingFormat(inputFormat, device: device.path,
                                                              formats: device.formats.map { ($0.code, $0.inputFormat) }) {
            throw refusal
        }
        let copies = switch inputFormat {
        case .h264: cameraCopy
        case nil: cameraCopy && CameraFormatChoice.nativeH264(
            offers: device.offers, width: configuration.width, height: configuration.height,
            frameRate: configuration.frameRate) != nil
        case .raw, .mjpeg: false
        }
        return copies ? try CameraCopySource(configuration) : CameraSource(configuration)
    }

    private func media(_ location: String, video: Bool, audio: Bool) -> MediaSource.Configuration {
        var configuration = MediaSource.Configuration(location: location)
        configuration.video = video
        configuration.audio = audio
        configuration.realtime = realtime
        configuration.loop = loop
        configuration.rtspTransport = rtspTransport
        configuration.stallTimeoutSeconds = stallTimeoutSeconds
        configuration.trust = trust
        configuration.copy = copy && !reconnect
        configuration.reconnect = reconnect && configuration.isURL
        configuration.listen = listen
        if !realtime, let durationMilliseconds { configuration.durationMicroseconds = durationMilliseconds * 1000 }
        return configuration
    }
}
