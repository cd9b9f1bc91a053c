import Foundation

/// What a validation found, for people (`text`) and machines (`json`).
public struct ValidationReport: Sendable, Codable {
    public struct Variant: Sendable, Codable, Equatable {
        public var uri: String
        public var bandwidthBitsPerSecond: Int?
        public var averageBandwidthBitsPerSecond: Int?
        public var codecs: [String]?
        public var resolution: String?
        public var framesPerSecond: Double?
        public var iFrame: Bool
    }

    public var target: String
    /// Errors first, then warnings, each in the order found.
    public var findings: [Finding]
    public var playlistCount: Int
    public var segmentCount: Int
    /// The multivariant playlist's variants (empty for a media playlist).
    public var variants: [Variant]
    /// The variant a player with a given bandwidth starts with, when one was asked about.
    public var chosenVariant: Variant?

    public init(target: String, findings: [Finding], playlistCount: Int, segmentCount: Int, variants: [Variant]) {
        self.target = target
        self.findings = Self.ordered(findings)
        self.playlistCount = playlistCount
        self.segmentCount = segmentCount
        self.variants = variants
    }

    /// Errors before warnings, each in the order found; the same sentence about the same place once,
    /// however often a rule saw it.
    private static func ordered(_ findings: [Finding]) -> [Finding] {
        var seen: Set<String> = []
        let unique = findings.filter { seen.insert("\($0.rule)|\($0.location)|\($0.message)").inserted }
        return unique.filter { $0.severity == .error } + unique.filter { $0.severity == .warning }
    }

    public var errors: [Finding] { findings.filter { $0.severity == .error } }
    public var warnings: [Finding] { findings.filter { $0.severity == .warning } }

    public mutating func add(_ more: [Finding]) {
        findings = Self.ordered(findings + more)
    }

    /// One line per finding, errors then warnings, then the verdict.
    public var text: String {
        var lines = findings.map { "\($0.severity.rawValue): \($0.location): [\($0.rule), \($0.reference)] \($0.message)" }
        lines.append(verdict)
        return lines.joined(separator: "\n") + "\n"
    }

    public var verdict: String {
        let read = "\(playlistCount) playlist\(playlistCount == 1 ? "" : "s"), \(segmentCount) segment\(segmentCount == 1 ? "" : "s")"
        let counts = "\(errors.count) error\(errors.count == 1 ? "" : "s"), \(warnings.count) warning\(warnings.count == 1 ? "" : "s")"
        return "\(target): \(errors.isEmpty ? "valid" : "INVALID") (\(counts); read \(read))"
    }

    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding plain values and strings cannot fail.
        let data = (try? encoder.encode(self)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

/// Which variant a player with a given bandwidth starts with: the highest BANDWIDTH that fits,
/// else the lowest (as a bandwidth-driven client chooses, RFC 8216bis 6.3.1).
public enum VariantChoice {
    public static func choose(bandwidthBitsPerSecond: Int,
                              among variants: [ValidationReport.Variant]) -> ValidationReport.Variant? {
        let candidates = variants.filter { !$0.iFrame && $0.bandwidthBitsPerSecond != nil }
        let fitting = candidates.filter { $0.bandwidthBitsPerSecond! <= bandwidthBitsPerSecond }
        if let best = fitting.max(by: { $0.bandwidthBitsPerSecond! < $1.bandwidthBitsPerSecond! }) {
            return best
        }
        return candidates.min { $0.bandwidthBitsPerSecond! < $1.bandwidthBitsPerSecond! }
    }

    /// The variants as a table, the chosen one marked with '*'.
    public static func table(_ variants: [ValidationReport.Variant], chosen: ValidationReport.Variant?) -> String {
        let header = ["", "BANDWIDTH", "AVERAGE", "RESOLUTION", "FPS", "CODECS", "URI"]
        let rows = variants.map { variant in
            [variant == chosen ? "*" : (variant.iFrame ? "i" : ""),
             variant.bandwidthBitsPerSecond.map(String.init) ?? "-",
             variant.averageBandwidthBitsPerSecond.map(String.init) ?? "-",
             variant.resolution ?? "-",
             variant.framesPerSecond.map { PlaylistNumber.threeDecimals($0) } ?? "-",
             variant.codecs?.joined(separator: ",") ?? "-",
             variant.uri]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        return ([header] + rows).map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}
