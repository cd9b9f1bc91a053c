import HLSKit

/// What a camera is asked to deliver: its uncompressed pictures, Motion-JPEG (decoded), or H.264 (copied
/// into the stream as it is, or decoded when the stream is encoded).
public enum CameraInputFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    case raw, mjpeg, h264

    /// What a message calls it: "raw", "MJPEG", "H.264".
    public var description: String {
        switch self {
        case .raw: "raw"
        case .mjpeg: "MJPEG"
        case .h264: "H.264"
        }
    }
}

/// A pixel format a V4L2 device offers, by its FourCC.
public struct CameraPixelFormat: Hashable, Sendable, CustomStringConvertible {
    public var fourCC: UInt32
    /// The device's own description, such as "YUYV 4:2:2" or "Motion-JPEG".
    public var name: String
    public var isCompressed: Bool

    public init(fourCC: UInt32, name: String, isCompressed: Bool) {
        self.fourCC = fourCC
        self.name = name
        self.isCompressed = isCompressed
    }

    public init(_ code: String, name: String = "", isCompressed: Bool = false) {
        precondition(code.utf8.count == 4, "a FourCC has four characters")
        let fourCC = code.utf8.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        self.init(fourCC: fourCC, name: name.isEmpty ? code : name, isCompressed: isCompressed)
    }

    /// The four characters, such as "YUYV"; "-BE" follows for a big-endian variant (V4L2 sets the top bit).
    public var code: String {
        let characters = String(decoding: (0..<4).map { UInt8(truncatingIfNeeded: (fourCC & ~Self.bigEndianFlag) >> (8 * $0)) },
                                as: UTF8.self)
        return fourCC & Self.bigEndianFlag == 0 ? characters : characters + "-BE"
    }

    /// The bit `v4l2_fourcc_be` adds to a FourCC.
    static let bigEndianFlag: UInt32 = 1 << 31

    /// The name FFmpeg's video4linux2 device takes as `input_format`; nil for formats hlscap cannot read.
    public var ffmpegInputFormat: String? { Self.ffmpegInputFormats[code] }

    /// Which kind of input it is; nil for formats hlscap cannot read.
    public var inputFormat: CameraInputFormat? {
        switch ffmpegInputFormat {
        case nil: nil
        case "mjpeg": .mjpeg
        case "h264": .h264
        default: .raw
        }
    }

    private static let ffmpegInputFormats: [String: String] = [
        "YUYV": "yuyv422", "UYVY": "uyvy422", "YU12": "yuv420p", "NV12": "nv12", "422P": "yuv422p",
        "RGB3": "rgb24", "BGR3": "bgr24", "GREY": "gray", "MJPG": "mjpeg", "JPEG": "mjpeg", "H264": "h264",
    ]

    public var description: String { code }
}

/// One pixel format at one frame size, with the frame rates the device offers for it.
public struct CameraFormatOffer: Hashable, Sendable {
    public var pixelFormat: CameraPixelFormat
    public var width: Int
    public var height: Int
    /// Frames per second, from the device's frame intervals.
    public var frameRates: [Rational]

    public init(pixelFormat: CameraPixelFormat, width: Int, height: Int, frameRates: [Rational]) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        self.frameRates = frameRates
    }
}

/// The format, size and rate to open a camera with.
public struct CameraFormatChoice: Hashable, Sendable {
    /// One frame at the chosen rate, in microseconds.
    public var frameMicroseconds: Int64 {
        1_000_000 * Int64(frameRate.denominator) / Int64(max(1, frameRate.numerator))
    }

    public var pixelFormat: CameraPixelFormat
    public var width: Int
    public var height: Int
    public var frameRate: Rational

