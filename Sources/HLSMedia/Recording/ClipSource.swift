import HLSKit

/// Parts of recordings joined into one timeline, copied: each part from the last video keyframe at or
/// before its start (the only place a copy can start) to its end, the next part's first picture shown
/// right when the part before's last one ends, so a gap in the recording is closed rather than played
/// as a frozen picture. Sound runs on from the part before without a gap: the part moves by up to half a
/// frame so that its first sound follows on exactly, picture and sound as the recording had them; where
/// that is not enough, the sound alone moves by up to half an AAC frame (about 10 ms at 48 kHz), or its
/// first sample is left out when it would overlap more.
///
/// A copied AAC join cannot be sample-exact: the decoder overlaps each frame with the one before, so
/// the frame at a join carries up to one AAC frame (21 ms at 48 kHz) of the sound just past the cut,
/// fading into the next part's, as any copy joining AAC has it.
///
/// Every part must have the first part's tracks: a clip is one init section.
public final class ClipSource: SampleSource {
    public struct Part: Sendable, Equatable {
        public var path: String
        /// Microseconds from the file's first sample.
        public var startMicroseconds: Int64
        /// Microseconds from the file's first sample; nil: to its end.
        public var endMicroseconds: Int64?

        public init(path: String, startMicroseconds: Int64, endMicroseconds: Int64?) {
            self.path = path
            self.startMicroseconds = startMicroseconds
            self.endMicroseconds = endMicroseconds
        }
    }

    public let tracks: [TrackDescription]
    public var cutMicroseconds: [Int64] { [] }
    public var inputTimeOffsetMicroseconds: Int64 { 0 }
    /// How much earlier than asked each part's first picture is, microseconds: its start moved back to a
    /// keyframe (negative when the part has no keyframe before its start and began at the first one after it).
    public private(set) var movedMicroseconds: [Int64] = []

    private let parts: [Part]
    private var index = 0
    private var current: CopySource
    /// The track samples are cut by: the first video track, or the first track.
    private let leadTrack: Int
    /// Samples from the last lead keyframe before the current part's start, with their microseconds from
    /// the part's origin, held until the start is passed; then placed, ready to be handed out.
    private var held: [(sample: EncodedSample, time: Int64)] = []
    private var ready: [EncodedSample] = []
    /// The decode time of the part's first lead sample, microseconds: the file's first frame, which the
    /// recording's capture times (`prft`) are given for.
    private var origin: Int64?
    private var started = false
    /// The current part's end is passed on its lead track: the rest of its file is not read.
    private var partEnded = false
    /// Where the current part's samples go, less where they are in its file, per track.
    private var shift: [Int64]
    /// Per track, on the joined timeline: where its last sample placed ends (decode time plus duration),
    /// and the spacing of its last two samples, for a sample whose duration the file does not give.
    private var ends: [Int64?]
    private var spacing: [Int64?]
    /// Per track, the decode time of its last sample placed from the current part.
    private var lastInPart: [Int64?]
    /// Per track, whether the current part's samples follow on from the part before's.
    private var joined: [Bool]
    /// A part that follows another has begun: its samples are held until its first sound, and this is how
    /// far its pictures move to follow the part before's.
    private var pendingJoinMicroseconds: Int64?
    /// How many samples of a joined part are held at most for its first sound.
    static let joinLookaheadSamples = 64
    /// Where the lead track's last picture placed stops being shown, microseconds on the joined timeline.
    private var leadPresentationEnd: Int64?

    /// How far past a part's end its file is still read for samples of other tracks before the end.
    static let interleaveMicroseconds: Int64 = 1_000_000

    public init(parts: [Part]) throws {
        precondition(!parts.isEmpty, "a clip has at least one part")
        self.parts = parts
        current = try Self.open(parts[0].path)
        tracks = current.tracks
        leadTrack = tracks.firstIndex(where: \.isVideo) ?? 0
        shift = Array(repeating: 0, count: tracks.count)
        ends = Array(repeating: nil, count: tracks.count)
        spacing = Array(repeating: nil, count: tracks.count)
        lastInPart = Array(repeating: nil, count: tracks.count)
        joined = Array(repeating: false, count: tracks.count)
    }

    private static func open(_ path: String) throws -> CopySource {
        try CopySource(demuxer: FileDemuxer(path: path))
    }

    public func nextSample() throws -> EncodedSample? {
        while true {
            if !ready.isEmpty { return ready.removeFirst() }
            guard !partEnded, let sample = try current.nextSample() else {
                guard try openNextPart() else { return nil }
                continue
            }
            if let placed = take(sample) { return placed }
        }
    }

