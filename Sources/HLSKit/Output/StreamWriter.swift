/// Writes one stream's files in the order that keeps every published state valid: the init section
/// first, each segment before the playlist that lists it, the playlist last (DESIGN.md, writing rules).
public struct StreamWriter {
    public static let playlistName = "playlist.m3u8"
    public static let initName = "init.mp4"
    public static let segmentDirectory = "seg"

    public struct Summary: Sendable, Equatable {
        public var segmentCount: Int
        public var durationSeconds: Double
        /// Bytes of init section and segments.
        public var mediaBytes: Int
        /// The largest segment's bitrate, bits per second.
        public var peakBitrate: Int
    }

    public let store: DirectoryStore
    public let tracks: [TrackDescription]
    private var entries: [MediaPlaylist.Segment] = []
    private var writtenPaths: [String] = []
    private var mediaBytes = 0
    private var peakBitrate = 0
    private var firstSequenceNumber: Int?

    public init(store: DirectoryStore, tracks: [TrackDescription]) {
        self.store = store
        self.tracks = tracks
    }

    public static func segmentPath(_ sequenceNumber: Int) -> String {
        let digits = String(sequenceNumber)
        return segmentDirectory + "/" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits + ".m4s"
    }

    /// Whether `store` already holds a stream that a new one would overwrite.
    public static func holdsStream(_ store: DirectoryStore) -> Bool {
        store.exists(playlistName) || store.exists(initName)
            || ((try? store.list(segmentDirectory))?.isEmpty == false)
    }

    /// Removes a previous stream: the playlist first, so the old stream stops being playable before its
    /// media disappears.
    public static func removeStream(in store: DirectoryStore) throws(StoreError) {
        try store.remove(playlistName)
        for name in (try? store.list("")) ?? [] where name.hasPrefix("init") && name.hasSuffix(".mp4") {
            try store.remove(name)
        }
        for name in (try? store.list(segmentDirectory)) ?? [] where name.hasSuffix(".m4s") {
            try store.remove(segmentDirectory + "/" + name)
        }
    }

    public mutating func writeInitSection() throws(StoreError) {
        try put(InitSegment.make(tracks: tracks), at: Self.initName)
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
        entries.append(MediaPlaylist.Segment(uri: path, durationSeconds: segment.durationSeconds,
                                             mapURI: Self.initName))
    }

    /// Writes the VOD playlist that lists every segment written, ending with ENDLIST.
    public mutating func finishVOD() throws(StoreError) -> Summary {
        try put(Array(vodPlaylist.render().utf8), at: Self.playlistName)
        return Summary(segmentCount: entries.count,
                       durationSeconds: entries.reduce(0) { $0 + $1.durationSeconds },
                       mediaBytes: mediaBytes, peakBitrate: peakBitrate)
    }

    /// The VOD playlist of every segment written so far.
    public var vodPlaylist: MediaPlaylist {
        MediaPlaylist(
            targetDurationSeconds: MediaPlaylist.targetDuration(forSegmentDurations: entries.map(\.durationSeconds)),
            mediaSequence: firstSequenceNumber ?? 1, discontinuitySequence: 0, playlistType: .vod,
            independentSegments: true, segments: entries, endList: true)
    }

    /// Removes every file this writer stored, newest first, so a failed run leaves no stream that looks valid.
    public func removeWrittenFiles() {
        for path in writtenPaths.reversed() { try? store.remove(path) }
    }

    private mutating func put(_ bytes: [UInt8], at path: String) throws(StoreError) {
        try store.write(bytes, to: path)
        writtenPaths.append(path)
        if path != Self.playlistName { mediaBytes += bytes.count }
    }
}