    public init(pixelFormat: CameraPixelFormat, width: Int, height: Int, frameRate: Rational) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        self.frameRate = frameRate
    }

    /// Picks what to ask the camera for, given what it offers and what the user asked for:
    ///
    /// 1. Size: the one asked for if offered; else the largest that fits inside it; else the smallest.
    /// 2. Rate: the largest at or below the one asked for; else the smallest above it.
    /// 3. Format: among those reaching the best rate at that size, an uncompressed one (read
    ///    without decoding) before a compressed one, then the device's order. So MJPEG is chosen
    ///    only when no raw format reaches the size and rate.
    ///
    /// Only offers of the `inputFormats` asked for count: by default raw and MJPEG, so that H.264 is read
    /// only when asked for (`nativeH264`). Nil when nothing usable is left.
    public static func choose(offers: [CameraFormatOffer], width: Int, height: Int, frameRate: Rational,
                              inputFormats: Set<CameraInputFormat> = [.raw, .mjpeg]) -> CameraFormatChoice? {
        let usable = offers.filter { offer in
            offer.pixelFormat.inputFormat.map(inputFormats.contains) == true && !offer.frameRates.isEmpty
        }
        let sizes = Set(usable.map { Size(width: $0.width, height: $0.height) })
        guard let size = chooseSize(sizes, width: width, height: height) else { return nil }
        let candidates = usable.enumerated()
            .filter { $0.element.width == size.width && $0.element.height == size.height }
            .map { (order: $0.offset, offer: $0.element, rate: chooseRate($0.element.frameRates, frameRate)) }
        guard let best = candidates.min(by: { a, b in
            if compare(a.rate, b.rate) != 0 { return isCloser(a.rate, than: b.rate, to: frameRate) }
            if a.offer.pixelFormat.isCompressed != b.offer.pixelFormat.isCompressed { return !a.offer.pixelFormat.isCompressed }
            return a.order < b.order
        }) else { return nil }
        return CameraFormatChoice(pixelFormat: best.offer.pixelFormat, width: size.width, height: size.height,
                                  frameRate: best.rate)
    }

    /// The camera's H.264 at exactly the size and rate asked for: what a stream that asks for no encoding
    /// of its own copies. Nil when the camera offers no H.264 there.
    public static func nativeH264(offers: [CameraFormatOffer], width: Int, height: Int,
                                  frameRate: Rational) -> CameraFormatChoice? {
        guard let choice = choose(offers: offers, width: width, height: height, frameRate: frameRate, inputFormats: [.h264]),
              choice.width == width, choice.height == height, compare(choice.frameRate, frameRate) == 0 else { return nil }
        return choice
    }

    private struct Size: Hashable {
        var width: Int
        var height: Int
        var area: Int { width * height }
    }

    private static func chooseSize(_ sizes: Set<Size>, width: Int, height: Int) -> Size? {
        let wanted = Size(width: width, height: height)
        if sizes.contains(wanted) { return wanted }
        let fitting = sizes.filter { $0.width <= width && $0.height <= height }
        // Ties in area go to the wider size, so the choice never depends on set order.
        let byArea: (Size, Size) -> Bool = { ($0.area, $0.width) < ($1.area, $1.width) }
        return fitting.max(by: byArea) ?? sizes.min(by: byArea)
    }

    private static func chooseRate(_ rates: [Rational], _ wanted: Rational) -> Rational {
        rates.filter { compare($0, wanted) <= 0 }.max { compare($0, $1) < 0 }
            ?? rates.min { compare($0, $1) < 0 }!
    }

    /// Whether `rate` is a better match for `wanted` than `other`: at or below it beats above
    /// it; below, faster is better; above, slower is better.
    private static func isCloser(_ rate: Rational, than other: Rational, to wanted: Rational) -> Bool {
        let rateFits = compare(rate, wanted) <= 0, otherFits = compare(other, wanted) <= 0
        if rateFits != otherFits { return rateFits }
        return rateFits ? compare(rate, other) > 0 : compare(rate, other) < 0
    }

    /// -1, 0 or 1 as `a` is below, equal to or above `b`, exactly (positive denominators).
    static func compare(_ a: Rational, _ b: Rational) -> Int {
        let left = Int64(a.numerator) * Int64(b.denominator)
        let right = Int64(b.numerator) * Int64(a.denominator)
        return left < right ? -1 : (left == right ? 0 : 1)
    }
}
