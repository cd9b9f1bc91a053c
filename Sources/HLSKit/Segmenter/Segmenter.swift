/// Cuts a stream of encoded samples into IDR-aligned segments.
///
/// A pure state machine: samples go in (decode order per track, tracks roughly interleaved), finished
/// segments come out; no clocks, threads or files.
///
/// - The lead track (the first video track, else the first track) decides the cuts: a segment starts at
///   the first lead sync sample whose presentation time is at or after `start + k·T`, or at or after an
///   explicit cut point (a chapter, a time asked for, an operator's mark).
/// - One delta, fixed by the first lead sync sample, puts that sample's presentation at `startOffset`
///   (10 s); the same delta, rescaled, applies to every other track, so the source's A/V offset and an
///   input's audio priming (decode times before the first frame) are kept without an edit list.
/// - Other video tracks (the rungs of a ladder, IDRs on the same grid) are cut at their own first sync
///   sample presented at or after the lead's cut, so segment N of every rung starts with an IDR at
///   the same time.
/// - Audio samples go to the segment whose time range holds their decode time; a segment is
///   emitted only once every track has moved past its end, so the last durations are known.
/// - A sample's duration is the next sample's decode time minus its own, so `tfdt` is continuous.
/// - With a part duration (LL-HLS), each segment is also cut into parts as its samples arrive: a part
///   holds the lead samples that end within the part duration of its first one, and every other
///   track's samples that start before the part ends; `takeParts` hands them out, and the segment
///   lists them all (its last part, marked as such, is cut when the segment closes), so no part exceeds
///   the duration.
/// - With `chunksParts`, each part is also handed out as it grows: a chunk holds the lead samples whose
///   durations became known since the last chunk, and the other tracks' samples that start before the
///   last of them ends, so a server can send a part's first frames before the part is whole.
public struct Segmenter: Sendable {
    public struct Track: Sendable, Equatable {
        public var timescale: Timescale
        public var isVideo: Bool

        public init(timescale: Timescale, isVideo: Bool) {
            self.timescale = timescale
            self.isVideo = isVideo
        }
    }

    public struct Configuration: Sendable, Equatable {
        public var tracks: [Track]
        public var segmentMilliseconds: Int64
        public var startOffsetSeconds: Int64
        public var firstSequenceNumber: Int
        /// Cut each segment into parts of at most this long (LL-HLS); nil cuts none.
        public var partMilliseconds: Int64?
        /// Explicit cut points, in the lead track's source time (before the delta), ticks of its timescale.
        public var cutTicks: [Int64]
        /// Hand out each part in chunks as its samples become known (`takePieces`); only with parts.
        public var chunksParts = false

        /// Where the first frame is presented: late enough that AAC priming never makes a decode time negative.
        public static let defaultStartOffsetSeconds: Int64 = 10

        public init(tracks: [Track], segmentMilliseconds: Int64 = 2000,
                    startOffsetSeconds: Int64 = defaultStartOffsetSeconds,
                    firstSequenceNumber: Int = 1, cutTicks: [Int64] = [], partMilliseconds: Int64? = nil) {
            self.partMilliseconds = partMilliseconds
            self.tracks = tracks
            self.segmentMilliseconds = segmentMilliseconds
            self.startOffsetSeconds = startOffsetSeconds
            self.firstSequenceNumber = firstSequenceNumber
            self.cutTicks = cutTicks
        }

        /// The track that leads the cuts: the video, or else the first.
        public var leadTrack: Int { tracks.firstIndex(where: \.isVideo) ?? 0 }

        /// The part duration in ticks of `track`'s timescale; nil without parts.
        func partTicks(track: Int) -> Int64? {
            partMilliseconds.map { tracks[track].timescale.ticks(milliseconds: $0) }
        }

