import Foundation
import HLSKit

/// Stores a stream's files, every rendition of it, in the order its `StreamRenderer` decides (DESIGN.md,
/// writing rules): init sections first, each segment (every rendition's part of it) before the playlists
/// that list it, the master playlist once every rendition's playlist exists. Each file replaces the one
/// before atomically; a recording's media goes out with deferred durability and is synced once before
/// its playlists name it.
///
/// Encryption happens here, between rendering and storing: keys are made and stored in their own store.
public struct StreamWriter {
    public typealias PlaylistPolicy = StreamRenderer.PlaylistPolicy
    public typealias Summary = StreamRenderer.Summary
    public typealias RenditionPart = StreamRenderer.RenditionPart
    public typealias RenditionChunk = StreamRenderer.RenditionChunk

    /// What storing one segment did.
    public struct Written: Sendable, Equatable {
        /// The first rendition's segment file.
        public var path = ""
        /// Every file stored, segments first, then playlists.
        public var paths: [String] = []
        /// Bytes of every rendition's segment file.
        public var byteCount = 0
        /// Bytes of each rendition's segment file, in layout order (0 where it had no part).
        public var renditionByteCounts: [Int] = []
        /// Segments that left the window, their URIs relative to the stream directory.
        public var removals: [LivePlaylist.Removal] = []
        /// Whether this write stored the master playlist.
        public var wroteMaster = false
    }

    public let store: any StreamStore
    /// What decides the files and their bytes.
    public internal(set) var renderer: StreamRenderer
    public var layout: StreamLayout { renderer.layout }
    public var policy: PlaylistPolicy { renderer.policy }
    /// Every track of the current section, in the stream's order.
    public var tracks: [TrackDescription] { renderer.tracks }
    /// File number of the next segment: never reused, even for segments a crash left unlisted.
    public var nextSequenceNumber: Int { renderer.nextSequenceNumber }
    /// What a recording stored, so that a failed run can take it back.
    private var writtenPaths: [String] = []
    /// Files an earlier run of a resumed stream left waiting for their retention time, and when each may go.
    public internal(set) var pendingRemovals: [(path: String, removableAt: Date)] = []

    /// A new stream in `store`. A live stream's master playlist is written from the `declared` rates
    /// once the first playlists exist (a rate below the first segment's is raised to it); a live
    /// stream without them writes none.
    public init(store: any StreamStore, layout: StreamLayout, policy: PlaylistPolicy,
                declared: [RenditionMeasure]? = nil) {
        self.store = store
        renderer = StreamRenderer(layout: layout, policy: policy, declared: declared)
    }

    private var isLive: Bool { policy != .vod }

    /// Encrypts every segment (AES-128) or its samples (SAMPLE-AES), when set before the first section.
    /// An encrypted stream has no I-frame playlists (`StreamRenderer.encryption`).
    public var encryption: SegmentEncryption? {
        didSet { renderer.encryption = encryption.map { $0.method == .sampleAES ? .sampleAES : .aes128 } }
    }

    /// Starts a section with these tracks: the first one writes each rendition's init section; a later one
    /// follows a discontinuity and writes new init sections only where the tracks changed. Returns the
    /// paths of the init sections it wrote.
    @discardableResult
    public mutating func beginSection(tracks: [TrackDescription]) throws(StoreError) -> [String] {
        let sampleKey = try encryption.flatMap { encryption throws(StoreError) in
            encryption.method == .sampleAES ? try encryption.sampleKey() : nil
        }
        let store = store
        // A resumed stream keeps an init section that has these very bytes.
        let files = try renderer.beginSection(tracks: tracks, sampleKey: sampleKey) { file throws(StoreError) in
            guard try store.exists(file.path) else { return false }
            return try store.read(file.path) == file.bytes
        }
        try put(files)
        return files.map(\.path)
    }

    /// Stores every rendition's part of a segment; a live stream's playlists follow, then, after the
    /// first segment, its master playlist.
    public mutating func write(_ segment: Segment, programDateTime: Date? = nil) throws(StoreError) -> Written {
        let encryption = encryption
        let media = try renderer.media(of: segment) { media throws(StoreError) in
            try encryption?.encrypt(&media)
        }
        try put(media.files)
        let listed = renderer.list(media, programDateTime: programDateTime)
        try put(Array(listed.files.dropFirst(listed.segmentFileCount)))
        return Written(path: listed.segmentFiles.first?.path ?? "", paths: listed.files.map(\.path),
                       byteCount: listed.renditionByteCounts.reduce(0, +),
                       renditionByteCounts: listed.renditionByteCounts, removals: listed.removals,
                       wroteMaster: listed.rendersMaster)
    }

    /// The fragments of a part for every rendition that has samples in it: the same bytes the segment
    /// file will hold, kept until `write` stores that segment.
    public mutating func render(part: Segment) -> [RenditionPart] {
        renderer.render(part: part)
    }

    /// The fragments of a chunk of a part for every rendition that has samples in it: the part's next bytes.
    public mutating func render(chunk: Segment) -> [RenditionChunk] {
        renderer.render(chunk: chunk)
    }

    /// Ends the stream. A recording's media is synced once, then every playlist and the master playlist
    /// are written; a live stream's playlists get EXT-X-ENDLIST.
    @discardableResult
    public mutating func finish() throws(StoreError) -> Summary {
        // Media went out with deferred durability; one filesystem sync covers it before a playlist names it.
        if !isLive { try store.synchronize() }
        try put(renderer.finish())
        return renderer.summary
    }

    /// The first rendition's playlist.
    public var playlist: MediaPlaylist { renderer.playlist }

    /// Every rendition's media playlist as it stands, in layout order.
    public var mediaPlaylists: [MediaPlaylist] { renderer.mediaPlaylists }

    /// Every rendition's playlists as they stand, by path: what a publisher uploads.
    public var playlists: [(path: String, playlist: MediaPlaylist)] { renderer.playlists }

    /// The init section the first rendition's next segments refer to.
    public var initName: String { renderer.initName }

    /// Every rendition's current init section.
    public var initPaths: [String] { renderer.initPaths }

    /// Every rendition's directory, relative to the stream directory ("" is the directory itself).
    public var renditionDirectories: [String] { renderer.renditionDirectories }

    /// Removes every file a recording stored, newest first, so that a failed run leaves no stream that
    /// looks valid, then the directories left empty that the run created. Returns what could not be
    /// removed, each for the caller to report.
    public func removeWrittenFiles() -> [StoreError] {
        var failures: [StoreError] = []
        for path in writtenPaths.reversed() {
            do {
                try store.remove(path)
            } catch {
                failures.append(error)
            }
        }
        store.removeEmptyDirectories()
        return failures
    }

    /// Stores files in order: a recording's media with deferred durability, since nothing refers to it
    /// before its playlist; everything else at once.
    private mutating func put(_ files: [StreamRenderer.File]) throws(StoreError) {
        for file in files {
            let isPlaylist = StreamFileKind(path: file.path) == .playlist
            try store.write(file.bytes, to: file.path, durability: isLive || isPlaylist ? .immediate : .deferred)
            if !isLive { writtenPaths.append(file.path) }
        }
    }
}