    /// The sample as the clip places it, nil when it is before the part's start or after its end.
    private func take(_ source: EncodedSample) -> EncodedSample? {
        let part = parts[index]
        let timescale = tracks[source.track].timescale
        let decodeMicroseconds = timescale.convert(source.decodeTime, to: .microseconds)
        if source.track == leadTrack, origin == nil { origin = decodeMicroseconds }
        let sinceFileStart = decodeMicroseconds - (origin ?? current.startMicroseconds)
        if let end = part.endMicroseconds, sinceFileStart >= end {
            // Other tracks may still hold samples before the end a little further on.
            if source.track == leadTrack, sinceFileStart >= end + Self.interleaveMicroseconds { partEnded = true }
            return nil
        }
        guard started else {
            hold(source, at: sinceFileStart, start: part.startMicroseconds)
            return nil
        }
        if let join = pendingJoinMicroseconds {
            held.append((source, sinceFileStart))
            if source.track != leadTrack || held.count >= Self.joinLookaheadSamples { settle(join) }
            return nil
        }
        return placed(source)
    }

    /// Before the start: keeps the samples from the last lead keyframe shown at or before it, and starts
    /// once a lead sample passes the start (or at the first keyframe after it, when none came before).
    private func hold(_ sample: EncodedSample, at sinceFileStart: Int64, start: Int64) {
        let isLead = sample.track == leadTrack
        if isLead, sample.isSync, sinceFileStart <= start || held.isEmpty {
            held = [(sample, sinceFileStart)]
            if sinceFileStart >= start { begin(asked: start) }
            return
        }
        guard let key = held.first else { return }
        if !isLead, sinceFileStart < key.time { return }
        held.append((sample, sinceFileStart))
        if isLead, sinceFileStart > start { begin(asked: start) }
    }

    /// The part begins with the held keyframe; `start` is where it was asked to, microseconds from the
    /// file's start.
    private func begin(asked start: Int64) {
        let key = held[0].sample
        let leadTimescale = tracks[leadTrack].timescale
        movedMicroseconds.append(start - held[0].time)
        // The first part stays where it is; a later one's first picture follows the last one shown.
        let keyPresentation = leadTimescale.convert(key.presentationTime, to: .microseconds)
        let shiftMicroseconds = leadPresentationEnd.map { $0 - keyPresentation } ?? 0
        started = true
        lastInPart = Array(repeating: nil, count: tracks.count)
        joined = Array(repeating: false, count: tracks.count)
        // A join with sound waits for the part's first sound to settle where it goes.
        if leadPresentationEnd != nil, tracks.indices.contains(where: { $0 != leadTrack && ends[$0] != nil }) {
            pendingJoinMicroseconds = shiftMicroseconds
            return
        }
        settle(shiftMicroseconds)
    }

    /// Places the held samples of a part moved by `shiftMicroseconds`, or so much less that its first
    /// sound follows the part before's with no gap when that moves the pictures by at most half a frame:
    /// then picture and sound stay exactly as the recording had them.
    private func settle(_ shiftMicroseconds: Int64) {
        var shiftMicroseconds = shiftMicroseconds
        if let sound = held.first(where: { $0.sample.track != leadTrack })?.sample, let end = ends[sound.track] {
            let timescale = tracks[sound.track].timescale
            let gap = timescale.convert(sound.decodeTime - end, to: .microseconds) + shiftMicroseconds
            let frame = tracks[leadTrack].timescale.convert(spacing[leadTrack] ?? 0, to: .microseconds)
            if abs(gap) <= frame / 2 { shiftMicroseconds -= gap }
        }
        shift = tracks.map { Timescale.microseconds.convert(shiftMicroseconds, to: $0.timescale) }
        pendingJoinMicroseconds = nil
        ready += held.compactMap { placed($0.sample) }
        held = []
    }

    /// The sample on the joined timeline; nil for a sample of sound that would overlap the part before's.
    private func placed(_ source: EncodedSample) -> EncodedSample? {
        var sample = source
        let track = sample.track
        sample.decodeTime += shift[track]
        if track != leadTrack, !joined[track], let end = ends[track] {
            // Sound runs on without a gap or an overlap: it moves by less than half a sample to follow on.
            let gap = sample.decodeTime - end
            let half = (spacing[track] ?? 0) / 2
            if gap < -half { return nil }
            if gap <= half { shift[track] -= gap }
            sample.decodeTime -= gap <= half ? gap : 0
            joined[track] = true
        }
        if let last = lastInPart[track], sample.decodeTime > last { spacing[track] = sample.decodeTime - last }
        lastInPart[track] = sample.decodeTime
        let duration = sample.durationHint ?? spacing[track] ?? 0
        ends[track] = sample.decodeTime + duration
        if track == leadTrack {
            let shown = tracks[track].timescale.convert(sample.presentationTime + duration, to: .microseconds)
            leadPresentationEnd = max(leadPresentationEnd ?? shown, shown)
        }
        return sample
    }

    /// Moves on to the next part; false after the last.
    private func openNextPart() throws -> Bool {
        guard index + 1 < parts.count else { return false }
        index += 1
        let path = parts[index].path
        let next = try Self.open(path)
        guard next.tracks.map(\.format) == tracks.map(\.format) else {
            throw CopyError(path: path, reason: "its encoding differs from \(parts[0].path)'s, and a clip is one "
                + "encoding; export the range in two parts, split where this file starts")
        }
        current = next
        held = []
        origin = nil
        started = false
        partEnded = false
        return true
    }
}
