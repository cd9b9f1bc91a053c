import CV4L2
import Foundation
import HLSKit

/// A V4L2 video capture device and everything it can deliver, read with V4L2's enumeration
/// ioctls (VIDIOC_QUERYCAP, VIDIOC_ENUM_FMT, VIDIOC_ENUM_FRAMESIZES, VIDIOC_ENUM_FRAMEINTERVALS).
public struct V4L2Device: Sendable {
    public var path: String
    /// The kernel driver, such as "uvcvideo" or "vivid".
    public var driver: String
    /// The device's name, such as "HD Pro Webcam C920".
    public var card: String
    public var busInfo: String
    /// Pixel formats in the device's order of preference.
    public var formats: [CameraPixelFormat]
    public var offers: [CameraFormatOffer]

    /// Sizes and rates also listed for devices that offer ranges rather than a list.
    static let commonSizes = [(640, 480), (1280, 720), (1920, 1080)]
    static let commonFrameRates: [Int32] = [15, 25, 30, 60]

    /// Every video capture device among `/dev/video*`, in numeric order. Nodes that are not
    /// capture devices (metadata nodes, encoders, output devices) or cannot be opened are left out.
    public static func captureDevices(directory: String = "/dev") -> [V4L2Device] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { name -> (Int, String)? in
            guard name.hasPrefix("video"), let number = Int(name.dropFirst("video".count)) else { return nil }
            return (number, directory + "/" + name)
        }
        .sorted { $0.0 < $1.0 }
        .compactMap { try? V4L2Device(path: $0.1) }
    }

    /// A device as described elsewhere (a listing to show).
    public init(path: String, driver: String, card: String, busInfo: String, formats: [CameraPixelFormat],
                offers: [CameraFormatOffer]) {
        self.path = path
        self.driver = driver
        self.card = card
        self.busInfo = busInfo
        self.formats = formats
        self.offers = offers
    }

    /// Reads what the device at `path` offers; fails if it is not a video capture device.
    public init(path: String) throws(CaptureError) {
        let descriptor = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CaptureError(device: path, message: "cannot open: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var capability = v4l2_capability()
        guard Self.ioctl({ hlscap_v4l2_querycap(descriptor, &capability) }) else {
            throw CaptureError(device: path, message: "not a V4L2 device (\(String(cString: strerror(errno))))")
        }
        // device_caps describes this node; capabilities the whole physical device.
        let caps = capability.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0
            ? capability.device_caps : capability.capabilities
        guard caps & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 else {
            throw CaptureError(device: path, message: "not a video capture device")
        }
        self.path = path
        driver = Self.string(capability.driver)
        card = Self.string(capability.card)
        busInfo = Self.string(capability.bus_info)
        formats = Self.pixelFormats(descriptor)
        offers = formats.flatMap { format in
            Self.frameSizes(descriptor, format.fourCC).map { size in
                CameraFormatOffer(pixelFormat: format, width: size.0, height: size.1,
                                  frameRates: Self.frameRates(descriptor, format.fourCC, size))
            }
        }
    }

    private static func pixelFormats(_ descriptor: Int32) -> [CameraPixelFormat] {
        var formats: [CameraPixelFormat] = []
        var description = v4l2_fmtdesc()
        description.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        while ioctl({ hlscap_v4l2_enum_fmt(descriptor, &description) }) {
            formats.append(CameraPixelFormat(fourCC: description.pixelformat, name: string(description.description),
                                             isCompressed: description.flags & UInt32(V4L2_FMT_FLAG_COMPRESSED) != 0))
            description.index += 1
        }
        return formats
    }

    private static func frameSizes(_ descriptor: Int32, _ fourCC: UInt32) -> [(Int, Int)] {
        var sizes: [(Int, Int)] = []
        var size = v4l2_frmsizeenum()
        size.pixel_format = fourCC
        while ioctl({ hlscap_v4l2_enum_framesizes(descriptor, &size) }) {
            if size.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                sizes.append((Int(size.discrete.width), Int(size.discrete.height)))
                size.index += 1
                continue
            }
            // A range is the only answer: list its ends and the common sizes inside it.
            let range = size.stepwise
            let stepWidth = max(1, Int(range.step_width)), stepHeight = max(1, Int(range.step_height))
            let inside = commonSizes.filter { width, height in
                (Int(range.min_width)...Int(range.max_width)).contains(width)
                    && (Int(range.min_height)...Int(range.max_height)).contains(height)
                    && (width - Int(range.min_width)) % stepWidth == 0 && (height - Int(range.min_height)) % stepHeight == 0
            }
            sizes = [(Int(range.min_width), Int(range.min_height))] + inside
                + [(Int(range.max_width), Int(range.max_height))]
            break
        }
        return sizes
    }

    private static func frameRates(_ descriptor: Int32, _ fourCC: UInt32, _ size: (Int, Int)) -> [Rational] {
        var rates: [Rational] = []
        var interval = v4l2_frmivalenum()
        interval.pixel_format = fourCC
        interval.width = UInt32(size.0)
        interval.height = UInt32(size.1)
        while ioctl({ hlscap_v4l2_enum_frameintervals(descriptor, &interval) }) {
            if interval.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue {
                // A frame interval of n/d seconds is d/n frames per second.
                rates.append(Rational(Int32(interval.discrete.denominator), Int32(interval.discrete.numerator)))
                interval.index += 1
                continue
            }
            let range = interval.stepwise
            let slowest = Rational(Int32(range.max.denominator), Int32(range.max.numerator))
            let fastest = Rational(Int32(range.min.denominator), Int32(range.min.numerator))
            let inside = commonFrameRates.map { Rational($0, 1) }.filter {
                CameraFormatChoice.compare($0, slowest) > 0 && CameraFormatChoice.compare($0, fastest) < 0
            }
            rates = [slowest] + inside + [fastest]
            break
        }
        return rates.filter { $0.numerator > 0 && $0.denominator > 0 }
    }

    /// Runs an ioctl wrapper, retrying when a signal interrupts it; false when it fails
    /// (EINVAL ends every enumeration).
    private static func ioctl(_ call: () -> Int32) -> Bool {
        while true {
            if call() >= 0 { return true }
            if errno != EINTR { return false }
        }
    }

    /// A NUL-terminated fixed-size C string field.
    private static func string<T>(_ field: T) -> String {
        withUnsafeBytes(of: field) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
