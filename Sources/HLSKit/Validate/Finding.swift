/// One thing the validator found: how bad, which rule, where, and one sentence.
public struct Finding: Sendable, Equatable, Codable {
    public enum Severity: String, Sendable, Codable {
        case error
        case warning
    }

    public var severity: Severity
    /// The rule's identifier, such as `target-duration` (the `Fixtures/validate/` directory name).
    public var rule: String
    /// Where the rule is written: `RFC 8216bis 4.4.3.1`, or an Apple authoring-spec item.
    public var reference: String
    /// The playlist or media file, as a path relative to the target or as a URL.
    public var file: String
    public var line: Int?
    public var byteOffset: Int?
    public var message: String

    public init(_ rule: ValidationRule, file: String, line: Int? = nil, byteOffset: Int? = nil, message: String) {
        severity = rule.severity
        self.rule = rule.id
        reference = rule.reference
        self.file = file
        self.line = line
        self.byteOffset = byteOffset
        self.message = message
    }

    /// `file:line`, `file@offset` or `file`.
    public var location: String {
        if let line { return "\(file):\(line)" }
        if let byteOffset { return "\(file)@\(byteOffset)" }
        return file
    }
}

/// A rule the validator checks: its identifier, where it is written, and whether breaking it is an
/// error (an RFC 8216bis or ISO BMFF MUST) or a warning (Apple's authoring specification).
public struct ValidationRule: Sendable, Equatable, Hashable {
    public var id: String
    public var reference: String
    public var severity: Finding.Severity
    /// What the rule asks, for the README's table and `--help`.
    public var summary: String

    init(_ id: String, _ reference: String, _ severity: Finding.Severity, _ summary: String) {
        self.id = id
        self.reference = reference
        self.severity = severity
        self.summary = summary
    }
}

extension ValidationRule {
    private static let rfc = "RFC 8216bis"
    private static let apple = "Apple HLS authoring"

    // Playlists.
    public static let header = ValidationRule("header", "\(rfc) 4.4.1.1", .error, "the first line is #EXTM3U")
    public static let syntax = ValidationRule(
        "syntax", "\(rfc) 4.2", .error, "tags, attribute lists and attribute values have their syntax and type")
    public static let playlistKind = ValidationRule(
        "playlist-kind", "\(rfc) 4.1", .error, "a playlist is either a media or a multivariant playlist, not both")
    public static let defineName = ValidationRule(
        "define-name", "\(rfc) 4.4.2.3", .error, "an EXT-X-DEFINE names its variable with only a-z, A-Z, 0-9, '-' and '_'")
    public static let defineDuplicate = ValidationRule(
        "define-duplicate", "\(rfc) 4.4.2.3", .error, "no two EXT-X-DEFINE tags define the same name")
    public static let variableReference = ValidationRule(
        "variable-undefined", "\(rfc) 4.3", .error,
        "every {$name} in a URI or quoted string, every IMPORT and every QUERYPARAM has a value to take")
    public static let version = ValidationRule(
        "version", "\(rfc) 4.4.1.2, 8", .error, "one EXT-X-VERSION, at least what the tags and attributes used need")
    public static let targetDuration = ValidationRule(
        "target-duration", "\(rfc) 4.4.3.1", .error, "EXT-X-TARGETDURATION present; every EXTINF rounded is at most it")
    public static let mediaSequence = ValidationRule(
        "media-sequence", "\(rfc) 4.4.3.2", .error, "EXT-X-MEDIA-SEQUENCE once, before the first segment")
    public static let discontinuitySequence = ValidationRule(
        "discontinuity-sequence", "\(rfc) 4.4.3.3", .error,
        "EXT-X-DISCONTINUITY-SEQUENCE once, before the first segment and any discontinuity")
    public static let map = ValidationRule(
        "map", "\(rfc) 4.4.4.5", .error, "EXT-X-MAP has a URI and comes before every fMP4 segment")
    public static let byteRange = ValidationRule(
        "byterange", "\(rfc) 4.4.4.2", .error,
        "EXT-X-BYTERANGE is <n>[@<o>]; without @<o> it follows a range of the same resource")
    public static let playlistType = ValidationRule(
        "playlist-type", "\(rfc) 4.4.3.5", .error, "EXT-X-PLAYLIST-TYPE is VOD or EVENT, once; a VOD playlist ends")
    public static let endList = ValidationRule("endlist", "\(rfc) 4.4.3.4", .error, "EXT-X-ENDLIST at most once")
    public static let programDateTime = ValidationRule(
        "program-date-time", "\(rfc) 4.4.4.6", .error,
        "EXT-X-PROGRAM-DATE-TIME is a date with a time zone and never goes back within a discontinuity")
    public static let bandwidth = ValidationRule(
        "bandwidth", "\(rfc) 4.4.6.2", .error, "every EXT-X-STREAM-INF and EXT-X-I-FRAME-STREAM-INF has BANDWIDTH")
    public static let variantAttributes = ValidationRule(
        "variant-attributes", "\(rfc) 4.4.6.2", .error,
        "CODECS is a quoted list, RESOLUTION WxH, FRAME-RATE a decimal; every variant has its URI")
    public static let renditionGroups = ValidationRule(
        "rendition-groups", "\(rfc) 4.4.6.1", .error,
        "EXT-X-MEDIA has TYPE, GROUP-ID and NAME; every AUDIO/VIDEO/SUBTITLES group a variant names exists")
    public static let partInformation = ValidationRule(
        "part-inf", "\(rfc) 4.4.3.7", .error, "a playlist with EXT-X-PART has one EXT-X-PART-INF with PART-TARGET")
    public static let partDuration = ValidationRule(
        "part-duration", "\(rfc) 4.4.4.9", .error, "EXT-X-PART has URI and DURATION, at most PART-TARGET")
    public static let serverControl = ValidationRule(
        "server-control", "\(rfc) 4.4.3.8", .error,
        "HOLD-BACK at least 3 target durations; PART-HOLD-BACK present with parts, at least 2 part targets")
    public static let preloadHint = ValidationRule(
        "preload-hint", "\(rfc) 4.4.5.3", .error, "EXT-X-PRELOAD-HINT has TYPE PART or MAP and a URI, once per TYPE")
    public static let skip = ValidationRule(
        "skip", "\(rfc) 4.4.5.2", .error,
        "EXT-X-SKIP has SKIPPED-SEGMENTS, only when the server advertises CAN-SKIP-UNTIL, in a version 9 playlist")
    public static let uri = ValidationRule("uri", "\(rfc) 4.4", .error, "every URI a playlist lists can be read")

