/// Where a picture goes inside an output frame: the whole frame when stretched, or the
/// largest centred rectangle of the source's shape with black bars around it.
public struct PictureLayout: Sendable, Equatable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The largest rectangle inside `outputWidth`×`outputHeight` with the display shape of a
    /// `sourceWidth`×`sourceHeight` picture whose pixels are `pixelAspect` wide (width:height),
    /// centred. Sizes and offsets are even, so that 4:2:0 chroma lines up with the bars.
    public static func fitting(sourceWidth: Int, sourceHeight: Int, pixelAspect: (Int, Int) = (1, 1),
                               outputWidth: Int, outputHeight: Int) -> PictureLayout {
        let displayWidth = sourceWidth * pixelAspect.0
        let displayHeight = sourceHeight * pixelAspect.1
        var width = outputWidth
        var height = outputHeight
        if displayWidth * outputHeight > displayHeight * outputWidth {
            // Wider than the output: full width, bars above and below.
            height = min(outputHeight, evenRounded(outputWidth * displayHeight, dividedBy: displayWidth))
        } else if displayWidth * outputHeight < displayHeight * outputWidth {
            // Narrower: full height, bars left and right.
            width = min(outputWidth, evenRounded(outputHeight * displayWidth, dividedBy: displayHeight))
        }
        return PictureLayout(x: evenFloor((outputWidth - width) / 2), y: evenFloor((outputHeight - height) / 2),
                             width: width, height: height)
    }

    /// `value / divisor` rounded to the nearest even number, at least 2.
    static func evenRounded(_ value: Int, dividedBy divisor: Int) -> Int {
        max(2, (value + divisor) / (2 * divisor) * 2)
    }

    private static func evenFloor(_ value: Int) -> Int { value / 2 * 2 }
}
