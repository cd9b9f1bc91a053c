import CFFmpeg
import HLSKit

/// Converts pictures of any size and pixel format to `width`×`height` yuv420p, the encoder's
/// input (libswscale). With `keepsAspectRatio` the picture keeps its display shape and black
/// bars fill the rest (letterbox or pillarbox); without, it is stretched.
public final class Scaler {
    public let width: Int
    public let height: Int
    public let keepsAspectRatio: Bool

    private var context: OpaquePointer?
    /// The last picture returned, used again once nobody else holds it: a frame's worth of memory
    /// allocated once instead of per frame (a per-frame allocation fragments the heap of every
    /// thread that encodes).
    private var spare: Frame?

    /// Black in limited-range YUV.
    static let blackLuma: UInt8 = 16
    static let neutralChroma: UInt8 = 128
    private static let planeCount = 3
    /// A good trade of sharpness against speed for downscaling camera pictures.
    private static let scalingAlgorithm = SWS_BICUBIC

    public init(width: Int, height: Int, keepsAspectRatio: Bool = true) {
        self.width = width
        self.height = height
        self.keepsAspectRatio = keepsAspectRatio
    }

    deinit { sws_freeContext(context) }

    /// A new yuv420p frame with `frame`'s picture; `pts` and time base are kept.
    public func scale(_ frame: Frame) throws -> Frame {
        guard frame.width > 0, frame.height > 0, frame.pixelFormat != AV_PIX_FMT_NONE else {
            throw CodecError.unexpectedFrame("a video frame without a picture size or pixel format")
        }
        let layout = layout(for: frame)
        context = sws_getCachedContext(context, Int32(frame.width), Int32(frame.height), frame.pixelFormat,
                                       Int32(layout.width), Int32(layout.height), AV_PIX_FMT_YUV420P,
                                       Self.scalingAlgorithm, nil, nil, nil)
        guard let context else {
            throw CodecError.unexpectedFrame("libswscale cannot convert \(frame.width)x\(frame.height) "
                + "format \(frame.pixelFormat.rawValue) to \(layout.width)x\(layout.height) yuv420p")
        }
        let output = try reusableOutput(timeBase: frame.timeBase)
        output.pts = frame.pts
        if layout.width != width || layout.height != height { Self.fillBlack(output) }

        var destinations: [UnsafeMutablePointer<UInt8>?] = []
        var destinationStrides: [Int32] = []
        for index in 0..<Self.planeCount {
            // Chroma planes are half the size, and the layout's offsets are even.
            let shift = index == 0 ? 0 : 1
            let plane = output.plane(index)
            destinations.append(plane.base + (layout.y >> shift) * plane.bytesPerRow + (layout.x >> shift))
            destinationStrides.append(Int32(plane.bytesPerRow))
        }
        // Copies of the plane pointers and strides, read without an inout access: the rungs of a
        // ladder scale one captured frame on several threads at once.
        let source = frame.pointer.pointee
        let scaled = withUnsafePointer(to: source.data) { data in
            withUnsafePointer(to: source.linesize) { lineSizes in
                data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: Int(AV_NUM_DATA_POINTERS)) { planes in
                    lineSizes.withMemoryRebound(to: Int32.self, capacity: Int(AV_NUM_DATA_POINTERS)) { strides in
                        sws_scale(context, planes, strides, 0, Int32(frame.height), destinations, destinationStrides)
                    }
                }
            }
        }
        try FFmpegError.check(scaled)
        return output
    }

    /// The spare picture when only this scaler holds it and its buffers are not shared (an encoder
    /// keeps no reference once it has copied a picture in), else a new one that becomes the spare.
    private func reusableOutput(timeBase: Rational) throws -> Frame {
        if spare != nil, isKnownUniquelyReferenced(&spare!), av_frame_is_writable(spare!.pointer) != 0 {
            spare!.timeBase = timeBase
            return spare!
        }
        let output = try Frame.yuv420p(width: width, height: height, timeBase: timeBase)
        spare = output
        return output
    }

    private func layout(for frame: Frame) -> PictureLayout {
        guard keepsAspectRatio else { return PictureLayout(x: 0, y: 0, width: width, height: height) }
        let aspect = frame.pointer.pointee.sample_aspect_ratio
        // 0/1 means the pixels' shape is unknown: square.
        let pixelAspect = aspect.num > 0 && aspect.den > 0 ? (Int(aspect.num), Int(aspect.den)) : (1, 1)
        return PictureLayout.fitting(sourceWidth: frame.width, sourceHeight: frame.height, pixelAspect: pixelAspect,
                                     outputWidth: width, outputHeight: height)
    }

    private static func fillBlack(_ frame: Frame) {
        for index in 0..<planeCount {
            let plane = frame.plane(index)
            let rows = index == 0 ? frame.height : (frame.height + 1) / 2
            plane.base.update(repeating: index == 0 ? blackLuma : neutralChroma, count: rows * plane.bytesPerRow)
        }
    }
}
