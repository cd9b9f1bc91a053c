import Foundation

/// A multivariant ("master") playlist as written (RFC 8216bis 4.4.6): variant streams, renditions
/// and I-frame streams with their lines. Values that cannot be read are left out and recorded in
/// `issues`; a variant without BANDWIDTH is kept (with `bandwidthBitsPerSecond == nil`) so that
/// its playlist can still be followed.
public struct MasterPlaylistDocument: Sendable {
    public struct Variant: Sendable, Equatable {
        public var uri: String
        /// The line of the EXT-X-STREAM-INF (or EXT-X-I-FRAME-STREAM-INF) tag.
        public var line: Int
        public var bandwidthBitsPerSecond: Int?
        public var averageBandwidthBitsPerSecond: Int?
        public var codecs: [String]?
        public var resolution: MasterPlaylist.Resolution?
        public var framesPerSecond: Double?
        public var audioGroup: String?
        public var videoGroup: String?
        public var subtitlesGroup: String?
        /// A group id, or nil for `NONE` or no attribute.
        public var closedCaptionsGroup: String?
    }

    /// An EXT-X-MEDIA rendition.
    public struct Rendition: Sendable, Equatable {
        public var type: String
        public var groupID: String
        public var name: String
        public var uri: String?
        public var language: String?
        public var isDefault: Bool
        public var autoSelect: Bool
        /// CHANNELS' first parameter, the channel count.
        public var channelCount: Int?
        public var line: Int
    }

    public var versions: [MediaPlaylistDocument.Located<Int>] = []
    public var independentSegments = false
    public var variants: [Variant] = []
    public var iFrameVariants: [Variant] = []
    public var renditions: [Rendition] = []
    public var issues: [PlaylistDocument.Issue] = []
    /// Media playlist tags found in it (a playlist is one kind or the other, RFC 8216bis 4.1).
    public var mediaTagLines: [(name: String, line: Int)] = []

    public var version: Int { versions.first?.value ?? 1 }

    static let renditionTypes: Set<String> = ["AUDIO", "VIDEO", "SUBTITLES", "CLOSED-CAPTIONS"]
    static let yesNo: Set<String> = ["YES", "NO"]

    public init(_ document: PlaylistDocument) {
        var pending: Variant?
        for entry in document.entries {
            switch entry {
            case .uri(let uri, let line):
                if var variant = pending {
                    variant.uri = uri
                    variants.append(variant)
                    pending = nil
                } else {
                    issues.append(.init(line: line, section: "4.4.6.2",
                                        message: "URI line \"\(uri)\" does not follow an EXT-X-STREAM-INF"))
                }
            case .tag(let tag):
                if pending != nil {
                    issues.append(.init(line: pending!.line, section: "4.4.6.2",
                                        message: "EXT-X-STREAM-INF is not followed by its URI line"))
                    pending = nil
                }
                switch tag.name {
                case "EXT-X-VERSION":
                    if let number = PlaylistNumber.decimalInteger(Substring(tag.value ?? "")) {
                        versions.append(.init(value: number, line: tag.line))
                    } else {
                        issues.append(.init(line: tag.line, section: "4.4.1.2",
                                            message: "EXT-X-VERSION value \"\(tag.value ?? "")\" is not a decimal-integer"))
                    }
                case "EXT-X-INDEPENDENT-SEGMENTS":
                    independentSegments = true
                case "EXT-X-STREAM-INF":
                    pending = readVariant(tag, iFrame: false)
                case "EXT-X-I-FRAME-STREAM-INF":
                    if let variant = readVariant(tag, iFrame: true) { iFrameVariants.append(variant) }
                case "EXT-X-MEDIA":
                    readRendition(tag)
                default:
                    if PlaylistDocument.mediaTags.contains(tag.name) {
                        mediaTagLines.append((tag.name, tag.line))
                    }
                }
            }
        }
        if let pending {
            issues.append(.init(line: pending.line, section: "4.4.6.2",
                                message: "EXT-X-STREAM-INF is not followed by its URI line"))
        }
    }

