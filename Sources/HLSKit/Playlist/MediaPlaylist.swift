import Foundation

/// An HLS media playlist (RFC 8216bis section 4.4.3 and 4.4.4) as a value: render it, or parse one.
///
/// Durations and program date-times are kept to milliseconds, the precision they are written with,
/// so that parsing a rendered playlist gives back an equal value.
public struct MediaPlaylist: Sendable, Equatable {
    public enum PlaylistType: String, Sendable {
        case vod = "VOD"
        case event = "EVENT"
    }

    public struct Segment: Sendable, Equatable {
        public var uri: String
        /// Rendered with exactly three decimals.
        public var durationSeconds: Double
        /// The EXT-X-MAP in force for this segment. HLS cannot end a map, so a segment without one
        /// must not follow a segment with one.
        public var mapURI: String?
        /// The part of `mapURI` that is the init section (EXT-X-MAP BYTERANGE): a recording's
        /// `ftyp`+`moov`.
        public var mapByteRange: ByteRange?
        /// Whether an EXT-X-DISCONTINUITY precedes this segment.
        public var discontinuity: Bool
        public var programDateTime: Date?
        /// EXT-X-BYTERANGE: the part of `uri` that is the segment (I-frame playlists).
        public var byteRange: ByteRange?
        /// EXT-X-PART: the segment's partial segments, listed before it (LL-HLS, RFC 8216bis 4.4.4.9).
        public var parts: [Part] = []
        /// The AES-128 key the segment is encrypted with (EXT-X-KEY), nil for a clear segment.
        public var key: Key?

        public init(uri: String, durationSeconds: Double, mapURI: String? = nil,
                    discontinuity: Bool = false, programDateTime: Date? = nil, byteRange: ByteRange? = nil) {
            self.uri = uri
            self.durationSeconds = durationSeconds
            self.mapURI = mapURI
            self.discontinuity = discontinuity
            self.programDateTime = programDateTime
            self.byteRange = byteRange
        }
    }

    /// A partial segment (EXT-X-PART): a fragment of a segment that is still being written.
    public struct Part: Sendable, Equatable {
        public var uri: String
        public var durationSeconds: Double
        /// INDEPENDENT=YES: the part starts with a sync sample.
        public var independent: Bool

        public init(uri: String, durationSeconds: Double, independent: Bool) {
            self.uri = uri
            self.durationSeconds = durationSeconds
            self.independent = independent
        }
    }

    /// EXT-X-SERVER-CONTROL (RFC 8216bis 4.4.3.8): what the server that answers for this playlist can do.
    public struct ServerControl: Sendable, Equatable {
        public var canBlockReload: Bool
        public var partHoldBackSeconds: Double?
        public var canSkipUntilSeconds: Double?

        public init(canBlockReload: Bool, partHoldBackSeconds: Double?, canSkipUntilSeconds: Double?) {
            self.canBlockReload = canBlockReload
            self.partHoldBackSeconds = partHoldBackSeconds
            self.canSkipUntilSeconds = canSkipUntilSeconds
        }
    }

    /// EXT-X-RENDITION-REPORT (RFC 8216bis 4.4.5.4): where another rendition of the stream stands.
    public struct RenditionReport: Sendable, Equatable {
        public var uri: String
        public var lastSequenceNumber: Int
        public var lastPart: Int?

        public init(uri: String, lastSequenceNumber: Int, lastPart: Int?) {
            self.uri = uri
            self.lastSequenceNumber = lastSequenceNumber
            self.lastPart = lastPart
        }
    }

    /// `length` bytes from `offset` (RFC 8216bis 4.4.4.2); always written with its offset.
    public struct ByteRange: Sendable, Equatable {
        public var length: Int
        public var offset: Int

        public init(length: Int, offset: Int) {
            self.length = length
            self.offset = offset
        }
    }

    public var targetDurationSeconds: Int
    /// The media sequence number of the first listed segment.
    public var mediaSequence: Int
    /// The discontinuity sequence number of the first listed segment; omitted from the text when 0.
    public var discontinuitySequence: Int
    /// `nil` is a sliding-window live playlist.
    public var playlistType: PlaylistType?
    public var independentSegments: Bool
    /// EXT-X-I-FRAMES-ONLY: each entry is one I-frame, a byte range of a media segment.
    public var iFramesOnly: Bool
    public var segments: [Segment]
    public var endList: Bool
    /// LL-HLS: EXT-X-PART-INF's PART-TARGET, when the playlist lists parts.
    public var partTargetSeconds: Double?
    public var serverControl: ServerControl?
    /// EXT-X-SKIP (a delta update, RFC 8216bis 4.4.5.2): this many segments after the media sequence
    /// number are left out; `segments` holds those that follow. `skipVersion2` is the `_HLS_skip=v2` form.
    public var skippedSegments = 0
    public var skipVersion2 = false
    /// The parts of the segment being written, listed after the last segment.
    public var trailingParts: [Part] = []
    /// The segment being written follows EXT-X-DISCONTINUITY, which goes before its parts.
    public var trailingPartsFollowDiscontinuity = false
    /// EXT-X-PRELOAD-HINT:TYPE=PART: the part a client may request before it exists.
    public var preloadHintURI: String?
    public var renditionReports: [RenditionReport] = []

