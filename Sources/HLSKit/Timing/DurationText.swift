/// A span of time as hlscap's options write it: "90s", "30m", "12h", "7d", or a number of seconds.
public enum DurationText {
    private static let unitSeconds: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
    /// Longer spans than this are not read: ten years.
    public static let longestSeconds = 10 * 365 * 86_400

    /// The seconds `text` names, or nil when it is not such a span, is zero or less, or is longer than
    /// `longestSeconds`.
    public static func seconds(_ text: String) -> Int? {
        let unit = text.last.flatMap { unitSeconds[$0] }
        guard let number = Int(unit == nil ? text : String(text.dropLast())), number > 0,
              number <= longestSeconds / (unit ?? 1) else { return nil }
        return number * (unit ?? 1)
    }
}