        /// The longest piece of a part a playlist timed by `track` lists: the part duration on the lead
        /// track; on another, whole samples of `sampleTicks` until they last the part duration, so its
        /// last sample may end past it (16 AAC frames at 48 kHz, 0.341 s, for a 0.334 s part). Nil
        /// without parts.
        public func longestPartSeconds(track: Int, sampleTicks: Int64) -> Double? {
            guard let partMilliseconds, let partTicks = partTicks(track: track) else { return nil }
            guard track != leadTrack, sampleTicks > 0 else { return Double(partMilliseconds) / 1000 }
            let samples = (partTicks + sampleTicks - 1) / sampleTicks
            return max(Double(partMilliseconds) / 1000, tracks[track].timescale.seconds(samples * sampleTicks))
        }
    }

    /// What the segmenter hands out for LL-HLS, in order: a part's chunks come before the part.
    public enum PartPiece: Sendable, Equatable {
        /// Samples of the open part, once their durations are known.
        case chunk(Segment)
        /// A whole part, once its end is known; with `chunksParts`, its `chunks` are what it was handed
        /// out as, the last of them just before it.
        case part(Segment)
    }

    /// Samples the segmenter had to leave out, for the caller's summary.
    public struct Discarded: Sendable, Equatable {
        /// Lead samples before the first sync sample (nothing can decode them).
        public var beforeFirstSync = 0
        /// Samples that would land before time zero.
        public var beforeTimeZero = 0
    }

    private struct Cut {
        var leadDecodeTime: Int64
        var leadPresentationTime: Int64
        /// The segment that starts here follows EXT-X-DISCONTINUITY.
        var startsDiscontinuity = false
    }

    /// Where an explicit cut point asked for a segment to start, and where it started: the first lead
    /// sync sample at or after it. Ticks of the lead timescale, output time.
    public struct PlacedCut: Sendable, Equatable {
        public var askedTicks: Int64
        public var placedTicks: Int64
    }

    public let configuration: Configuration
    public let leadTrack: Int
    public private(set) var discarded = Discarded()
    /// Every explicit cut point passed so far, with where its segment started.
    public private(set) var placedCuts: [PlacedCut] = []

    private var deltas: [Int64]?
    private var waiting: [EncodedSample] = []
    private var held: [EncodedSample?]
    private var lastDurations: [Int64?]
    private var ended: [Bool]
    private var finished: [[TimedSample]]
    private var cuts: [Cut] = []
    private var segmentStart: Int64?
    /// The boundaries, ticks from the first lead sample; explicit cut points join it once the delta is fixed.
    private var grid: SegmentGrid
    /// Ticks from the first lead sample to the last cut placed.
    private var lastCutTicks: Int64 = 0
    /// Explicit cut points in source time that wait for the delta.
    private var sourceCutTicks: [Int64]
    /// The explicit cut points whose segment follows a discontinuity: grid ticks, and source ticks that
    /// wait for the delta.
    private var discontinuityCutTicks: Set<Int64> = []
    private var sourceDiscontinuityTicks: [Int64] = []
    /// The open segment starts at a cut that asked for a discontinuity.
    private var openSegmentFollowsDiscontinuity = false
    private var nextSequenceNumber: Int
    /// Samples of each track already handed out in parts of the open segment: searches for the next part's
    /// samples start there, so they cover about a part's samples however long the segment.
    private var partCounts: [Int]
    /// The open segment's parts so far, and the parts and chunks not yet taken.
    private var openParts: [Segment] = []
    private var untakenPieces: [PartPiece] = []
    /// Samples of each track already handed out in chunks of the open segment (at least `partCounts`).
    private var chunkCounts: [Int]
    /// The open part's chunks so far, and how many chunks the open segment has had.
    private var openChunks: [Segment] = []
    private var segmentChunkCount = 0

