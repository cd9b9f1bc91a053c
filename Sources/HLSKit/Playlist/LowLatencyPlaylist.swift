import Foundation

/// The Low-Latency HLS view of one rendition's live playlist (RFC 8216bis 4.4.3.7–8, 4.4.4.9,
/// 4.4.5.2–4, 6.2.5): the stored segments as the regular playlist lists them, the parts of the last
/// three target durations, the parts of the segment being written, and a preload hint for the next.
///
/// A pure value: the server keeps one per rendition and answers blocking requests from it.
public struct LowLatencyPlaylist: Sendable {
    /// Where a stream stands: a segment's media sequence number and a part index within it.
    public struct Position: Sendable, Hashable, Comparable {
        public var sequenceNumber: Int
        public var part: Int

        public init(sequenceNumber: Int, part: Int) {
            self.sequenceNumber = sequenceNumber
            self.part = part
        }

        public static func < (lhs: Position, rhs: Position) -> Bool {
            (lhs.sequenceNumber, lhs.part) < (rhs.sequenceNumber, rhs.part)
        }
    }

    /// A delta update (`_HLS_skip`): YES leaves out old segments, v2 also old date ranges (none here).
    public enum Skip: Sendable, Hashable {
        case none, segments, segmentsAndDateRanges
    }

    /// Why a blocking request is refused (RFC 8216bis 6.2.5.2): answered 400.
    public enum RequestError: Error, Equatable {
        case partWithoutSequenceNumber
        case tooFarAhead(lastSequenceNumber: Int)
    }

    public static let partDirectory = "part"
    /// CAN-SKIP-UNTIL: six target durations, the least RFC 8216bis 4.4.3.8 allows.
    public static let skipTargetDurations = 6.0
    /// PART-HOLD-BACK: three part targets, as Apple's LL-HLS rules ask (the RFC's minimum is two).
    public static let partHoldBackTargets = 3.0
    /// Parts stay listed for the last three target durations.
    public static let listedPartTargetDurations = 3.0

    public private(set) var base: MediaPlaylist
    public let partTargetSeconds: Double
    /// Parts by media sequence number: the open segment's, and those of recent stored segments.
    private var parts: [Int: [MediaPlaylist.Part]] = [:]
    /// Segments whose last part came, though the segment is not stored yet.
    private var completeParts: Set<Int> = []
    /// Segments not stored yet whose first part follows a discontinuity.
    private var discontinuousParts: Set<Int> = []

    public init(base: MediaPlaylist, partTargetSeconds: Double) {
        self.base = base
        self.partTargetSeconds = partTargetSeconds
    }

    /// `part/000042.3.m4s`: part 3 of segment 42.
    public static func partURI(sequenceNumber: Int, part: Int) -> String {
        partDirectory + "/" + String(format: "%06d.%d.m4s", sequenceNumber, part)
    }

    /// The segment and part a part URI names, or nil.
    public static func position(ofPartURI uri: Substring) -> Position? {
        guard uri.hasPrefix(partDirectory + "/"), uri.hasSuffix(".m4s") else { return nil }
        let fields = uri.dropFirst(partDirectory.count + 1).dropLast(4).split(separator: ".", omittingEmptySubsequences: false)
        guard fields.count == 2, fields[0].count == 6, let sequenceNumber = Int(fields[0]), sequenceNumber > 0,
              fields.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let part = Int(fields[1]), part < 10_000, String(part) == fields[1] else { return nil }
        return Position(sequenceNumber: sequenceNumber, part: part)
    }

    /// The media sequence number of the segment being written: the one after the last stored.
    public var openSequenceNumber: Int { base.mediaSequence + base.segments.count }

    /// The last stored segment's media sequence number (the one before the first when none is).
    public var lastSequenceNumber: Int { openSequenceNumber - 1 }

    public var isEnded: Bool { base.endList }

    /// The newest part: of the segment being written, else the last part of the last stored segment.
    public var lastPart: Position? {
        if let open = parts[openSequenceNumber], !open.isEmpty {
            return Position(sequenceNumber: openSequenceNumber, part: open.count - 1)
        }
        guard let last = parts[lastSequenceNumber], !last.isEmpty else { return nil }
        return Position(sequenceNumber: lastSequenceNumber, part: last.count - 1)
    }

    /// The part a client may ask for before it exists (EXT-X-PRELOAD-HINT): the next of the segment
    /// being written, or the first of the next segment once the last part came.
    public var nextPart: Position {
        if completeParts.contains(openSequenceNumber) { return Position(sequenceNumber: openSequenceNumber + 1, part: 0) }
        return Position(sequenceNumber: openSequenceNumber, part: parts[openSequenceNumber]?.count ?? 0)
    }

