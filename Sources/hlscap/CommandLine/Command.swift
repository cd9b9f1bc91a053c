import HLSKit
import HLSMedia

/// A subcommand: parsed from its words, validated, then run.
protocol Command {
    static var name: String { get }
    static var summary: String { get }
    static var help: String { get }

    init(arguments: inout ArgumentList) throws
    func run() throws
}

enum Parse {
    /// Seconds as written on the command line ("2", "1.5") to whole milliseconds, without floating point.
    static func milliseconds(_ text: String, option: String) throws -> Int64 {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let whole = Int64(parts[0].isEmpty ? "0" : parts[0]),
              parts.count == 1 || (parts[1].count <= 3 && parts[1].allSatisfy(\.isNumber)),
              whole >= 0, whole < 1_000_000 else {
            throw CommandError.usage("\(option) takes seconds, like 2 or 1.5 (got \"\(text)\")")
        }
        let fraction = parts.count == 2 ? String(parts[1]).padding(toLength: 3, withPad: "0", startingAt: 0) : "000"
        return whole * 1000 + Int64(fraction)!
    }

    /// "500M", "50G", "2T" (powers of 1,024), or bytes; more than zero.
    static func byteCount(_ text: String, option: String) throws -> Int64 {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        let unit = text.last.flatMap { units[Character($0.uppercased())] }
        guard let number = Int64(unit == nil ? text : String(text.dropLast())), number > 0,
              number <= Int64.max / (unit ?? 1) / 2 else {
            throw CommandError.usage("\(option) takes a size such as 500M, 50G or 2T (got \"\(text)\")")
        }
        return number * (unit ?? 1)
    }

    /// "90s", "30m", "12h", "7d", or seconds; more than zero and at most ten years.
    static func duration(_ text: String, option: String) throws -> Int {
        guard let seconds = DurationText.seconds(text) else {
            throw CommandError.usage("\(option) takes a duration such as 90s, 30m, 12h or 7d (got \"\(text)\")")
        }
        return seconds
    }
}

extension Parse {
    /// A bit rate: "128000", "128k", "2.5M".
    static func bitrate(_ text: String, option: String) throws -> Int {
        let multipliers: [Character: Double] = ["k": 1_000, "K": 1_000, "m": 1_000_000, "M": 1_000_000]
        var digits = Substring(text)
        var multiplier = 1.0
        if let last = digits.last, let value = multipliers[last] {
            multiplier = value
            digits = digits.dropLast()
        }
        guard let number = Double(digits), number > 0, (number * multiplier) < 1e9 else {
            throw CommandError.usage("\(option) takes a bit rate such as 2500k or 3M (got \"\(text)\")")
        }
        return Int((number * multiplier).rounded())
    }

    /// A size in bytes, binary multiples: "8388608", "8M" (MiB), "1G" (GiB), "512K" (KiB).
    static func byteSize(_ text: String, option: String) throws -> Int {
        let multipliers: [Character: Int] = ["k": 1 << 10, "K": 1 << 10, "m": 1 << 20, "M": 1 << 20, "g": 1 << 30, "G": 1 << 30]
        var digits = Substring(text)
        var multiplier = 1
        if let last = digits.last, let value = multipliers[last] {
            multiplier = value
            digits = digits.dropLast()
        }
        guard let number = Int(digits), number > 0, number <= Int(Int32.max) else {
            throw CommandError.usage("\(option) takes a size such as 8M or 1G (got \"\(text)\")")
        }
        return number * multiplier
    }

    /// A frame rate: "30", "29.97" or "30000/1001".
    static func frameRate(_ text: String, option: String) throws -> Rational {
        let parts = text.split(separator: "/")
        if parts.count == 2, let numerator = Int32(parts[0]), let denominator = Int32(parts[1]),
           numerator > 0, denominator > 0, numerator / denominator <= 240 {
            return Rational(numerator, denominator)
        }
        let milliframes = try milliseconds(text, option: option)
        guard (1_000...240_000).contains(milliframes) else {
            throw CommandError.usage("\(option) takes frames per second from 1 to 240, such as 30 or 29.97")
        }
        // 29.97 and 59.94 mean the NTSC rates.
        if milliframes % 1000 != 0, (milliframes * 1001) % 1000 < 10 || (milliframes * 1001) % 1000 > 990 {
            return Rational(Int32((milliframes * 1001 + 500) / 1000), 1001)
        }
        return Rational(Int32(milliframes), 1000)
    }