    public init(configuration: Configuration) {
        precondition(!configuration.tracks.isEmpty, "a stream needs at least one track")
        precondition(configuration.segmentMilliseconds > 0, "segments need a positive duration")
        self.configuration = configuration
        leadTrack = configuration.leadTrack
        let count = configuration.tracks.count
        held = Array(repeating: nil, count: count)
        lastDurations = Array(repeating: nil, count: count)
        ended = Array(repeating: false, count: count)
        finished = Array(repeating: [], count: count)
        partCounts = Array(repeating: 0, count: count)
        chunkCounts = partCounts
        nextSequenceNumber = configuration.firstSequenceNumber
        grid = SegmentGrid(segmentMilliseconds: configuration.segmentMilliseconds,
                           timescale: configuration.tracks[leadTrack].timescale)
        sourceCutTicks = configuration.cutTicks
    }

    private var leadTimescale: Timescale { configuration.tracks[leadTrack].timescale }
    private var startTicks: Int64 { configuration.startOffsetSeconds * leadTimescale.perSecond }
    /// Whether a lead sync sample at `presentationTime` (lead ticks, after the delta) starts a new segment.
    /// Encoders call this to decide where to force an IDR.
    public func startsSegment(atPresentationTime presentationTime: Int64) -> Bool {
        segmentStart != nil && grid.reachesBoundary(presentationTime - startTicks, after: lastCutTicks)
    }

    /// Adds an explicit cut point while the stream runs, in the lead track's source time: the first lead
    /// sync sample at or after it starts a segment. With `startsDiscontinuity`, that segment (and its first
    /// part) is marked `followsDiscontinuity`: a capture device came back.
    public mutating func addCut(atSourceTicks sourceTicks: Int64, startsDiscontinuity: Bool = false) {
        guard let leadDelta else {
            sourceCutTicks.append(sourceTicks)
            if startsDiscontinuity { sourceDiscontinuityTicks.append(sourceTicks) }
            return
        }
        let ticks = sourceTicks + leadDelta - startTicks
        grid.addCut(atTicks: ticks)
        if startsDiscontinuity { discontinuityCutTicks.insert(ticks) }
    }

    /// The delta that maps the lead track's source time to output time, once the first sync sample fixed it.
    public var leadDelta: Int64? { deltas?[leadTrack] }

    public mutating func append(_ input: EncodedSample) -> [Segment] {
        precondition(configuration.tracks.indices.contains(input.track), "unknown track \(input.track)")
        precondition(!ended[input.track], "track \(input.track) already ended")
        var sample = input
        // Every audio sample is a random-access point.
        if !configuration.tracks[sample.track].isVideo { sample.isSync = true }
        guard deltas != nil else {
            waitForFirstSync(sample)
            return drainWithParts()
        }
        place(sample)
        return drainWithParts()
    }

    /// The parts cut since the last call, in order; each segment's parts come before the segment.
    /// Chunks cut since the last call are dropped: `takePieces` hands out both.
    public mutating func takeParts() -> [Segment] {
        takePieces().compactMap { piece in
            guard case .part(let part) = piece else { return nil }
            return part
        }
    }

    /// The chunks and parts cut since the last call, in order; each segment's parts come before the segment.
    public mutating func takePieces() -> [PartPiece] {
        defer { untakenPieces = [] }
        return untakenPieces
    }

    private mutating func drainWithParts() -> [Segment] {
        let segments = drain()
        cutParts()
        return segments
    }

    /// Ends the stream: every held sample is placed and the last segment (never an empty one) is emitted.
    public mutating func finish() -> [Segment] {
        for track in configuration.tracks.indices {
            if let last = held[track] {
                let duration = last.durationHint.flatMap { $0 > 0 ? $0 : nil }
                    ?? lastDurations[track] ?? fallbackDuration(track)
                finished[track].append(timed(last, duration: duration))
                held[track] = nil
            }
            ended[track] = true
        }
        var segments = drainWithParts()
        if finished.contains(where: { !$0.isEmpty }), let start = segmentStart {
            let all = finished.map { $0.count }
            segments.append(makeSegment(start: start, counts: all))
            segmentStart = nil
        }
        return segments
    }