    public init(targetDurationSeconds: Int, mediaSequence: Int = 0, discontinuitySequence: Int = 0,
                playlistType: PlaylistType? = nil, independentSegments: Bool = false, iFramesOnly: Bool = false,
                segments: [Segment] = [], endList: Bool = false) {
        self.iFramesOnly = iFramesOnly
        self.targetDurationSeconds = targetDurationSeconds
        self.mediaSequence = mediaSequence
        self.discontinuitySequence = discontinuitySequence
        self.playlistType = playlistType
        self.independentSegments = independentSegments
        self.segments = segments
        self.endList = endList
    }

    /// Decimal EXTINF durations need version 3 (RFC 8216bis section 8).
    private static let versionForDecimalDurations = 3
    /// EXT-X-BYTERANGE and EXT-X-I-FRAMES-ONLY need version 4 (RFC 8216bis section 8).
    private static let versionForByteRanges = 4
    /// EXT-X-MAP in an I-frame playlist needs version 5, anywhere else version 6 (RFC 8216bis section 8).
    private static let versionForMapInIFramePlaylist = 5
    private static let versionForMap = 6
    private static let minimumTargetDurationSeconds = 1
    /// EXT-X-SKIP needs version 9, and 10 when date ranges may be skipped too (`_HLS_skip=v2`).
    private static let versionForSkip = 9
    private static let versionForSkipVersion2 = 10

    /// The lowest EXT-X-VERSION that the rendered tags need.
    public var version: Int {
        if skippedSegments > 0 { return skipVersion2 ? Self.versionForSkipVersion2 : Self.versionForSkip }
        let hasMap = segments.contains { $0.mapURI != nil }
        if iFramesOnly { return hasMap ? Self.versionForMapInIFramePlaylist : Self.versionForByteRanges }
        if hasMap { return Self.versionForMap }
        return segments.contains { $0.byteRange != nil } ? Self.versionForByteRanges : Self.versionForDecimalDurations
    }

    /// The smallest EXT-X-TARGETDURATION that every duration, rounded to the nearest integer, stays
    /// within (RFC 8216bis 4.4.3.1), and at least 1.
    ///
    /// Rounds each duration as rendered to milliseconds: 2.4996 s is written `2.500` and needs 3.
    public static func targetDuration(forSegmentDurations durations: [Double]) -> Int {
        let roundedSeconds = durations.map { PlaylistNumber.roundedToNearestSecond(PlaylistNumber.milliseconds($0)) }
        return max(minimumTargetDurationSeconds, roundedSeconds.max() ?? 0)
    }

    /// The playlist text: LF line endings and a final newline.
    /// An EXT-X-KEY (RFC 8216bis 4.4.4.4): whole-segment AES-128, where without an IV the segment's
    /// media sequence number is its IV; or SAMPLE-AES, samples encrypted with 'cbcs' whose init section
    /// stays clear and names the IV itself.
    public struct Key: Sendable, Equatable {
        public enum Method: String, Sendable {
            case aes128 = "AES-128"
            case sampleAES = "SAMPLE-AES"
        }

        public var method: Method
        public var uri: String
        public var iv: String?

        public init(uri: String, iv: String? = nil, method: Method = .aes128) {
            self.uri = uri
            self.iv = iv
            self.method = method
        }

        /// The IV of a segment whose EXT-X-KEY names none: its media sequence number, big-endian, in
        /// 16 bytes (RFC 8216bis 5.2).
        public static func defaultIV(sequenceNumber: Int) -> [UInt8] {
            (0..<16).map { index in index < 8 ? 0 : UInt8(truncatingIfNeeded: UInt64(sequenceNumber) >> (8 * (15 - index))) }
        }

        var tag: String {
            "\(PlaylistTag.key):METHOD=\(method.rawValue),URI=\"\(uri)\"" + (iv.map { ",IV=\($0)" } ?? "")
                + (method == .sampleAES ? ",KEYFORMAT=\"identity\"" : "")
        }
    }

    public func render() -> String {
        var text = renderHeader()
        var state = RenderState()
        for segment in segments { text += Self.render(segment, state: &state) }
        return text + renderTrailer()
    }

    /// What a segment's lines depend on from the segments before it: the init section (its EXT-X-MAP
    /// line) and the key in force.
    public struct RenderState: Sendable, Equatable {
        var mapURI: String?
        var key: Key?

        public init() {}
    }

