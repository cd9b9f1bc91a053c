import Foundation

/// One rendition of a stream as its renderer keeps it: where its files go, its tracks and init section,
/// the playlist and I-frame index of the segments stored so far, and the rates they measured.
struct RenditionListing {
    let directory: String
    let policy: StreamRenderer.PlaylistPolicy
    var tracks: [TrackDescription] = []
    /// The tracks of earlier sections that had other parameters (CODECS lists them too).
    var earlierTracks: [TrackDescription] = []
    var initName = StreamLayout.initName
    /// Continues a stream from an earlier run: its init section is stored again only if it changed.
    var resumed = false
    private(set) var listing: LivePlaylist
    /// How many listed segments name each init section.
    private var mapUses: [String: Int] = [:]
    /// Whether a segment was ever listed: the first one sets the media sequence number.
    private var listedAny = false
    private(set) var iFrames = IFrameIndex()
    /// The media sequence number of the first I-frame entry this run adds.
    var iFrameSequenceOffset = 1
    /// Bytes of init sections and segments.
    private(set) var mediaBytes = 0
    /// The largest segment's rate, bits per second.
    private(set) var peakBitrate = 0
    private var frameRate: FrameRateMeter?

    init(directory: String, policy: StreamRenderer.PlaylistPolicy) {
        self.directory = directory
        self.policy = policy
        listing = Self.emptyListing(policy: policy, firstSequenceNumber: 1)
    }

    /// Continues `previous`, the rendition's playlist from an earlier run.
    init(directory: String, policy: StreamRenderer.PlaylistPolicy, resuming previous: MediaPlaylist, initName: String) {
        self.init(directory: directory, policy: policy)
        listing = LivePlaylist(resuming: previous, windowSize: policy.windowSize)
        for segment in previous.segments {
            if let map = segment.mapURI { mapUses[map, default: 0] += 1 }
        }
        listedAny = true
        resumed = true
        self.initName = initName
        iFrameSequenceOffset = previous.mediaSequence + previous.segments.count
    }

    private static func emptyListing(policy: StreamRenderer.PlaylistPolicy, firstSequenceNumber: Int) -> LivePlaylist {
        // A recording is listed whole: its target duration is set from its segments at the end.
        LivePlaylist(targetDurationSeconds: policy.targetDurationSeconds ?? 1, windowSize: policy.windowSize,
                     firstSequenceNumber: firstSequenceNumber)
    }

    func path(_ name: String) -> String {
        directory.isEmpty ? name : directory + "/" + name
    }

    var hasVideo: Bool { tracks.contains(where: \.isVideo) }

    mutating func countMedia(bytes: Int) {
        mediaBytes += bytes
    }

    /// The next segment starts a new timeline or a new init section (EXT-X-DISCONTINUITY).
    mutating func markDiscontinuity() {
        listing.markDiscontinuity()
    }