    private mutating func waitForFirstSync(_ sample: EncodedSample) {
        guard sample.track == leadTrack else {
            waiting.append(sample)
            return
        }
        guard sample.isSync else {
            discarded.beforeFirstSync += 1
            return
        }
        let leadDelta = startTicks - sample.presentationTime
        deltas = configuration.tracks.map { track in
            leadTimescale.convert(leadDelta, to: track.timescale)
        }
        segmentStart = startTicks
        for cut in sourceCutTicks { grid.addCut(atTicks: cut + leadDelta - startTicks) }
        // A cut at or before the first frame starts no segment of its own: the stream's first has nothing to follow.
        discontinuityCutTicks = Set(sourceDiscontinuityTicks.map { $0 + leadDelta - startTicks }.filter { $0 > 0 })
        sourceCutTicks = []
        sourceDiscontinuityTicks = []
        place(sample)
        let early = waiting
        waiting = []
        for other in early { place(other) }
    }

    private mutating func place(_ source: EncodedSample) {
        let track = source.track
        var sample = source
        sample.decodeTime += deltas![track]
        guard sample.decodeTime >= 0 else {
            discarded.beforeTimeZero += 1
            return
        }
        if let previous = held[track] {
            // Decode times must increase for durations to be positive; a repeated time moves one tick on.
            sample.decodeTime = max(sample.decodeTime, previous.decodeTime + 1)
            let duration = sample.decodeTime - previous.decodeTime
            finished[track].append(timed(previous, duration: duration))
            lastDurations[track] = duration
            if track == leadTrack, sample.isSync, startsSegment(atPresentationTime: sample.presentationTime) {
                let discontinuity = notePlacedCuts(atTicks: sample.presentationTime - startTicks)
                cuts.append(Cut(leadDecodeTime: sample.decodeTime, leadPresentationTime: sample.presentationTime,
                                startsDiscontinuity: discontinuity))
            }
        }
        held[track] = sample
    }

    /// Records the explicit cut points a cut at `ticks` placed; true when one of them asked for a discontinuity.
    private mutating func notePlacedCuts(atTicks ticks: Int64) -> Bool {
        var discontinuity = false
        for asked in grid.cutTicks where asked > lastCutTicks && asked <= ticks {
            placedCuts.append(PlacedCut(askedTicks: startTicks + asked, placedTicks: startTicks + ticks))
            if discontinuityCutTicks.remove(asked) != nil { discontinuity = true }
        }
        lastCutTicks = ticks
        return discontinuity
    }

    /// Emits every segment whose end is known on all tracks.
    private mutating func drain() -> [Segment] {
        var segments: [Segment] = []
        while let cut = cuts.first, let start = segmentStart, isReady(cut) {
            let counts = configuration.tracks.indices.map { track in
                if track == leadTrack { return finished[track].prefix { $0.decodeTime < cut.leadDecodeTime }.count }
                if let own = ownCutIndex(track: track, cut: cut) { return own }
                return finished[track].prefix { isBefore($0.decodeTime, track: track, cut: cut) }.count
            }
            segments.append(makeSegment(start: start, counts: counts))
            segmentStart = cut.leadPresentationTime
            openSegmentFollowsDiscontinuity = cut.startsDiscontinuity
            cuts.removeFirst()
        }
        return segments
    }

    /// A segment can close once every other track holds a sample at or past the cut (or has ended),
    /// which means all of its samples before the cut have their durations.
    private func isReady(_ cut: Cut) -> Bool {
        configuration.tracks.indices.allSatisfy { track in
            if track == leadTrack || ended[track] { return true }
            guard let next = held[track] else { return false }
            if configuration.tracks[track].isVideo, !isPastFollowLimit(next.decodeTime, track: track, cut: cut) {
                return ownCutIndex(track: track, cut: cut) != nil
            }
            return !isBefore(next.decodeTime, track: track, cut: cut)
        }
    }

