import Foundation

/// The capture time of each frame written into its picture: a strftime format, white on a
/// half-dark box at the top left, drawn by libavfilter's `drawtext` (`TimeOverlayFilter`).
public struct TimeOverlay: Sendable, Equatable {
    /// A date and a time to the second: what a clock overlay shows unless given a format.
    public static let clockFormat = "%Y-%m-%d %H:%M:%S"
    /// A monospaced face, so the digits do not shift as they change; Debian's fonts-dejavu-core.
    public static let defaultFontPath = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
    /// Text this many times smaller than the picture is high, but never below `minimumFontPixels`.
    static let pictureHeightsPerLine = 24
    static let minimumFontPixels = 12

    /// A strftime(3) format.
    public let format: String
    /// The time of day in the local time zone (the TZ environment variable, else /etc/localtime)
    /// instead of UTC.
    public let localTime: Bool
    public let fontPath: String

    /// Refuses a format that would draw nothing or no time; `fontPath` is checked by `checkAvailable`.
    public init(format: String, localTime: Bool = false, fontPath: String = TimeOverlay.defaultFontPath)
        throws(TimeOverlayError) {
        guard !format.isEmpty else { throw .emptyFormat }
        guard Self.hasPlaceholder(format) else { throw .noPlaceholder(format) }
        self.format = format
        self.localTime = localTime
        self.fontPath = fontPath
    }

    /// Whether strftime would put a time into `format`: a `%` conversion other than `%%`, `%n`, `%t`.
    static func hasPlaceholder(_ format: String) -> Bool {
        var characters = format.makeIterator()
        while let character = characters.next() {
            guard character == "%" else { continue }
            var conversion = characters.next()
            // Glibc's flags and field widths come between % and the conversion: %-d, %_H, %04Y, %Ey.
            while let flag = conversion, "_-0^#EO123456789".contains(flag) { conversion = characters.next() }
            guard let conversion else { return false }
            if !"%nt".contains(conversion) { return true }
        }
        return false
    }

    /// What the font and libavfilter must provide before a picture is drawn on.
    public func checkAvailable() throws(TimeOverlayError) {
        guard FileManager.default.isReadableFile(atPath: fontPath) else { throw .fontMissing(fontPath) }
        try TimeOverlayFilter.checkDrawtext()
    }

    /// drawtext's `text`: the frame's time (its pts, the capture time in seconds since 1970) through
    /// `%{pts:gmtime:0:FORMAT}`, or `localtime`.
    var drawtextText: String {
        "%{pts:" + (localTime ? "localtime" : "gmtime") + ":0:" + Self.drawtextArgument(format) + "}"
    }

    /// `text` as one argument of a drawtext `%{…}` expansion, which libavutil's `av_get_token` splits at
    /// `:` and `}` and strips of blanks at either end: those, `\` and `'` are escaped with `\`; `%`
    /// stays as it is, for strftime.
    static func drawtextArgument(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if "\\':}".contains(character) || character.isWhitespace { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    /// The text's size in pixels for a picture `height` pixels high.
    static func fontPixels(pictureHeight height: Int) -> Int {
        max(minimumFontPixels, height / pictureHeightsPerLine)
    }
}

/// Why a time overlay cannot be drawn.
public enum TimeOverlayError: Error, Equatable, CustomStringConvertible {
    case emptyFormat
    /// A format without a strftime conversion would draw the same text on every frame.
    case noPlaceholder(String)
    /// The font file is missing or cannot be read.
    case fontMissing(String)
    /// This libavfilter build cannot draw text (no drawtext: built without libfreetype).
    case filterUnavailable(String)

    public var description: String {
        switch self {
        case .emptyFormat:
            "the time format is empty"
        case .noPlaceholder(let format):
            "'\(format)' has no strftime placeholder such as %H or %S, so it shows no time"
        case .fontMissing(let path) where path == TimeOverlay.defaultFontPath:
            "the font \(path) cannot be read; install Debian's fonts-dejavu-core"
        case .fontMissing(let path):
            "the font \(path) cannot be read; give a TrueType or OpenType font file that exists"
        case .filterUnavailable(let reason):
            reason
        }
    }
}
