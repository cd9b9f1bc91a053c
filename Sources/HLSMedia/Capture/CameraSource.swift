import CFFmpeg

/// A V4L2 camera read through libavdevice (`--video /dev/video0`), delivering yuv420p frames.
///
/// `start` lists what the device offers, picks a format with `CameraFormatChoice`, and opens
/// it with that format, size and rate; MJPEG is decoded and other formats converted.
public final class CameraSource: CaptureSource {
    public struct Configuration: Sendable {
        /// A device node; nil picks the first capture device.
        public var device: String?
        public var width = 1280
        public var height = 720
        public var frameRate = Rational(30, 1)

        public init() {}
    }

    /// Packet times further than this from the monotonic clock's present are not on it.
    static let clockToleranceMicroseconds: Int64 = 10_000_000

    public let configuration: Configuration
    /// The device opened and the format chosen, once `start` has returned.
    public private(set) var device: V4L2Device?
    public private(set) var choice: CameraFormatChoice?
    private var thread: CaptureThread?

    public init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    public func start(handler: @escaping (CaptureEvent) -> Void) throws {
        precondition(thread == nil, "a capture source starts once")
        let device = try openDevice()
        guard let choice = CameraFormatChoice.choose(offers: device.offers, width: configuration.width,
                                                     height: configuration.height, frameRate: configuration.frameRate),
              let inputFormat = choice.pixelFormat.ffmpegInputFormat else {
            let formats = device.formats.map(\.code).joined(separator: ", ")
            throw CaptureError(device: device.path, message: "offers no format hlscap can read (it has: \(formats))")
        }
        let thread = CaptureThread(handler: handler)
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
        self.device = device
        self.choice = choice
        self.thread = thread
        thread.start(name: "hlscap v4l2 \(device.path)") { Self.run(input, decoder, on: thread) }
    }

    public func stop() { thread?.stop() }

    private func openDevice() throws -> V4L2Device {
        if let path = configuration.device { return try V4L2Device(path: path) }
        guard let first = V4L2Device.captureDevices().first else {
            throw CaptureError(device: "/dev/video*", message: "no V4L2 capture device found; connect a camera or give --video test")
        }
        return first
    }

    private static func run(_ input: CaptureInput, _ decoder: PictureDecoder, on thread: CaptureThread) {
        do throws(CaptureError) {
            while true {
                switch try input.read(stoppingOn: thread) {
                case .stopped:
                    return
                case .ended:
                    thread.emit(.ended)
                    return
                case .packet:
                    let frame: Frame?
                    do {
                        frame = try decoder.decode(input.packet)
                    } catch {
                        throw CaptureError(device: input.device, message: "cannot decode a picture: \(error)")
                    }
                    guard let frame else { continue }
                    frame.pts = monotonicTime(ofDeviceTime: frame.pts, now: MonotonicClock.nowMicroseconds())
                    guard thread.emit(.video(frame)) else { return }
                }
            }
        } catch {
            thread.emit(.failed(error))
        }
    }

    /// The capture time of a frame on the monotonic clock. FFmpeg's video4linux2 device passes
    /// the driver's buffer timestamps through, in microseconds; nearly every driver takes them
    /// from CLOCK_MONOTONIC. A driver whose stamps are on another clock (or missing) gets the
    /// time the frame was read instead.
    static func monotonicTime(ofDeviceTime deviceMicroseconds: Int64?, now: Int64) -> Int64 {
        guard let deviceMicroseconds, abs(deviceMicroseconds - now) <= clockToleranceMicroseconds else { return now }
        return deviceMicroseconds
    }
}
