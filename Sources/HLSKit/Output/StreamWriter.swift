/// Writes one VOD stream's files in the order that keeps every published state valid: an init section
/// first, each segment before the playlist that lists it, the playlists last (DESIGN.md, writing rules).
///
/// A stream is made of sections: recordings joined one after another. Each section's timestamps start
/// afresh behind EXT-X-DISCONTINUITY; a section whose tracks differ from the one before gets its own
/// init section (`init-2.mp4` …).
public struct StreamWriter {
    public static let playlistName = "playlist.m3u8"
    public static let masterPlaylistName = "master.m3u8"
    public static let initName = "init.mp4"
    public static let segmentDirectory = "seg"

    public struct Summary: Sendable, Equatable {
        public var segmentCount: Int
        public var durationSeconds: Double
        /// Bytes of init sections and segments.
        public var mediaBytes: Int
        /// The largest segment's bitrate, bits per second.
        public var peakBitrate: Int
        public var averageBitrate: Int
    }

    public let store: DirectoryStore
    public private(set) var tracks: [TrackDescription] = []
    private var initName = StreamWriter.initName
    private var sectionCount = 0
    private var startsSection = false
    private var entries: [MediaPlaylist.Segment] = []
    private var writtenPaths: [String] = []
    private var mediaBytes = 0
    private var peakBitrate = 0
    private var firstSequenceNumber: Int?
    private var videoFrames = 0
    private var videoSeconds = 0.0

    public init(store: DirectoryStore) {
        self.store = store
    }

    public static func segmentPath(_ sequenceNumber: Int) -> String {
        let digits = String(sequenceNumber)
        return segmentDirectory + "/" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits + ".m4s"
    }

    /// The number in a segment path such as `seg/000042.m4s`; nil for other paths.
    public static func sequenceNumber(ofPath path: String) -> Int? {
        let prefix = segmentDirectory + "/"
        guard path.hasPrefix(prefix), path.hasSuffix(".m4s") else { return nil }
        return Int(path.dropFirst(prefix.count).dropLast(4))
    }

    /// Whether `store` already holds a stream that a new one would overwrite.
    public static func holdsStream(_ store: DirectoryStore) -> Bool {
        store.exists(playlistName) || store.exists(initName)
            || ((try? store.list(segmentDirectory))?.isEmpty == false)
    }

    /// Removes a previous stream: the playlists first, so the old stream stops being playable before its
    /// media disappears.
    public static func removeStream(in store: DirectoryStore) throws(StoreError) {
        try store.remove(masterPlaylistName)
        try store.remove(playlistName)
        for name in (try? store.list("")) ?? [] where name.hasPrefix("init") && name.hasSuffix(".mp4") {
            try store.remove(name)
        }
        for name in (try? store.list(segmentDirectory)) ?? [] where name.hasSuffix(".m4s") {
            try store.remove(segmentDirectory + "/" + name)
        }
    }

    /// Starts a section with these tracks: the first one writes `init.mp4`; a later one follows a
    /// discontinuity and writes a new init section only when the tracks changed.
    /// Returns the path of the init section it wrote, if any.
    @discardableResult
    public mutating func beginSection(tracks: [TrackDescription]) throws(StoreError) -> String? {
        sectionCount += 1
        startsSection = sectionCount > 1
        guard tracks != self.tracks else { return nil }
        self.tracks = tracks
        initName = sectionCount == 1 ? Self.initName : "init-\(sectionCount).mp4"
        try put(InitSegment.make(tracks: tracks), at: initName)
        return initName
    }