    /// Adds a part of the segment being written; `endsSegment` when it is the segment's last,
    /// `followsDiscontinuity` when the segment starts a new timeline (EXT-X-DISCONTINUITY before its parts).
    public mutating func addPart(_ position: Position, durationSeconds: Double, independent: Bool,
                                 endsSegment: Bool = false, followsDiscontinuity: Bool = false) {
        if followsDiscontinuity { discontinuousParts.insert(position.sequenceNumber) }
        let uri = Self.partURI(sequenceNumber: position.sequenceNumber, part: position.part)
        parts[position.sequenceNumber, default: []].append(
            MediaPlaylist.Part(uri: uri, durationSeconds: durationSeconds, independent: independent))
        if endsSegment { completeParts.insert(position.sequenceNumber) }
    }

    /// The regular playlist after a segment was stored (or the stream ended); the parts of segments that
    /// left it are forgotten.
    public mutating func update(base: MediaPlaylist) {
        self.base = base
        parts = parts.filter { $0.key >= base.mediaSequence }
        completeParts = completeParts.filter { $0 >= openSequenceNumber }
        discontinuousParts = discontinuousParts.filter { $0 >= openSequenceNumber }
    }

    /// Whether the part is listed (or will never be: it belongs to a segment that is complete without it).
    public func holdsPart(_ position: Position) -> Bool {
        (parts[position.sequenceNumber]?.count ?? 0) > position.part
    }

    /// Whether a blocking request for segment `sequenceNumber` (and `part` of it) can be answered now:
    /// the playlist holds that segment whole, or that part, or the stream has ended.
    public func satisfies(sequenceNumber: Int, part: Int?) -> Bool {
        if isEnded || sequenceNumber <= lastSequenceNumber { return true }
        guard let part, sequenceNumber == openSequenceNumber else { return false }
        return holdsPart(Position(sequenceNumber: sequenceNumber, part: part))
    }

    /// Checks a blocking request's parameters (RFC 8216bis 6.2.5.2).
    public func check(sequenceNumber: Int?, part: Int?) throws(RequestError) {
        if part != nil && sequenceNumber == nil { throw .partWithoutSequenceNumber }
        if let sequenceNumber, sequenceNumber > lastSequenceNumber + 2 {
            throw .tooFarAhead(lastSequenceNumber: lastSequenceNumber)
        }
    }

    /// The playlist to serve: SERVER-CONTROL and PART-INF, the parts of the last three target durations,
    /// the open segment's parts and the preload hint; with `skip`, the segments more than CAN-SKIP-UNTIL
    /// from the end become one EXT-X-SKIP.
    public func playlist(skip: Skip = .none, renditionReports: [MediaPlaylist.RenditionReport] = []) -> MediaPlaylist {
        var playlist = base
        let target = Double(base.targetDurationSeconds)
        let skipUntil = target * Self.skipTargetDurations
        playlist.partTargetSeconds = partTargetSeconds
        playlist.serverControl = MediaPlaylist.ServerControl(
            canBlockReload: true, partHoldBackSeconds: partTargetSeconds * Self.partHoldBackTargets,
            canSkipUntilSeconds: skipUntil)
        playlist.trailingParts = isEnded ? [] : parts[openSequenceNumber] ?? []
        playlist.trailingPartsFollowDiscontinuity = !playlist.trailingParts.isEmpty
            && discontinuousParts.contains(openSequenceNumber)
        if !isEnded {
            let hint = nextPart
            playlist.preloadHintURI = Self.partURI(sequenceNumber: hint.sequenceNumber, part: hint.part)
        }
        // Distance from each segment's start to the end of the playlist, newest first.
        var fromEnd = playlist.trailingParts.reduce(0) { $0 + $1.durationSeconds }
        var startsFromEnd = Array(repeating: 0.0, count: playlist.segments.count)
        for index in playlist.segments.indices.reversed() {
            fromEnd += playlist.segments[index].durationSeconds
            startsFromEnd[index] = fromEnd
        }
        for index in playlist.segments.indices {
            let ending = startsFromEnd[index] - playlist.segments[index].durationSeconds
            if ending < target * Self.listedPartTargetDurations {
                playlist.segments[index].parts = parts[base.mediaSequence + index] ?? []
            }
        }
        if skip != .none {
            let skipped = startsFromEnd.prefix { $0 > skipUntil }.count
            if skipped > 0 {
                playlist.segments.removeFirst(skipped)
                playlist.skippedSegments = skipped
                playlist.skipVersion2 = skip == .segmentsAndDateRanges
            }
        }
        playlist.renditionReports = renditionReports
        return playlist
    }
}
