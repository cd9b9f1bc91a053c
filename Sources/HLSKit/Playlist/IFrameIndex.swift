import Foundation

/// The I-frames of a video rendition, for its I-frame playlist (RFC 8216bis 4.4.3.6): one entry per
/// segment that starts with a sync sample, a byte range from its fragment's `moof` through that sample's
/// bytes (one picture), lasting until the next I-frame. Keyframes inside a segment are not listed.
public struct IFrameIndex: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        var uri: String
        var mapURI: String
        var discontinuity: Bool
        var range: MediaPlaylist.ByteRange
        var presentationTicks: Int64
        /// Where the entry's segment ends: the last I-frame of a segment lasts until then.
        var segmentEndTicks: Int64
        var timescale: Timescale
        var programDateTime: Date?
    }

    private(set) var entries: [Entry] = []
    /// Entries that left a live window.
    public private(set) var removedCount = 0
    public private(set) var removedDiscontinuities = 0
    /// The lines of every entry but the last, whose duration waits for the next I-frame.
    private var rendered = RenderedSegments()
    /// Entries that start with EXT-X-DISCONTINUITY.
    private var discontinuities = 0

    /// Equal when they hold the same entries.
    public static func == (lhs: IFrameIndex, rhs: IFrameIndex) -> Bool {
        lhs.entries == rhs.entries && lhs.removedCount == rhs.removedCount
            && lhs.removedDiscontinuities == rhs.removedDiscontinuities
    }

    public init() {}

    /// Adds the leading sync sample of `video` in a stored fragment of `segment`.
    /// `firstFragment` is the segment's first part when the file holds several fragments (LL-HLS):
    /// its I-frames are found there, and `fragmentSize` is that fragment's.
    public mutating func add(segment: Segment, uri: String, mapURI: String, discontinuity: Bool,
                             video: TrackDescription, fragmentSize: Int, programDateTime: Date? = nil,
                             firstFragment: Segment? = nil) {
        guard let run = segment.tracks.first(where: { $0.trackID == video.trackID }), let first = run.samples.first
        else { return }
        let start = first.decodeTime + Int64(first.compositionOffset)
        let end = start + run.samples.reduce(Int64(0)) { $0 + Int64($1.durationTicks) }
        guard let range = MediaFragment.leadingSyncSampleRange(of: video.trackID, in: (firstFragment ?? segment).tracks,
                                                               fragmentSize: fragmentSize)
        else { return }
        entries.append(Entry(uri: uri, mapURI: mapURI, discontinuity: discontinuity,
                             range: MediaPlaylist.ByteRange(length: range.length, offset: range.offset),
                             presentationTicks: range.presentationTime, segmentEndTicks: end,
                             timescale: video.timescale,
                             programDateTime: programDateTime))
        if discontinuity { discontinuities += 1 }
        // An entry's duration is known once the next one is there.
        while rendered.count < entries.count - 1 { rendered.append(self.segment(at: rendered.count)) }
    }

    /// Drops the entries of segments that left a live window.
    public mutating func remove(segmentURIs: Set<String>) {
        while let first = entries.first, segmentURIs.contains(first.uri) {
            if first.discontinuity {
                removedDiscontinuities += 1
                discontinuities -= 1
            }
            entries.removeFirst()
            if rendered.count > 0 { rendered.removeFirst() }
            removedCount += 1
        }
    }

    private func durationTicks(at index: Int) -> Int64 {
        let entry = entries[index]
        if index + 1 < entries.count, !entries[index + 1].discontinuity,
           entries[index + 1].presentationTicks > entry.presentationTicks,
           entries[index + 1].presentationTicks <= entry.segmentEndTicks + entry.timescale.perSecond {
            return entries[index + 1].presentationTicks - entry.presentationTicks
        }
        return max(1, entry.segmentEndTicks - entry.presentationTicks)
    }

    /// The I-frame playlist; `firstSequenceNumber` is the media sequence of the first entry ever added.
    public func playlist(playlistType: MediaPlaylist.PlaylistType?, targetDurationSeconds: Int? = nil,
                         firstSequenceNumber: Int = 1) -> MediaPlaylist {
        let segments = entries.indices.map(segment(at:))
        let target = targetDurationSeconds
            ?? MediaPlaylist.targetDuration(forSegmentDurations: segments.map(\.durationSeconds))
        return MediaPlaylist(targetDurationSeconds: target, mediaSequence: firstSequenceNumber + removedCount,
                             discontinuitySequence: removedDiscontinuities, playlistType: playlistType,
                             iFramesOnly: true, segments: segments)
    }

    private func segment(at index: Int) -> MediaPlaylist.Segment {
        let entry = entries[index]
        return MediaPlaylist.Segment(uri: entry.uri, durationSeconds: entry.timescale.seconds(durationTicks(at: index)),
                                     mapURI: entry.mapURI, discontinuity: entry.discontinuity,
                                     programDateTime: entry.programDateTime, byteRange: entry.range)
    }

    /// The text of a live I-frame playlist, `playlist(…)` rendered, from the lines rendered as entries
    /// came: what an update costs does not grow with the window.
    public func render(playlistType: MediaPlaylist.PlaylistType?, targetDurationSeconds: Int,
                       firstSequenceNumber: Int = 1, endList: Bool) -> String {
        var header = MediaPlaylist(targetDurationSeconds: targetDurationSeconds,
                                   mediaSequence: firstSequenceNumber + removedCount,
                                   discontinuitySequence: removedDiscontinuities, playlistType: playlistType,
                                   iFramesOnly: true, segments: entries.isEmpty ? [] : [segment(at: entries.count - 1)])
        header.endList = endList
        var state = MediaPlaylist.RenderState()
        var text = header.renderHeader(listsDiscontinuity: discontinuities > 0)
        text += rendered.text(segment: segment(at:), state: &state)
        if !entries.isEmpty { text += MediaPlaylist.render(segment(at: entries.count - 1), state: &state) }
        return text + header.renderTrailer()
    }

    /// The highest rate of one entry: its bytes over its duration, bits per second.
    public var peakBitrate: Int {
        entries.indices.map { index in
            Int(Int64(entries[index].range.length) * 8 * entries[index].timescale.perSecond / durationTicks(at: index))
        }.max() ?? 0
    }

    public var averageBitrate: Int {
        let bits = entries.reduce(Int64(0)) { $0 + Int64($1.range.length) * 8 }
        let seconds = entries.indices.reduce(0.0) { $0 + entries[$1].timescale.seconds(durationTicks(at: $1)) }
        return seconds > 0 ? Int(Double(bits) / seconds) : 0
    }
}
