/// The keys a run file's sections take, and what kind of value each key takes. The stream keys are given by
/// the caller (they are a live stream's options: one list for both); the server's and the recordings' keys are
/// the file's own.
public struct RunFileSchema: Sendable {
    public enum Kind: Equatable, Sendable {
        /// true or false.
        case flag
        /// One value.
        case value
        /// One value, or a sequence of values for a key given several times (a header per line).
        case repeated
        /// One value, or a sequence of values written as one value separated by commas (a ladder's rungs).
        case list
    }

    /// What a stream (and `defaults:`) takes, by key.
    public var streamKeys: [String: Kind]

    public init(streamKeys: [String: Kind]) {
        self.streamKeys = streamKeys
    }

    /// The file's own sections.
    public static let sections = ["out", "defaults", "streams", "server", "recordings"]

    /// `server:`, the one server for every stream: the keys of a live stream's server options, `listen`
    /// being its address.
    public static let serverKeys: [String: Kind] = [
        "listen": .value, "tls-cert": .value, "tls-key": .value, "tls-ocsp": .value, "max-clients": .value,
        "idle-timeout": .value, "header-timeout": .value, "auth-token": .value, "auth-token-file": .value,
        "auth-key": .value, "metrics-token": .value, "admin-token": .value,
    ]

    /// `recordings:`, retention for the whole disk.
    public static let recordingsKeys: [String: Kind] = ["keep-size": .value, "min-free": .value]

    /// Stream names are folder names under `out`, and parts of URLs.
    public static func isStreamName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "-")
        }
    }

    /// The known key nearest to `key` by edit distance, when it is near enough to be a slip of the keyboard.
    public static func nearest(to key: String, among keys: some Sequence<String>) -> String? {
        let candidates = keys.map { ($0, editDistance(key, $0)) }.filter { $0.1 <= max(2, key.count / 3) }
        return candidates.min { ($0.1, $0.0) < ($1.1, $1.0) }?.0
    }

    /// Levenshtein distance over characters.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }
}