    // Media.
    public static let initSection = ValidationRule(
        "init-section", "\(rfc) 3.1.2", .error, "the initialization section has ftyp, and moov with mvex and trex")
    public static let codecs = ValidationRule(
        "codecs", "\(rfc) 4.4.6.2", .error, "CODECS names what the sample entries (avcC, hvcC, esds) carry")
    public static let segmentBoxes = ValidationRule(
        "segment-boxes", "\(rfc) 3.1.2", .error,
        "each segment is well-formed boxes with moof and mdat; trun sample data stays inside mdat")
    public static let decodeTimeContinuity = ValidationRule(
        "tfdt-continuity", "\(rfc) 3", .error,
        "tfdt continues from the previous segment within one sample, except across a discontinuity")
    public static let independentSegments = ValidationRule(
        "independent-segments", "\(rfc) 4.4.2.1", .error,
        "with EXT-X-INDEPENDENT-SEGMENTS every video segment starts with a sync sample")
    public static let segmentDuration = ValidationRule(
        "extinf-duration", "\(rfc) 4.4.4.1", .error, "EXTINF is the segment's duration within one frame")
    public static let parameterSets = ValidationRule(
        "parameter-sets", "\(rfc) 4.4.4.3; ISO/IEC 14496-10 7.4.2.1.1", .error,
        "parameter sets in the sample entry and the samples can be decoded; those in the samples describe the pictures the sample entry describes")

    public static let key = ValidationRule(
        "key", "\(rfc) 4.4.4.4, 5.2", .error,
        "an AES-128 key is 16 bytes at its URI, an IV is 0x and 32 hex digits, and each segment decrypts with its key")

