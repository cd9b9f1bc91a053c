/// The picture size to encode, from what the user asked for and what the input is.
public struct OutputSize: Sendable, Equatable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    public var description: String { "\(width)x\(height)" }

    /// The longest side H.264 levels allow hlscap to encode.
    public static let maxSide = 8192

    public struct ResolveError: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// Resolves `requested` — "WxH", "Wx" or "xH" (the other side keeping the input's shape),
    /// or nil for the input's size — against an input of `inputWidth`×`inputHeight` that is
    /// displayed rotated by `rotationDegrees` (90 and 270 swap the sides). Sides are rounded
    /// to even numbers, as 4:2:0 needs.
    public static func resolve(requested: String?, inputWidth: Int, inputHeight: Int,
                               rotationDegrees: Int = 0) throws(ResolveError) -> OutputSize {
        let swapsSides = rotationDegrees % 180 != 0
        let displayWidth = swapsSides ? inputHeight : inputWidth
        let displayHeight = swapsSides ? inputWidth : inputHeight
        guard displayWidth > 0, displayHeight > 0 else {
            throw ResolveError(description: "the input has no picture size")
        }
        let width: Int
        let height: Int
        switch try parse(requested) {
        case (nil, nil):
            width = PictureLayout.evenRounded(displayWidth, dividedBy: 1)
            height = PictureLayout.evenRounded(displayHeight, dividedBy: 1)
        case (let requestedWidth?, nil):
            width = PictureLayout.evenRounded(requestedWidth, dividedBy: 1)
            height = PictureLayout.evenRounded(requestedWidth * displayHeight, dividedBy: displayWidth)
        case (nil, let requestedHeight?):
            width = PictureLayout.evenRounded(requestedHeight * displayWidth, dividedBy: displayHeight)
            height = PictureLayout.evenRounded(requestedHeight, dividedBy: 1)
        case (let requestedWidth?, let requestedHeight?):
            width = PictureLayout.evenRounded(requestedWidth, dividedBy: 1)
            height = PictureLayout.evenRounded(requestedHeight, dividedBy: 1)
        }
        guard width <= maxSide, height <= maxSide else {
            throw ResolveError(description: "\(width)x\(height) is larger than \(maxSide) pixels a side")
        }
        return OutputSize(width: width, height: height)
    }

    private static func parse(_ requested: String?) throws(ResolveError) -> (Int?, Int?) {
        guard let requested else { return (nil, nil) }
        let sides = requested.split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
        guard sides.count == 2, !(sides[0].isEmpty && sides[1].isEmpty) else {
            throw ResolveError(description: "size '\(requested)' is not WxH, Wx or xH")
        }
        func side(_ text: Substring) throws(ResolveError) -> Int? {
            if text.isEmpty { return nil }
            guard let value = Int(text), value > 0 else {
                throw ResolveError(description: "size '\(requested)' has a side that is not a positive number")
            }
            // Checked here too, so that the products computed from it cannot overflow.
            guard value <= maxSide else {
                throw ResolveError(description: "size '\(requested)' is larger than \(maxSide) pixels a side")
            }
            return value
        }
        return (try side(sides[0]), try side(sides[1]))
    }
}
