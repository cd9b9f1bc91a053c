import CFFmpeg
import HLSBase
import HLSKit

/// A V4L2 camera read through libavdevice (`--video /dev/video0`), delivering yuv420p frames.
///
/// `start` lists what the device offers, picks a format with `CameraFormatChoice`, and opens
/// it with that format, size and rate; MJPEG and H.264 are decoded and other formats converted.
public final class CameraSource: CaptureSource {
    public struct Configuration: Sendable {
        /// A device node; nil picks the first capture device.
        public var device: String?
        public var width = 1280
        public var height = 720
        public var frameRate = Rational(30, 1)
        /// When the device fails or disappears, wait for it to come back (`.lost`, then `.restored`)
        /// instead of failing.
        public var reconnect = false
        /// What to ask the camera for; nil: raw or MJPEG, as `CameraFormatChoice.choose` prefers. H.264 asked
        /// for here is decoded (`CameraCopySource` copies it).
        public var inputFormat: CameraInputFormat?

        public init() {}
    }

    public let configuration: Configuration
    /// The device opened and the format chosen, once `start` has returned.
    public private(set) var device: V4L2Device?
    public private(set) var choice: CameraFormatChoice?
    private var thread: CaptureThread?

    public init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    public var name: String { device?.path ?? configuration.device ?? "/dev/video*" }

    public var delivers: CaptureKinds { .video }

    /// A dark picture about the size the camera delivered (made even), so the scalers see little change.
    public var standIns: [StandInSource.Content] {
        [.video(width: (choice?.width ?? configuration.width) & ~1, height: (choice?.height ?? configuration.height) & ~1,
                framesPerSecond: configuration.frameRate.wholeFramesPerSecond ?? 30)]
    }

    public func start(handler: @escaping (CaptureEvent) -> Void) throws {
        precondition(thread == nil, "a capture source starts once")
        let thread = CaptureThread(handler: handler)
        let opened = try Self.open(configuration, on: thread)
        self.device = opened.device
        self.choice = opened.choice
        self.thread = thread
        let configuration = configuration
        // The thread keeps its body until it ends: handed over in a box, the device is held only by the
        // loop, which closes it when it fails.
        let handover = Handover(opened)
        thread.start(name: "hlscap v4l2 \(opened.device.path)") { Self.run(handover.take(), configuration, on: thread) }
    }

    public func stop() { thread?.stop() }

    /// The opened device on its way to the reading thread, taken out once.
    private final class Handover: @unchecked Sendable {
        private var opened: Opened?
        init(_ opened: Opened) { self.opened = opened }
        func take() -> Opened? {
            defer { opened = nil }
            return opened
        }
    }

    /// An open device, its format, and the decoder of its pictures.
    private struct Opened {
        let device: V4L2Device
        let choice: CameraFormatChoice
        let input: CaptureInput
        let decoder: PictureDecoder
    }

    private static func open(_ configuration: Configuration, on thread: CaptureThread) throws(CaptureError) -> Opened {
        let device = try openDevice(configuration)
        let asked = configuration.inputFormat.map { [$0] } ?? [.raw, .mjpeg]
        guard let choice = CameraFormatChoice.choose(offers: device.offers, width: configuration.width,
                                                     height: configuration.height, frameRate: configuration.frameRate,
                                                     inputFormats: Set(asked)),
              let inputFormat = choice.pixelFormat.ffmpegInputFormat else {
            let formats = device.formats.map(\.code).joined(separator: ", ")
            let wanted = configuration.inputFormat.map { "no \($0) format" } ?? "no format hlscap can read"
            throw CaptureError(device: device.path, message: "offers \(wanted) (it has: \(formats))")
        }
        let input = try CaptureInput(
            device: device.path, formatName: "video4linux2", url: device.path,
            options: ["video_size": "\(choice.width)x\(choice.height)",
                      "framerate": "\(choice.frameRate.numerator)/\(choice.frameRate.denominator)",
                      "input_format": inputFormat],
            thread: thread)
        let decoder: PictureDecoder
        do {
            decoder = try PictureDecoder(parameters: input.stream.pointee.codecpar)
        } catch {
            throw CaptureError(device: device.path, message: "cannot decode its \(choice.pixelFormat.code) pictures: \(error)")
        }
        return Opened(device: device, choice: choice, input: input, decoder: decoder)
    }

    /// The device configured, or the first capture device; fails naming it when there is none.
    public static func openDevice(_ configuration: Configuration) throws(CaptureError) -> V4L2Device {
        if let path = configuration.device { return try V4L2Device(path: path) }
        guard let first = V4L2Device.captureDevices().first else {
            throw CaptureError(device: "/dev/video*", message: "no V4L2 capture device found; connect a camera",
                               isMissing: true)
        }
        return first
    }

    /// Reads until a stop, the end, or a failure; with `reconnect`, a failure is `.lost`, the device is
    /// closed and opened again until it is back (`.restored`) or the source is stopped.
    private static func run(_ opened: consuming Opened?, _ configuration: Configuration, on thread: CaptureThread) {
        var current: Opened? = consume opened
        while true {
            // Read through `map`, so nothing but `current` holds the device once it failed: closed, it can
            // go away and come back under the same name.
            guard let outcome = current.map({ read($0.input, $0.decoder, frameMicroseconds: $0.choice.frameMicroseconds,
                                                    on: thread) }) else { return }
            let failure: CaptureError
            switch outcome {
            case .stopped:
                return
            case .ended:
                thread.emit(.ended)
                return
            case .failed(let error):
                failure = error
            }
            current = nil
            current = thread.recover(from: failure, reconnect: configuration.reconnect) { () throws(CaptureError) in
                try Self.open(configuration, on: thread)
            }
            guard current != nil else { return }
        }
    }

    private enum ReadOutcome {
        case stopped, ended
        case failed(CaptureError)
    }

    private static func read(_ input: CaptureInput, _ decoder: PictureDecoder, frameMicroseconds: Int64,
                             on thread: CaptureThread) -> ReadOutcome {
        // Each opening of the device starts its own run of stamps.
        var timestamps = CameraTimestamps(frameMicroseconds: frameMicroseconds)
        do throws(CaptureError) {
            while true {
                switch try input.read(stoppingOn: thread) {
                case .stopped:
                    return .stopped
                case .ended:
                    return .ended
                case .packet:
                    let dequeued = MonotonicClock.nowMicroseconds()
                    // A camera's H.264 decodes from its first keyframe, which carries the parameter sets.
                    if decoder.waitsForKeyframe {
                        guard input.packet.isKeyframe else { continue }
                        decoder.waitsForKeyframe = false
                    }
                    let frame: Frame?
                    do {
                        frame = try decoder.decode(input.packet)
                    } catch {
                        throw CaptureError(device: input.device, message: "cannot decode a picture: \(error)")
                    }
                    guard let frame else { continue }
                    frame.pts = timestamps.captureTime(driverMicroseconds: frame.pts,
                                                       dequeuedMicroseconds: dequeued)
                    guard thread.emit(.video(frame)) else { return .stopped }
                }
            }
        } catch {
            return .failed(error)
        }
    }
}