    /// The tags before the first segment, each line ending in a newline. `listsDiscontinuity` says whether
    /// any segment starts with EXT-X-DISCONTINUITY when `segments` holds only some of them.
    public func renderHeader(listsDiscontinuity: Bool? = nil) -> String {
        var lines = [
            PlaylistTag.header,
            "\(PlaylistTag.version):\(version)",
            "\(PlaylistTag.targetDuration):\(targetDurationSeconds)",
            "\(PlaylistTag.mediaSequence):\(mediaSequence)",
        ]
        // Absent means 0 (RFC 8216bis 4.4.3.3), but Apple's authoring rules (8.17) want it stated in any
        // playlist with a discontinuity.
        if discontinuitySequence > 0 || (listsDiscontinuity ?? segments.contains(where: \.discontinuity)) {
            lines.append("\(PlaylistTag.discontinuitySequence):\(discontinuitySequence)")
        }
        if let playlistType {
            lines.append("\(PlaylistTag.playlistType):\(playlistType.rawValue)")
        }
        if let serverControl {
            var attributes = ["CAN-BLOCK-RELOAD=\(serverControl.canBlockReload ? "YES" : "NO")"]
            if let skip = serverControl.canSkipUntilSeconds {
                attributes.append("CAN-SKIP-UNTIL=\(PlaylistNumber.threeDecimals(skip))")
            }
            if let holdBack = serverControl.partHoldBackSeconds {
                attributes.append("PART-HOLD-BACK=\(PlaylistNumber.threeDecimals(holdBack))")
            }
            lines.append("\(PlaylistTag.serverControl):" + attributes.joined(separator: ","))
        }
        if let partTargetSeconds {
            lines.append("\(PlaylistTag.partInformation):PART-TARGET=\(PlaylistNumber.threeDecimals(partTargetSeconds))")
        }
        if independentSegments {
            lines.append(PlaylistTag.independentSegments)
        }
        if iFramesOnly {
            lines.append(PlaylistTag.iFramesOnly)
        }
        if skippedSegments > 0 {
            lines.append("\(PlaylistTag.skip):SKIPPED-SEGMENTS=\(skippedSegments)")
        }
        return lines.map { $0 + "\n" }.joined()
    }

    /// One segment's lines, each ending in a newline, after the segments that left `state`.
    public static func render(_ segment: Segment, state: inout RenderState) -> String {
        var lines: [String] = []
        if segment.discontinuity {
            lines.append(PlaylistTag.discontinuity)
        }
        if let mapURI = segment.mapURI {
            let map = "\(PlaylistTag.map):URI=\"\(mapURI)\""
                + (segment.mapByteRange.map { ",BYTERANGE=\"\($0.length)@\($0.offset)\"" } ?? "")
            if map != state.mapURI {
                // An init section is stored clear: no AES-128 key may be in force where its EXT-X-MAP
                // stands (SAMPLE-AES leaves init sections alone).
                if state.key?.method == .aes128 {
                    lines.append("\(PlaylistTag.key):METHOD=NONE")
                    state.key = nil
                }
                lines.append(map)
                state.mapURI = map
            }
        }
        if segment.key != state.key {
            lines.append(segment.key?.tag ?? "\(PlaylistTag.key):METHOD=NONE")
            state.key = segment.key
        }
        if let programDateTime = segment.programDateTime {
            lines.append("\(PlaylistTag.programDateTime):\(ProgramDateTime.format(programDateTime))")
        }
        lines += segment.parts.map(Self.render)
        lines.append("\(PlaylistTag.segmentDuration):\(PlaylistNumber.threeDecimals(segment.durationSeconds)),")
        if let range = segment.byteRange {
            lines.append("\(PlaylistTag.byteRange):\(range.length)@\(range.offset)")
        }
        lines.append(segment.uri)
        return lines.map { $0 + "\n" }.joined()
    }

    /// The tags after the last segment (trailing parts, preload hint, ENDLIST, rendition reports), each
    /// line ending in a newline.
    public func renderTrailer() -> String {
        var lines: [String] = []
        if trailingPartsFollowDiscontinuity {
            lines.append(PlaylistTag.discontinuity)
        }
        lines += trailingParts.map(Self.render)
        if let preloadHintURI {
            lines.append("\(PlaylistTag.preloadHint):TYPE=PART,URI=\"\(preloadHintURI)\"")
        }
        if endList {
            lines.append(PlaylistTag.endList)
        }
        for report in renditionReports {
            var line = "\(PlaylistTag.renditionReport):URI=\"\(report.uri)\",LAST-MSN=\(report.lastSequenceNumber)"
            if let lastPart = report.lastPart { line += ",LAST-PART=\(lastPart)" }
            lines.append(line)
        }
        return lines.map { $0 + "\n" }.joined()
    }

    private static func render(_ part: Part) -> String {
        "\(PlaylistTag.part):DURATION=\(PlaylistNumber.threeDecimals(part.durationSeconds)),URI=\"\(part.uri)\""
            + (part.independent ? ",INDEPENDENT=YES" : "")
    }
}
