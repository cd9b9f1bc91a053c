import CFFmpeg

/// Turns yuv420p pictures by quarter turns, for inputs whose display matrix says to show
/// them rotated: the encoded stream then needs no matrix, which not every player honours.
public enum Rotation {
    /// A new frame with `frame`'s picture turned clockwise by `clockwiseDegrees` (0, 90, 180
    /// or 270); `pts` and time base are kept. 0 returns `frame` itself.
    public static func rotate(_ frame: Frame, clockwiseDegrees: Int) throws -> Frame {
        guard [0, 90, 180, 270].contains(clockwiseDegrees) else {
            throw CodecError.unexpectedFrame("rotation by \(clockwiseDegrees)°; only quarter turns are supported")
        }
        guard frame.pixelFormat == AV_PIX_FMT_YUV420P else {
            throw CodecError.unexpectedFrame("rotation takes yuv420p, not format \(frame.pixelFormat.rawValue)")
        }
        if clockwiseDegrees == 0 { return frame }
        let swapsSides = clockwiseDegrees != 180
        let output = try Frame.yuv420p(width: swapsSides ? frame.height : frame.width,
                                       height: swapsSides ? frame.width : frame.height, timeBase: frame.timeBase)
        output.pts = frame.pts
        let chromaWidth = (frame.width + 1) / 2
        let chromaHeight = (frame.height + 1) / 2
        for index in 0..<3 {
            let isLuma = index == 0
            rotatePlane(from: frame.plane(index), to: output.plane(index),
                        width: isLuma ? frame.width : chromaWidth, height: isLuma ? frame.height : chromaHeight,
                        clockwiseDegrees: clockwiseDegrees)
        }
        return output
    }

    /// Copies a `width`×`height` plane of bytes into the rotated destination plane.
    private static func rotatePlane(
        from source: (base: UnsafeMutablePointer<UInt8>, bytesPerRow: Int),
        to destination: (base: UnsafeMutablePointer<UInt8>, bytesPerRow: Int),
        width: Int, height: Int, clockwiseDegrees: Int
    ) {
        // Walk the source row by row (sequential reads); each source pixel (x, y) lands at:
        //   90°: (height-1-y, x)   180°: (width-1-x, height-1-y)   270°: (y, width-1-x)
        for y in 0..<height {
            let sourceRow = source.base + y * source.bytesPerRow
            switch clockwiseDegrees {
            case 90:
                var target = destination.base + (height - 1 - y)
                for x in 0..<width {
                    target.pointee = sourceRow[x]
                    target += destination.bytesPerRow
                }
            case 180:
                let targetRow = destination.base + (height - 1 - y) * destination.bytesPerRow
                for x in 0..<width { targetRow[width - 1 - x] = sourceRow[x] }
            default:
                var target = destination.base + (width - 1) * destination.bytesPerRow + y
                for x in 0..<width {
                    target.pointee = sourceRow[x]
                    target -= destination.bytesPerRow
                }
            }
        }
    }
}
