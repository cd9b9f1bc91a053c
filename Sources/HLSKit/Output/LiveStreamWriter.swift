import Foundation

/// Writes a live stream's files: the init section, then each segment before the rolling playlist
/// that lists it (DESIGN.md, writing rules). Segments that leave the window come back as removals
/// for the caller to delete once their retention time has passed.
public struct LiveStreamWriter {
    /// Why a stream in the directory cannot be continued.
    public struct ResumeError: Error, CustomStringConvertible {
        public var description: String
    }

    public let store: DirectoryStore
    public let tracks: [TrackDescription]
    public private(set) var live: LivePlaylist
    /// The init section the next segments refer to: `init.mp4`, or `init-N.mp4` after a change.
    public private(set) var initName: String
    /// File number of the next segment: never reused, even for segments a crash left unlisted.
    public private(set) var nextSequenceNumber: Int
    private let initBytes: [UInt8]

    /// A new stream in an empty directory.
    public init(store: DirectoryStore, tracks: [TrackDescription], targetDurationSeconds: Int, windowSize: Int) {
        self.store = store
        self.tracks = tracks
        live = LivePlaylist(targetDurationSeconds: targetDurationSeconds, windowSize: windowSize)
        initName = StreamWriter.initName
        nextSequenceNumber = 1
        initBytes = InitSegment.make(tracks: tracks)
    }

    /// Continues the stream in `store` after a stop or a crash: numbering goes on, the first new segment
    /// follows a discontinuity, and a new init section is written when the tracks changed. Segments and
    /// init sections the playlist no longer lists (they left the window, or a crash left them unlisted)
    /// are deleted; numbers are never reused, so a cached copy of a deleted file is never wrong.
    public init(resuming store: DirectoryStore, tracks: [TrackDescription], targetDurationSeconds: Int,
                windowSize: Int) throws {
        let text: String
        let previous: MediaPlaylist
        do {
            text = String(decoding: try store.read(StreamWriter.playlistName), as: UTF8.self)
            previous = try MediaPlaylist.parse(text)
        } catch {
            throw ResumeError(description: "\(store.root)/\(StreamWriter.playlistName) cannot be continued "
                + "(\(error)); use --overwrite to start a new stream")
        }
        guard previous.targetDurationSeconds >= targetDurationSeconds else {
            throw ResumeError(description: "the stream in \(store.root) has a target duration of "
                + "\(previous.targetDurationSeconds) s, shorter than this run needs; the target duration "
                + "cannot change within a stream, use --overwrite or a shorter --segment-duration")
        }
        self.store = store
        self.tracks = tracks
        live = LivePlaylist(resuming: previous, windowSize: windowSize)
        initBytes = InitSegment.make(tracks: tracks)
        let listed = previous.segments.compactMap { StreamWriter.sequenceNumber(ofPath: $0.uri) }
        let stored = ((try? store.list(StreamWriter.segmentDirectory)) ?? [])
            .compactMap { StreamWriter.sequenceNumber(ofPath: StreamWriter.segmentDirectory + "/" + $0) }
        nextSequenceNumber = ((listed + stored).max() ?? 0) + 1
        let currentInit = previous.segments.last?.mapURI ?? StreamWriter.initName
        let rootNames = try store.list("")
        if (try? store.read(currentInit)) == initBytes {
            initName = currentInit
        } else {
            let used = (rootNames + previous.segments.compactMap(\.mapURI)).compactMap(Self.initNumber(ofName:))
            initName = "init-\(max(used.max() ?? 1, 1) + 1).mp4"
        }
        let listedPaths = Set(previous.segments.flatMap { [$0.uri] + ($0.mapURI.map { [$0] } ?? []) })
        let segmentPaths = store.exists(StreamWriter.segmentDirectory)
            ? try store.list(StreamWriter.segmentDirectory).map { StreamWriter.segmentDirectory + "/" + $0 } : []
        for path in rootNames.filter({ Self.initNumber(ofName: $0) != nil }) + segmentPaths
        where !listedPaths.contains(path) && path != initName {
            try store.remove(path)
        }
    }

    /// 1 for `init.mp4`, N for `init-N.mp4`, nil for other names.
    static func initNumber(ofName name: String) -> Int? {
        if name == StreamWriter.initName { return 1 }
        guard name.hasPrefix("init-"), name.hasSuffix(".mp4") else { return nil }
        return Int(name.dropFirst("init-".count).dropLast(".mp4".count))
    }

    /// Stores the init section unless the stream already has these exact bytes under that name.
    public func writeInitSection() throws(StoreError) {
        if (try? store.read(initName)) == initBytes { return }
        try store.write(initBytes, to: initName)
    }

    /// What storing one segment did.
    public struct Written: Sendable, Equatable {
        public var path: String
        public var byteCount: Int
        /// Segments that left the window, and init sections no listed segment refers to any more.
        public var removals: [LivePlaylist.Removal]
    }

    /// Stores a segment, then the playlist that lists it.
    public mutating func write(_ segment: Segment, programDateTime: Date?) throws(StoreError) -> Written {
        let path = StreamWriter.segmentPath(segment.sequenceNumber)
        let bytes = MediaFragment.make(sequenceNumber: UInt32(segment.sequenceNumber), tracks: segment.tracks,
                                       descriptions: tracks)
        try store.write(bytes, to: path)
        nextSequenceNumber = max(nextSequenceNumber, segment.sequenceNumber + 1)
        let mapsBefore = Set(live.playlist.segments.compactMap(\.mapURI))
        var removals = live.append(MediaPlaylist.Segment(uri: path, durationSeconds: segment.durationSeconds,
                                                         mapURI: initName, programDateTime: programDateTime))
        // An init section that no listed segment refers to any more leaves with the last one that did.
        let mapsAfter = Set(live.playlist.segments.compactMap(\.mapURI))
        for map in mapsBefore.subtracting(mapsAfter).sorted() {
            removals.append(.init(uri: map, retentionSeconds: removals.map(\.retentionSeconds).max() ?? 0))
        }
        try writePlaylist()
        return Written(path: path, byteCount: bytes.count, removals: removals)
    }

    /// Ends the stream: the playlist gets EXT-X-ENDLIST.
    public mutating func finish() throws(StoreError) {
        live.end()
        try writePlaylist()
    }

    public func writePlaylist() throws(StoreError) {
        try store.write(Array(live.render().utf8), to: StreamWriter.playlistName)
    }
}