    public init(text: String) {
        self.init(PlaylistDocument(text: text))
    }

    private mutating func readVariant(_ tag: PlaylistDocument.Tag, iFrame: Bool) -> Variant? {
        var reader = AttributeReader(tag)
        let section = iFrame ? "4.4.6.3" : "4.4.6.2"
        reader.require("BANDWIDTH", section: section)
        var variant = Variant(
            uri: "", line: tag.line,
            bandwidthBitsPerSecond: reader.decimalInteger("BANDWIDTH", section: section),
            averageBandwidthBitsPerSecond: reader.decimalInteger("AVERAGE-BANDWIDTH", section: section),
            codecs: reader.quotedString("CODECS", section: section).map {
                $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            },
            resolution: reader.resolution("RESOLUTION", section: section),
            framesPerSecond: iFrame ? nil : reader.decimalFloatingPoint("FRAME-RATE", section: section),
            audioGroup: iFrame ? nil : reader.quotedString("AUDIO", section: section),
            videoGroup: reader.quotedString("VIDEO", section: section),
            subtitlesGroup: iFrame ? nil : reader.quotedString("SUBTITLES", section: section),
            closedCaptionsGroup: nil)
        if !iFrame, let captions = reader.list["CLOSED-CAPTIONS"] {
            switch captions {
            case .quotedString(let group): variant.closedCaptionsGroup = group
            case .token("NONE"): break
            case .token(let other):
                issues.append(.init(line: tag.line, section: section,
                                    message: "CLOSED-CAPTIONS=\(other) must be a quoted group id or NONE"))
            }
        }
        _ = reader.decimalInteger("SCORE", section: section)
        _ = reader.enumeratedString("HDCP-LEVEL", allowed: ["TYPE-0", "TYPE-1", "NONE"], section: section)
        if iFrame {
            reader.require("URI", section: section)
            variant.uri = reader.quotedString("URI", section: section) ?? ""
        }
        issues += reader.issues
        if iFrame && variant.uri.isEmpty { return nil }
        return variant
    }

    private mutating func readRendition(_ tag: PlaylistDocument.Tag) {
        var reader = AttributeReader(tag)
        let section = "4.4.6.1"
        for name in ["TYPE", "GROUP-ID", "NAME"] {
            reader.require(name, section: section)
        }
        let type = reader.enumeratedString("TYPE", allowed: Self.renditionTypes, section: section)
        let groupID = reader.quotedString("GROUP-ID", section: section)
        let name = reader.quotedString("NAME", section: section)
        let uri = reader.quotedString("URI", section: section)
        let isDefault = reader.enumeratedString("DEFAULT", allowed: Self.yesNo, section: section) == "YES"
        let autoSelectValue = reader.enumeratedString("AUTOSELECT", allowed: Self.yesNo, section: section)
        let channels = reader.quotedString("CHANNELS", section: section)
        let language = reader.quotedString("LANGUAGE", section: section)
        issues += reader.issues
        if type == "CLOSED-CAPTIONS", uri != nil {
            issues.append(.init(line: tag.line, section: section,
                                message: "EXT-X-MEDIA of TYPE=CLOSED-CAPTIONS must not have a URI"))
        }
        if isDefault, autoSelectValue == "NO" {
            issues.append(.init(line: tag.line, section: section,
                                message: "EXT-X-MEDIA with DEFAULT=YES must have AUTOSELECT=YES if it has AUTOSELECT"))
        }
        guard let type, let groupID, let name else { return }
        renditions.append(Rendition(
            type: type, groupID: groupID, name: name, uri: uri, language: language, isDefault: isDefault,
            autoSelect: autoSelectValue == "YES",
            channelCount: channels.flatMap { PlaylistNumber.decimalInteger($0.prefix { $0 != "/" }) }, line: tag.line))
    }
}