    public mutating func write(_ segment: Segment) throws(StoreError) {
        let path = Self.segmentPath(segment.sequenceNumber)
        let bytes = MediaFragment.make(sequenceNumber: UInt32(segment.sequenceNumber), tracks: segment.tracks,
                                       descriptions: tracks)
        try put(bytes, at: path)
        if firstSequenceNumber == nil { firstSequenceNumber = segment.sequenceNumber }
        if segment.durationTicks > 0 {
            let bitrate = Int(Int64(bytes.count) * 8 * Int64(segment.timescale) / segment.durationTicks)
            peakBitrate = max(peakBitrate, bitrate)
        }
        if let video = tracks.firstIndex(where: \.isVideo),
           let run = segment.tracks.first(where: { $0.trackID == tracks[video].trackID }) {
            videoFrames += run.samples.count
            videoSeconds += Double(run.samples.reduce(0) { $0 + UInt64($1.durationTicks) })
                / Double(tracks[video].timescale)
        }
        entries.append(MediaPlaylist.Segment(uri: path, durationSeconds: segment.durationSeconds, mapURI: initName,
                                             discontinuity: startsSection))
        startsSection = false
    }

    /// Writes the VOD playlist that lists every segment written, ending with ENDLIST, then the master
    /// playlist that points at it.
    public mutating func finishVOD() throws(StoreError) -> Summary {
        // Media went out with deferred durability; one filesystem sync covers it before a playlist names it.
        try store.synchronize()
        let playlist = vodPlaylist
        try put(Array(playlist.render().utf8), at: Self.playlistName)
        let summary = self.summary
        try put(Array(masterPlaylist(summary, version: playlist.version).render().utf8), at: Self.masterPlaylistName)
        return summary
    }

    /// The VOD playlist of every segment written so far.
    public var vodPlaylist: MediaPlaylist {
        MediaPlaylist(
            targetDurationSeconds: MediaPlaylist.targetDuration(forSegmentDurations: entries.map(\.durationSeconds)),
            mediaSequence: firstSequenceNumber ?? 1, discontinuitySequence: 0, playlistType: .vod,
            independentSegments: true, segments: entries, endList: true)
    }

    private var summary: Summary {
        let duration = entries.reduce(0) { $0 + $1.durationSeconds }
        return Summary(segmentCount: entries.count, durationSeconds: duration, mediaBytes: mediaBytes,
                       peakBitrate: peakBitrate,
                       averageBitrate: duration > 0 ? Int((Double(mediaBytes) * 8 / duration).rounded()) : 0)
    }

    private func masterPlaylist(_ summary: Summary, version: Int) -> MasterPlaylist {
        var resolution: MasterPlaylist.Resolution?
        var codecs: [String] = []
        for track in tracks {
            switch track.format {
            case .h264(let format):
                codecs.append(format.decoderConfiguration.codecsString)
                resolution = MasterPlaylist.Resolution(width: format.displayWidth, height: format.displayHeight)
            case .aac(let format):
                codecs.append(format.audioSpecificConfig.codecsString)
            }
        }
        let variant = MasterPlaylist.Variant(
            uri: Self.playlistName, bandwidthBitsPerSecond: summary.peakBitrate,
            averageBandwidthBitsPerSecond: summary.averageBitrate, codecs: codecs, resolution: resolution,
            framesPerSecond: videoSeconds > 0 ? Double(videoFrames) / videoSeconds : nil)
        return MasterPlaylist(version: version, independentSegments: true, variants: [variant])
    }

    /// Removes every file this writer stored, newest first, so a failed run leaves no stream that looks
    /// valid, then the directories left empty that the run created.
    public func removeWrittenFiles() {
        for path in writtenPaths.reversed() { try? store.remove(path) }
        store.removeEmptyDirectories()
    }

    private mutating func put(_ bytes: [UInt8], at path: String) throws(StoreError) {
        let isPlaylist = path.hasSuffix(".m3u8")
        // Nothing refers to media before the playlist, so it need not reach the disk one file at a time.
        try store.write(bytes, to: path, durability: isPlaylist ? .immediate : .deferred)
        writtenPaths.append(path)
        if !isPlaylist { mediaBytes += bytes.count }
    }
}