    /// Cut points: seconds after the start, separated by commas ("12.5,40"), to microseconds, ascending.
    static func cutPoints(_ text: String, option: String) throws -> [Int64] {
        let usage = CommandError.usage(
            "\(option) takes seconds after the start separated by commas, like 12.5,40 (got \"\(text)\")")
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
        var microseconds: [Int64] = []
        for item in items {
            let trimmed = item.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, let milliseconds = try? Parse.milliseconds(trimmed, option: option),
                  milliseconds > 0 else { throw usage }
            microseconds.append(milliseconds * 1000)
        }
        return microseconds.sorted()
    }

    /// A whole number within `range`.
    static func integer(_ text: String, option: String, in range: ClosedRange<Int>) throws -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw CommandError.usage("\(option) takes a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }
}

extension Parse {
    /// A picture size: "1280x720", both sides even.
    static func size(_ text: String, option: String) throws -> OutputSize {
        let sides = text.split(separator: "x").map { Int($0) }
        guard sides.count == 2, let width = sides[0], let height = sides[1], width > 0, height > 0,
              width.isMultiple(of: 2), height.isMultiple(of: 2), max(width, height) <= OutputSize.maxSide else {
            throw CommandError.usage("\(option) takes an even WxH of at most \(OutputSize.maxSide) pixels a side, "
                + "such as 1280x720 (got \"\(text)\")")
        }
        return OutputSize(width: width, height: height)
    }
}

extension Parse {
    /// "h264" or "hevc".
    static func videoCodec(_ text: String, option: String) throws -> VideoCodec {
        guard let codec = VideoCodec(rawValue: text.lowercased()) else {
            throw CommandError.usage("\(option) takes h264 or hevc (got \"\(text)\")")
        }
        return codec
    }

    /// A ladder: "720p,480p,360p" (Apple's rates), "1080p@5000k,720p@2500k", a codec per rung,
    /// "1080p:hevc@4000k,720p", and the input's own video as the top rung, "source,480p,360p"; tallest first.
    static func ladder(_ text: String, option: String) throws -> [LadderRung] {
        let usage = "\(option) takes heights with an optional codec and rate, such as 720p,480p,360p or "
            + "1080p:hevc@4000k,720p@2500k"
        var rungs: [LadderRung] = []
        for word in text.split(separator: ",", omittingEmptySubsequences: false) {
            if word.lowercased() == "source" {
                rungs.append(.source)
                continue
            }
            if word.lowercased().hasPrefix("source") {
                throw CommandError.usage("\(option): source is the input's own video, copied as it comes: it takes no "
                    + "codec or rate (got \"\(word)\")")
            }
            let parts = word.split(separator: "@", omittingEmptySubsequences: false)
            let heightAndCodec = parts[0].split(separator: ":", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), (1...2).contains(heightAndCodec.count),
                  heightAndCodec[0].hasSuffix("p"), let height = Int(heightAndCodec[0].dropLast()),
                  (64...4320).contains(height) else {
                throw CommandError.usage(usage + " (got \"\(word)\")")
            }
            let codec = try heightAndCodec.count == 2 ? videoCodec(String(heightAndCodec[1]), option: option) : nil
            let bitrate = try parts.count == 2 ? bitrate(String(parts[1]), option: option) : nil
            rungs.append(LadderRung(height: height, bitrate: bitrate, codec: codec))
        }
        do {
            return try Ladder.normalized(rungs, sourceHeight: nil)
        } catch {
            throw CommandError.usage("\(option): \(error)")
        }
    }
}
