/// One rung of an adaptive bit-rate ladder: a picture height and the rate to encode it at.
public struct LadderRung: Sendable, Equatable, CustomStringConvertible {
    public var height: Int
    /// Bits per second; nil takes `defaultBitrate(height:codec:)`.
    public var bitrate: Int?
    /// nil takes the stream's video codec.
    public var codec: VideoCodec?
    /// The source's own video (`source` in `--ladder source,480p,360p`): copied when the source can be,
    /// else encoded at the source's size. Its height is the source's, 0 until `resolvingSource` knows it.
    public var isSource: Bool

    public init(height: Int, bitrate: Int? = nil, codec: VideoCodec? = nil) {
        self.height = height
        self.bitrate = bitrate
        self.codec = codec
        isSource = false
    }

    /// The source's own video as the top rung.
    public static var source: LadderRung {
        var rung = LadderRung(height: 0)
        rung.isSource = true
        return rung
    }

    /// The rung's directory and name: `720p` (the source rung too, once its height is known).
    public var name: String { "\(height)p" }

    public var description: String {
        if isSource, height == 0 { return "source" }
        return name + (codec.map { ":\($0.rawValue)" } ?? "") + (bitrate.map { "@\($0 / 1000)k" } ?? "")
    }

    /// H.264 rates of Apple's HLS authoring specification (bit-rate ladder for 30 fps, 16:9):
    /// heights between the listed ones are interpolated by pixel count.
    static let appleBitrates: [(height: Int, bitrate: Int)] = [
        (234, 145_000), (360, 365_000), (432, 1_100_000), (540, 2_000_000), (720, 3_000_000),
        (1080, 6_000_000), (1440, 10_000_000), (2160, 16_800_000),
    ]

    /// HEVC needs about this share of H.264's rate for the same picture (Apple's two ladders).
    static let hevcRateShare = 0.8

    /// The default rate for a rung of this height at 30 fps; above 30 fps, up to half again more;
    /// HEVC rungs 80 % of that.
    public static func defaultBitrate(height: Int, framesPerSecond: Double = 30, codec: VideoCodec = .h264) -> Int {
        let table = appleBitrates
        let rate: Double
        if height <= table[0].height {
            rate = Double(table[0].bitrate) * Double(height * height) / Double(table[0].height * table[0].height)
        } else if let upper = table.firstIndex(where: { $0.height >= height }) {
            let low = table[upper - 1], high = table[upper]
            let pixels = Double(height * height)
            let fraction = (pixels - Double(low.height * low.height))
                / Double(high.height * high.height - low.height * low.height)
            rate = Double(low.bitrate) + fraction * Double(high.bitrate - low.bitrate)
        } else {
            let last = table[table.count - 1]
            rate = Double(last.bitrate) * Double(height * height) / Double(last.height * last.height)
        }
        let frameFactor = min(1.5, max(1, framesPerSecond / 30)) * (codec == .hevc ? hevcRateShare : 1)
        return max(100_000, Int(rate * frameFactor / 5_000) * 5_000)
    }

    /// What to encode this rung at, in `size`: its own codec and rate, else the stream's codec and the
    /// default rate for its height.
    public func renditionSettings(size: OutputSize, framesPerSecond: Double,
                                  streamCodec: VideoCodec) -> VideoRenditionSettings {
        let codec = self.codec ?? streamCodec
        return VideoRenditionSettings(
            size: size,
            bitrate: bitrate ?? Self.defaultBitrate(height: height, framesPerSecond: framesPerSecond, codec: codec),
            name: name, codec: codec)
    }

    /// The rung's picture size for a source of `sourceWidth`×`sourceHeight`: the source's shape,
    /// both sides even.
    public func size(sourceWidth: Int, sourceHeight: Int) -> OutputSize {
        let width = PictureLayout.evenRounded(height * sourceWidth, dividedBy: max(1, sourceHeight))
        return OutputSize(width: max(2, width), height: PictureLayout.evenRounded(height, dividedBy: 1))
    }
}

/// A ladder's rungs, tallest first, and why a list of rungs cannot be one.
public enum Ladder {
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// The rungs sorted tallest first; two rungs of one height (one directory) or a rung taller
    /// than the source (upscaling adds bits, not detail) are refused.
    public static func normalized(_ rungs: [LadderRung], sourceHeight: Int?) throws(Invalid) -> [LadderRung] {
        if rungs.filter({ $0.isSource }).count > 1 { throw Invalid(description: "source is given twice; give it once") }
        // The source's own video is the top rung, whatever its height.
        let sorted = rungs.sorted { $0.isSource != $1.isSource ? $0.isSource : $0.height > $1.height }
        for (first, second) in zip(sorted, sorted.dropFirst()) where first.height == second.height {
            throw Invalid(description: "two rungs are \(first.name); give each height once")
        }
        if let sourceHeight, let tallest = sorted.first, tallest.height > PictureLayout.evenRounded(sourceHeight, dividedBy: 1) {
            throw Invalid(description: "the \(tallest.name) rung is taller than the \(sourceHeight)-line picture; "
                + "keep rungs at or below the source")
        }
        return sorted
    }

    /// The rungs with the source rung's height set to the source's; every other rung must be below it
    /// (a rung as tall as the source would be a second copy of it, worse).
    public static func resolvingSource(_ rungs: [LadderRung], sourceHeight: Int) throws(Invalid) -> [LadderRung] {
        guard rungs.contains(where: { $0.isSource }) else { return rungs }
        var resolved: [LadderRung] = []
        for var rung in rungs {
            if rung.isSource {
                rung.height = sourceHeight
            } else if rung.height >= sourceHeight {
                throw Invalid(description: "the \(rung.name) rung is not below the \(sourceHeight)-line source; "
                    + "give rungs below it beside source")
            }
            resolved.append(rung)
        }
        return resolved
    }
}
