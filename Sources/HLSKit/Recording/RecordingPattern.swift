import Foundation

/// A recording's file name with strftime placeholders (`rec/%Y-%m-%d/%H-%M-%S.mp4`): what `--record`
/// names when recordings are split by time. The placeholders are expanded with the civil time at which
/// a file's first frame was captured, in UTC or in the local time zone.
public struct RecordingPattern: Sendable, Equatable {
    /// The placeholders understood, and the unit of time each one names.
    public enum Placeholder: Character, Sendable, CaseIterable {
        case year = "Y", month = "m", day = "d", hour = "H", minute = "M", second = "S"

        /// The longest a value of this placeholder lasts: two times this far apart may expand alike.
        var lastingSeconds: Int {
            switch self {
            case .year: 366 * 86_400
            case .month: 31 * 86_400
            case .day: 86_400
            case .hour: 3600
            case .minute: 60
            case .second: 1
            }
        }
    }

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        /// `%` followed by something other than a placeholder or `%`.
        case unknownPlaceholder(String)
        /// A placeholder in a folder above the files would make the store's root move.
        case empty

        public var description: String {
            switch self {
            case .unknownPlaceholder(let text):
                "\(text) is not a placeholder hlscap knows (%Y %m %d %H %M %S, %% for a percent sign)"
            case .empty: "the recording's path is empty"
            }
        }
    }

    private enum Piece: Sendable, Equatable {
        case text(String)
        case placeholder(Placeholder)
    }

    public let text: String
    private let pieces: [Piece]

    public init(_ text: String) throws(ParseError) {
        guard !text.isEmpty else { throw .empty }
        var pieces: [Piece] = []
        var literal = ""
        var characters = text.makeIterator()
        while let character = characters.next() {
            guard character == "%" else {
                literal.append(character)
                continue
            }
            guard let next = characters.next() else { throw .unknownPlaceholder("%") }
            if next == "%" {
                literal.append("%")
            } else if let placeholder = Placeholder(rawValue: next) {
                if !literal.isEmpty { pieces.append(.text(literal)) }
                literal = ""
                pieces.append(.placeholder(placeholder))
            } else {
                throw .unknownPlaceholder("%\(next)")
            }
        }
        if !literal.isEmpty { pieces.append(.text(literal)) }
        self.text = text
        self.pieces = pieces
    }

    /// Whether any placeholder is there: without one, every file would get the same name.
    public var hasPlaceholder: Bool {
        pieces.contains { if case .placeholder = $0 { true } else { false } }
    }

    /// The shortest time the finest placeholder names (1 for `%S`, 3600 for `%H`); nil without one.
    /// Files started less than this apart could get the same name.
    public var finestSeconds: Int? {
        pieces.compactMap { if case .placeholder(let placeholder) = $0 { placeholder.lastingSeconds } else { nil } }.min()
    }

    /// The name for a file whose first frame was captured at `date`, in `timeZone`.
    public func expand(_ date: Date, timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let fields = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return pieces.map { piece in
            switch piece {
            case .text(let text): return text
            case .placeholder(.year): return String(format: "%04d", fields.year ?? 0)
            case .placeholder(.month): return String(format: "%02d", fields.month ?? 0)
            case .placeholder(.day): return String(format: "%02d", fields.day ?? 0)
            case .placeholder(.hour): return String(format: "%02d", fields.hour ?? 0)
            case .placeholder(.minute): return String(format: "%02d", fields.minute ?? 0)
            case .placeholder(.second): return String(format: "%02d", fields.second ?? 0)
            }
        }.joined()
    }

    /// The folder part before the first placeholder (`rec` of `rec/%Y/%H.mp4`), and the rest: where a
    /// store can be rooted, and the pattern of paths below it.
    public var fixedFolder: (folder: String, rest: String) {
        let prefix = text.firstIndex(of: "%").map { text[..<$0] } ?? Substring(text)
        guard let slash = prefix.lastIndex(of: "/") else { return (".", text) }
        let folder = String(text[..<slash])
        return (folder.isEmpty ? "/" : folder, String(text[text.index(after: slash)...]))
    }
}

/// How often a split recording starts a new file (`--record-every 1h`), and where the boundaries fall:
/// on the clock, every period from midnight of the chosen time zone (on the hour for `1h`, at :00,
/// :15, :30 and :45 for `15m`, at midnight for `1d`).
public struct RecordingPeriod: Sendable, Equatable {
    public let seconds: Int

    public static let day = 86_400

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case unreadable(String)
        /// A period that does not divide a day evenly would not fall on the same times each day.
        case notADivisorOfADay(Int)

        public var description: String {
            switch self {
            case .unreadable(let text):
                "takes a period such as 30s, 15m, 1h or 1d (got \"\(text)\")"
            case .notADivisorOfADay(let seconds):
                "\(seconds) s does not divide a day evenly; choose 1m, 5m, 10m, 15m, 30m, 1h, 2h, 3h, 4h, 6h, 12h or 1d"
            }
        }
    }

    public init(seconds: Int) throws(ParseError) {
        guard seconds > 0, Self.day % seconds == 0 else { throw .notADivisorOfADay(seconds) }
        self.seconds = seconds
    }

    /// "30s", "15m", "1h", "1d", or seconds.
    public init(parsing text: String) throws(ParseError) {
        guard let seconds = DurationText.seconds(text) else { throw .unreadable(text) }
        try self.init(seconds: seconds)
    }

    /// The first boundary after `date`, in `timeZone`: a whole number of periods after its midnight.
    public func boundary(after date: Date, timeZone: TimeZone) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let midnight = calendar.startOfDay(for: date)
        let elapsed = date.timeIntervalSince(midnight)
        let periods = (elapsed / Double(seconds)).rounded(.down) + 1
        return midnight.addingTimeInterval(periods * Double(seconds))
    }
}