    // Apple's authoring specification.
    public static let iFramePlaylists = ValidationRule(
        "apple-iframe-playlists", "\(apple) 6.1, Trick Play", .warning,
        "a multivariant playlist with video offers I-frame playlists")
    public static let averageBandwidth = ValidationRule(
        "apple-average-bandwidth", "\(apple) 9.14, Multivariant Playlist", .warning,
        "every variant has AVERAGE-BANDWIDTH")
    public static let frameRate = ValidationRule(
        "apple-frame-rate", "\(apple) 9.15, Multivariant Playlist", .warning, "every video variant has FRAME-RATE")
    public static let measuredBandwidth = ValidationRule(
        "apple-measured-bandwidth", "\(apple) 1.28 and 1.29, Video", .warning,
        "measured peak at most 125 % of BANDWIDTH, average at most 110 % of AVERAGE-BANDWIDTH")
    public static let liveProgramDateTime = ValidationRule(
        "apple-program-date-time", "\(apple) 8.4, Media Playlists", .warning, "live playlists carry EXT-X-PROGRAM-DATE-TIME")
    public static let liveWindow = ValidationRule(
        "apple-live-window", "\(apple) 8.11, Media Playlists", .warning, "a live playlist lists at least 6 segments")
    public static let discontinuitySequencePresent = ValidationRule(
        "apple-discontinuity-sequence", "\(apple) 8.17, Media Playlists", .warning,
        "a playlist with discontinuities has EXT-X-DISCONTINUITY-SEQUENCE")
    public static let stereoAudio = ValidationRule(
        "apple-stereo-aac", "\(apple) 2.3, Audio", .warning, "stereo AAC audio is available")
    public static let partHoldBack = ValidationRule(
        "apple-part-hold-back", "\(apple) 14.3, Low-Latency HLS", .warning,
        "PART-HOLD-BACK is at least three part targets")
    public static let lowLatencyBlockingReload = ValidationRule(
        "apple-ll-blocking-reload", "\(apple), Low-Latency HLS", .warning,
        "a live playlist with EXT-X-PART offers blocking reloads: EXT-X-SERVER-CONTROL has CAN-BLOCK-RELOAD=YES")
    public static let lowLatencyPreloadHint = ValidationRule(
        "apple-ll-preload-hint", "\(apple), Low-Latency HLS", .warning,
        "a live playlist with EXT-X-PART ends with an EXT-X-PRELOAD-HINT of TYPE=PART and a URI for the next part")
    public static let lowLatencyRenditionReports = ValidationRule(
        "apple-ll-rendition-reports", "\(apple), Low-Latency HLS", .warning,
        "each live media playlist with EXT-X-PART has an EXT-X-RENDITION-REPORT with LAST-MSN and LAST-PART "
            + "for every other media playlist of its multivariant playlist")
    public static let keyframeInterval = ValidationRule(
        "apple-idr-interval", "\(apple) 1.13, Video", .warning, "an IDR at least every two seconds")

    // Live, over successive reloads.
    public static let liveMediaSequence = ValidationRule(
        "live-media-sequence", "\(rfc) 6.2.2", .error,
        "EXT-X-MEDIA-SEQUENCE never goes back and a removed segment never returns")
    public static let liveTargetDuration = ValidationRule(
        "live-target-duration", "\(rfc) 4.4.3.1", .error, "EXT-X-TARGETDURATION never changes")
    public static let livePlaylistType = ValidationRule(
        "live-playlist-type", "\(rfc) 4.4.3.5", .error,
        "a VOD playlist never changes; an EVENT playlist only appends")
    public static let liveStale = ValidationRule(
        "live-stale", "\(rfc) 6.2.1", .error,
        "a live playlist gains a segment within 1.5 target durations of its previous version")
    public static let liveRetention = ValidationRule(
        "live-retention", "\(rfc) 6.2.2", .error,
        "a segment that leaves the playlist stays downloadable for its duration plus the playlist's")
    public static let blockingReload = ValidationRule(
        "live-blocking-reload", "\(rfc) 6.2.5.2", .error,
        "with CAN-BLOCK-RELOAD=YES a request for the next segment (_HLS_msn), or the next part of it (_HLS_part), "
            + "is answered with a playlist that holds it once it exists")

    /// Every rule, in the order the README lists them.
    public static let all: [ValidationRule] = [
        header, syntax, playlistKind, defineName, defineDuplicate, variableReference, version, targetDuration, mediaSequence, discontinuitySequence, map, byteRange,
        playlistType, endList, programDateTime, bandwidth, variantAttributes, renditionGroups, partInformation,
        partDuration, serverControl, preloadHint, skip, uri,
        initSection, codecs, segmentBoxes, decodeTimeContinuity, independentSegments, segmentDuration, parameterSets, key,
        iFramePlaylists, averageBandwidth, frameRate, measuredBandwidth, liveProgramDateTime, liveWindow,
        discontinuitySequencePresent, stereoAudio, partHoldBack, lowLatencyBlockingReload, lowLatencyPreloadHint,
        lowLatencyRenditionReports, keyframeInterval,
        liveMediaSequence, liveTargetDuration, livePlaylistType, liveStale, liveRetention, blockingReload,
    ]

    /// The rule a parser issue of this RFC 8216bis section breaks.
    static func forSection(_ section: String) -> ValidationRule {
        switch section {
        case "4.4.1.2": version
        case "4.4.3.1": targetDuration
        case "4.4.3.2": mediaSequence
        case "4.4.3.3": discontinuitySequence
        case "4.4.3.5": playlistType
        case "4.4.4.2": byteRange
        case "4.4.4.5": map
        case "4.4.4.6": programDateTime
        case "4.4.3.7": partInformation
        case "4.4.4.9": partDuration
        case "4.4.3.8": serverControl
        case "4.4.5.2": skip
        case "4.4.5.3": preloadHint
        case "4.4.6.1": renditionGroups
        case "4.4.6.2", "4.4.6.3": variantAttributes
        default: syntax
        }
    }
}