    /// Another video track (a rung of a ladder, encoded with IDRs on the same grid) is cut at its own
    /// first sync sample presented at or after the cut, so that every rung's segment starts with an IDR;
    /// nil while that sample has not arrived. "At" is within the grid's tolerance: a rung encoded from a
    /// copied source in another timescale can have its IDR a rounding tick before the source's keyframe.
    private func ownCutIndex(track: Int, cut: Cut) -> Int? {
        guard configuration.tracks[track].isVideo else { return nil }
        let scale = configuration.tracks[track].timescale.perSecond
        let cutTime = (cut.leadPresentationTime - grid.toleranceTicks) * scale
        let startsAtOrAfterCut = { (decodeTime: Int64, compositionOffset: Int32, isSync: Bool) in
            isSync && (decodeTime + Int64(compositionOffset)) * self.leadTimescale.perSecond >= cutTime
        }
        if let index = finished[track].firstIndex(where: {
            startsAtOrAfterCut($0.decodeTime, $0.compositionOffset, $0.isSync)
        }) {
            return index
        }
        if let next = held[track], startsAtOrAfterCut(next.decodeTime, next.compositionOffset, next.isSync) {
            return finished[track].count
        }
        if let next = held[track], isPastFollowLimit(next.decodeTime, track: track, cut: cut) {
            return nil
        }
        return ended[track] ? finished[track].count : nil
    }

    /// A video track without a sync sample a whole segment past the cut has no IDR on the grid; it is
    /// cut by decode time instead, rather than held forever.
    private func isPastFollowLimit(_ decodeTime: Int64, track: Int, cut: Cut) -> Bool {
        let limit = cut.leadPresentationTime + grid.boundary(1)
        return decodeTime * leadTimescale.perSecond >= limit * configuration.tracks[track].timescale.perSecond
    }

    private func isBefore(_ decodeTime: Int64, track: Int, cut: Cut) -> Bool {
        isBefore(decodeTime, track: track, leadTime: cut.leadPresentationTime)
    }

    private func isBefore(_ decodeTime: Int64, track: Int, leadTime: Int64) -> Bool {
        decodeTime * leadTimescale.perSecond < leadTime * configuration.tracks[track].timescale.perSecond
    }

    private mutating func makeSegment(start: Int64, counts: [Int]) -> Segment {
        var parts: [Segment] = []
        if configuration.partMilliseconds != nil {
            // Full parts first, then what is left before the cut as the segment's last part.
            while let part = nextPart(limits: counts) { emit(part) }
            let rest = counts.indices.map { max(0, counts[$0] - partCounts[$0]) }
            if rest.contains(where: { $0 > 0 }) {
                // A part is full only once a later lead sample is known, so the last one is always this rest.
                var last = makePart(counts: rest)
                last.endsSegment = true
                emit(last)
            }
            parts = openParts
            openParts = []
            partCounts = partCounts.indices.map { _ in 0 }
            chunkCounts = partCounts
            segmentChunkCount = 0
        }
        var tracks: [FragmentTrack] = []
        for (track, count) in counts.enumerated() where count > 0 {
            let samples = Array(finished[track].prefix(count))
            finished[track].removeFirst(count)
            tracks.append(FragmentTrack(trackID: UInt32(track + 1),
                                        baseDecodeTime: UInt64(samples[0].decodeTime), samples: samples))
        }
        let timing = tracks.first { $0.trackID == UInt32(leadTrack + 1) } ?? tracks[0]
        let timingScale = configuration.tracks[Int(timing.trackID) - 1].timescale
        let durationTicks = timing.samples.reduce(Int64(0)) { $0 + Int64($1.durationTicks) }
        defer { nextSequenceNumber += 1 }
        var segment = Segment(sequenceNumber: nextSequenceNumber, tracks: tracks,
                              startTicks: leadTimescale.convert(start, to: timingScale),
                              durationTicks: durationTicks, timescale: timingScale)
        segment.parts = parts
        segment.followsDiscontinuity = openSegmentFollowsDiscontinuity
        return segment
    }

    // MARK: Parts

    private var partTicks: Int64? { configuration.partTicks(track: leadTrack) }