    /// Lists a stored segment, `byteCount` bytes in all; the I-frames are found in `firstFragment` (the
    /// segment's first part, `firstFragmentSize` bytes) when the file holds several fragments. Returns
    /// the files that left the window, by their path below the stream directory.
    mutating func append(_ segment: Segment, programDateTime: Date?, byteCount: Int, firstFragmentSize: Int,
                         firstFragment: Segment?, key: MediaPlaylist.Key? = nil) -> [LivePlaylist.Removal] {
        if !listedAny {
            // Every rendition's segment N has media sequence number N, even one that starts later.
            listing = Self.emptyListing(policy: policy, firstSequenceNumber: segment.sequenceNumber)
            listedAny = true
        }
        let uri = StreamLayout.segmentPath(segment.sequenceNumber)
        let discontinuity = listing.nextIsDiscontinuity
        var listed = MediaPlaylist.Segment(uri: uri, durationSeconds: segment.durationSeconds, mapURI: initName,
                                           programDateTime: programDateTime)
        listed.key = key
        mapUses[initName, default: 0] += 1
        var removals = listing.append(listed)
        // An init section that no listed segment refers to any more leaves with the last one that did.
        var unusedMaps: [String] = []
        for removal in removals {
            guard let map = removal.mapURI, let uses = mapUses[map] else { continue }
            if uses > 1 {
                mapUses[map] = uses - 1
            } else {
                mapUses[map] = nil
                unusedMaps.append(map)
            }
        }
        for map in unusedMaps.sorted() {
            removals.append(.init(uri: map, retentionSeconds: removals.map(\.retentionSeconds).max() ?? 0))
        }
        if segment.durationTicks > 0 {
            peakBitrate = max(peakBitrate, Int(Int64(byteCount) * 8 * segment.timescale.perSecond / segment.durationTicks))
        }
        if let video = tracks.first(where: \.isVideo) {
            if let run = segment.tracks.first(where: { $0.trackID == video.trackID }) {
                var meter = frameRate ?? FrameRateMeter(timescale: video.timescale)
                for sample in run.samples { meter.add(durationTicks: Int64(sample.durationTicks)) }
                frameRate = meter
            }
            iFrames.add(segment: segment, uri: uri, mapURI: initName, discontinuity: discontinuity, video: video,
                        fragmentSize: firstFragmentSize, programDateTime: programDateTime, firstFragment: firstFragment)
            iFrames.remove(segmentURIs: Set(removals.map(\.uri)))
        }
        return removals.map { removal in
            var moved = removal
            moved.uri = path(removal.uri)
            return moved
        }
    }

    /// The stream is over: EXT-X-ENDLIST.
    mutating func end() {
        listing.end()
    }

    /// The media playlist as the policy has it: a recording lists every segment, with a target duration
    /// from the longest, and always ends.
    var playlist: MediaPlaylist {
        var playlist = listing.playlist
        if policy == .vod {
            playlist.playlistType = .vod
            playlist.targetDurationSeconds = MediaPlaylist.targetDuration(
                forSegmentDurations: playlist.segments.map(\.durationSeconds))
            playlist.endList = true
        }
        return playlist
    }

    /// The media playlist's text: a live one from the lines rendered as its segments were listed.
    var renderedPlaylist: String {
        policy == .vod ? playlist.render() : listing.render()
    }

    /// The I-frame playlist's text: a live one from the lines rendered as its entries came.
    var renderedIFramePlaylist: String {
        guard let target = policy.targetDurationSeconds else { return iFramePlaylist.render() }
        let playlist = listing.playlist
        return iFrames.render(playlistType: playlist.playlistType, targetDurationSeconds: target,
                              firstSequenceNumber: iFrameSequenceOffset, endList: playlist.endList)
    }

    var iFramePlaylist: MediaPlaylist {
        let playlist = self.playlist
        var iFramePlaylist = iFrames.playlist(playlistType: playlist.playlistType,
                                              targetDurationSeconds: policy.targetDurationSeconds,
                                              firstSequenceNumber: iFrameSequenceOffset)
        iFramePlaylist.endList = playlist.endList
        return iFramePlaylist
    }

    var segmentCount: Int { listing.playlist.segments.count }

    var durationSeconds: Double { listing.durationSeconds }

    var averageBitrate: Int {
        durationSeconds > 0 ? Int((Double(mediaBytes) * 8 / durationSeconds).rounded()) : 0
    }

    /// What was measured, for a master playlist: the peak frame rate is a variable frame rate's fastest second.
    var measure: RenditionMeasure {
        var measure = RenditionMeasure(tracks: tracks, peakBitrate: peakBitrate, averageBitrate: averageBitrate,
                                       framesPerSecond: frameRate?.framesPerSecond,
                                       iFramePeakBitrate: iFrames.peakBitrate, iFrameAverageBitrate: iFrames.averageBitrate)
        measure.earlierTracks = earlierTracks
        return measure
    }
}

extension StreamRenderer.PlaylistPolicy {
    var targetDurationSeconds: Int? {
        switch self {
        case .vod: nil
        case .live(let targetDurationSeconds, _): targetDurationSeconds
        }
    }

    /// A recording keeps every segment; a live window of 0 does too.
    var windowSize: Int {
        switch self {
        case .vod: 0
        case .live(_, let windowSize): windowSize
        }
    }
}