    /// Cuts every part of the open segment whose end is known on all tracks, then a chunk of the next.
    private mutating func cutParts() {
        guard partTicks != nil, deltas != nil else { return }
        // Samples past a pending cut belong to the next segment.
        let limits = configuration.tracks.indices.map { track in
            guard let cut = cuts.first else { return finished[track].count }
            return countStarting(before: cut.leadDecodeTime, track: track)
        }
        while let part = nextPart(limits: limits, needsFollower: true) { emit(part) }
        if configuration.chunksParts { cutChunk(limits: limits) }
    }

    private mutating func emit(_ counts: [Int]) {
        emit(makePart(counts: counts))
    }

    private mutating func emit(_ part: Segment) {
        openParts.append(part)
        untakenPieces.append(.part(part))
    }

    /// Hands out what the open part is known to hold and no chunk has yet: its lead samples that end
    /// within the part duration (their durations known), and the other audio tracks' samples that
    /// start before the last of them ends, as `nextPart` will count them. Other video tracks (a ladder's
    /// rungs, cut at their own IDRs) wait for the part's last chunk.
    private mutating func cutChunk(limits: [Int]) {
        guard let end = leadEndOfOpenPart(limit: limits[leadTrack]), end > chunkCounts[leadTrack] else { return }
        let lead = finished[leadTrack]
        let edge = lead[end - 1].decodeTime + Int64(lead[end - 1].durationTicks)
        let ends = configuration.tracks.indices.map { track in
            if track == leadTrack { return end }
            if configuration.tracks[track].isVideo { return chunkCounts[track] }
            return max(chunkCounts[track],
                       min(countStarting(before: edge, track: track), limits[track], fittingEnd(track)))
        }
        emitChunk(ends: ends)
    }

    /// Where the open part's lead samples end within `limit`: after those that end within the part
    /// duration of its first (at least that one). Nil without parts or when it has no lead sample yet.
    private func leadEndOfOpenPart(limit: Int) -> Int? {
        guard let partTicks else { return nil }
        let lead = finished[leadTrack]
        let first = partCounts[leadTrack]
        guard first < limit else { return nil }
        let startTime = lead[first].decodeTime
        var end = first + 1
        while end < limit, lead[end].decodeTime + Int64(lead[end].durationTicks) - startTime <= partTicks { end += 1 }
        return end
    }

    /// Hands out a chunk of the open part: each track's samples from `chunkCounts` to `ends`.
    private mutating func emitChunk(ends: [Int]) {
        var tracks: [FragmentTrack] = []
        for track in ends.indices where ends[track] > chunkCounts[track] {
            let samples = Array(finished[track][chunkCounts[track]..<ends[track]])
            tracks.append(FragmentTrack(trackID: UInt32(track + 1),
                                        baseDecodeTime: UInt64(samples[0].decodeTime), samples: samples))
        }
        chunkCounts = ends
        var chunk = timedPiece(tracks)
        chunk.partIndex = openParts.count
        chunk.chunkIndex = segmentChunkCount
        segmentChunkCount += 1
        openChunks.append(chunk)
        untakenPieces.append(.chunk(chunk))
    }

    /// The sample counts of the next full part within `limits`: lead samples that end within the part
    /// duration of the first (at least one), and the other tracks' samples that start before it ends,
    /// as long as they have not filled the part duration yet (`longestPartSeconds`): an audio track
    /// that starts before the video would otherwise make the first audio parts a frame longer than
    /// any PART-TARGET, and one that is its own rendition lists its parts against that target.
    /// A part is full once a lead sample within the limits is known not to fit; with `needsFollower`,
    /// also only once every other track has a sample past its end. Nil when no full part is ready.
    private func nextPart(limits: [Int], needsFollower: Bool = false) -> [Int]? {
        guard let end = leadEndOfOpenPart(limit: limits[leadTrack]), end < limits[leadTrack] else { return nil }
        let lead = finished[leadTrack]
        let partEnd = lead[end].decodeTime
        var counts = partCounts
        counts[leadTrack] = end
        for track in configuration.tracks.indices where track != leadTrack {
            let before = countStarting(before: partEnd, track: track)
            if needsFollower, !ended[track] {
                // Every sample before the part's end is finished once a later one is known.
                let later = before < finished[track].count
                    || held[track].map { !isBefore($0.decodeTime, track: track, leadTime: partEnd) } ?? false
                guard later else { return nil }
            }
            counts[track] = max(partCounts[track], min(before, limits[track], fittingEnd(track)))
        }
        return counts.indices.map { counts[$0] - partCounts[$0] }
    }

    /// Where the next part of `track` ends at the latest: once its unhanded samples last the part
    /// duration (an index into `finished[track]`).
    private func fittingEnd(_ track: Int) -> Int {
        guard let partTicks = configuration.partTicks(track: track) else { return finished[track].count }
        var end = partCounts[track]
        var ticks: Int64 = 0
        while end < finished[track].count, ticks < partTicks {
            ticks += Int64(finished[track][end].durationTicks)
            end += 1
        }
        return end
    }

    /// How many finished samples of `track` start before `leadTime` (lead ticks), counted on from those
    /// already in parts: they all start before the last part's end, which no later limit precedes.
    private func countStarting(before leadTime: Int64, track: Int) -> Int {
        let samples = finished[track]
        var count = partCounts[track]
        while count < samples.count, isBefore(samples[count].decodeTime, track: track, leadTime: leadTime) { count += 1 }
        return count
    }

    /// A part of the open segment: the next `counts` unhanded samples of each track. With `chunksParts`,
    /// what no chunk held yet goes out as the part's last chunk first.
    private mutating func makePart(counts: [Int]) -> Segment {
        var tracks: [FragmentTrack] = []
        for (track, count) in counts.enumerated() where count > 0 {
            let samples = Array(finished[track][partCounts[track]..<(partCounts[track] + count)])
            partCounts[track] += count
            tracks.append(FragmentTrack(trackID: UInt32(track + 1),
                                        baseDecodeTime: UInt64(samples[0].decodeTime), samples: samples))
        }
        var part = timedPiece(tracks)
        part.partIndex = openParts.count
        part.followsDiscontinuity = openSegmentFollowsDiscontinuity && openParts.isEmpty
        if configuration.chunksParts {
            precondition(chunkCounts.indices.allSatisfy { chunkCounts[$0] <= partCounts[$0] },
                         "a chunk holds only samples of its part")
            if partCounts != chunkCounts { emitChunk(ends: partCounts) }
            part.chunks = openChunks
            openChunks = []
        }
        return part
    }

    /// A part or chunk of the open segment holding `tracks`, timed by the lead track when it has samples.
    private func timedPiece(_ tracks: [FragmentTrack]) -> Segment {
        let timing = tracks.first { $0.trackID == UInt32(leadTrack + 1) } ?? tracks[0]
        let timingScale = configuration.tracks[Int(timing.trackID) - 1].timescale
        return Segment(sequenceNumber: nextSequenceNumber, tracks: tracks,
                       startTicks: Int64(timing.samples[0].decodeTime) + Int64(timing.samples[0].compositionOffset),
                       durationTicks: timing.samples.reduce(Int64(0)) { $0 + Int64($1.durationTicks) },
                       timescale: timingScale)
    }

    private func timed(_ sample: EncodedSample, duration: Int64) -> TimedSample {
        TimedSample(decodeTime: sample.decodeTime, durationTicks: UInt32(clamping: duration),
                    compositionOffset: sample.compositionOffset,
                    isSync: configuration.tracks[sample.track].isVideo ? sample.isSync : true,
                    data: sample.data)
    }

    /// A last sample with no duration from the source lasts one 30 fps frame (video) or one AAC frame (audio).
    private func fallbackDuration(_ track: Int) -> Int64 {
        let description = configuration.tracks[track]
        return description.isVideo ? description.timescale.perSecond / 30 : 1024
    }
}
