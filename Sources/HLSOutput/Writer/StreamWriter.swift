import Foundation
import HLSKit

/// Writes a stream's files, every rendition of it, in the order that keeps every published state valid
/// (DESIGN.md, writing rules): init sections first, each segment (every rendition's part of it) before the
/// playlists that list it, the master playlist once every rendition's playlist exists.
///
/// The playlist policy says how playlists grow. A recording (`vod`) is listed whole once its media is
/// written and synced, with a master playlist from the rates measured. A live stream rewrites its rolling
/// playlists after each segment and writes its master playlist once, from the rates its encoders are held
/// to; segments that leave its window come back as removals, for the caller to delete once their
/// retention time has passed.
///
/// A stream is made of sections: recordings joined one after another, or the runs of a resumed live
/// stream. Each section starts afresh behind EXT-X-DISCONTINUITY; a section whose tracks differ from the
/// one before gets its own init section (`init-2.mp4` …). The tracks are spread over the renditions of a
/// `StreamLayout`, and every video rendition also gets an I-frame playlist.
public struct StreamWriter {
    public enum PlaylistPolicy: Sendable, Equatable {
        /// Every segment listed, `EXT-X-PLAYLIST-TYPE:VOD` and `EXT-X-ENDLIST`, written at `finish()`.
        case vod
        /// A window of the last `windowSize` segments (0 keeps all, as an EVENT playlist), with a target
        /// duration fixed before the first segment, written after every segment.
        case live(targetDurationSeconds: Int, windowSize: Int)
    }

    public struct Summary: Sendable, Equatable {
        public var segmentCount: Int
        public var durationSeconds: Double
        /// Bytes of init sections and segments.
        public var mediaBytes: Int
        /// The largest segment's bitrate, bits per second.
        public var peakBitrate: Int
        public var averageBitrate: Int
    }

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

    /// One rendition's piece of a part (LL-HLS), as a client fetches it.
    public struct RenditionPart: Sendable, Equatable {
        public var rendition: Int
        public var sequenceNumber: Int
        public var partIndex: Int
        public var durationSeconds: Double
        public var independent: Bool
        public var bytes: [UInt8]
        /// The segment's last part: the next part is the first of the next segment.
        public var endsSegment: Bool
        /// The first part of a segment that follows EXT-X-DISCONTINUITY.
        public var followsDiscontinuity = false
    }

    public let store: any StreamStore
    public let layout: StreamLayout
    public let policy: PlaylistPolicy
    /// Every track of the current section, in the stream's order.
    public private(set) var tracks: [TrackDescription] = []
    /// File number of the next segment: never reused, even for segments a crash left unlisted.
    public internal(set) var nextSequenceNumber = 1
    var renditions: [RenditionWriter]
    /// The rates the master playlist declares before anything is measured (live); nil measures them.
    let declared: [RenditionMeasure]?
    var wroteMaster = false
    /// What the live master playlist declares, once written.
    var masterMeasures: [RenditionMeasure]?
    /// A resumed stream whose tracks changed lists the earlier formats too: CODECS of the master
    /// playlist's variants and I-frame streams before the resume, by URI (RFC 8216bis 4.4.6.2).
    var earlierCodecs: [String: [String]] = [:]
    /// The fragments `render(part:)` made for segments not written yet, by sequence number and part index,
    /// one per rendition (nil where the part has no samples): the segment file is them one after the other.
    private var renderedParts: [Int: [Int: [[UInt8]?]]] = [:]
    private var sectionCount = 0
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
        self.layout = layout
        self.policy = policy
        self.declared = declared
        renditions = layout.renditions.map { RenditionWriter(directory: $0.directory, policy: policy) }
    }

    private var isLive: Bool { policy != .vod }

    /// Encrypts every segment (AES-128) or its samples (SAMPLE-AES), when set before the first section.
    /// An encrypted stream has no I-frame playlists: an AES-128 byte range cannot be decrypted apart from
    /// its segment, and the players that play SAMPLE-AES find I-frames in its segments.
    public var encryption: SegmentEncryption?

    /// Whether a rendition gets an I-frame playlist.
    private func writesIFrames(_ rendition: RenditionWriter) -> Bool {
        rendition.hasVideo && encryption == nil
    }

    /// Starts a section with these tracks: the first one writes each rendition's init section; a later one
    /// follows a discontinuity and writes new init sections only where the tracks changed. Returns the
    /// paths of the init sections it wrote.
    @discardableResult
    public mutating func beginSection(tracks: [TrackDescription]) throws(StoreError) -> [String] {
        sectionCount += 1
        self.tracks = tracks
        var written: [String] = []
        for index in renditions.indices {
            let own = layout.tracks(of: index, in: tracks)
            if sectionCount > 1 { renditions[index].markDiscontinuity() }
            guard own != renditions[index].tracks else { continue }
            renditions[index].earlierTracks += renditions[index].tracks
            renditions[index].tracks = own
            if sectionCount > 1 {
                renditions[index].initName = "init-\(sectionCount).mp4"
            } else if !renditions[index].resumed {
                renditions[index].initName = StreamLayout.initName
            }
            let path = renditions[index].path(renditions[index].initName)
            let sampleKey = try encryption.flatMap { encryption throws(StoreError) in
                encryption.method == .sampleAES ? try encryption.sampleKey() : nil
            }
            let bytes = InitSegment.make(tracks: own, key: sampleKey)
            // A resumed stream keeps an init section that has these very bytes.
            if renditions[index].resumed, try store.exists(path), try store.read(path) == bytes { continue }
            try put(bytes, at: path, rendition: index)
            written.append(path)
        }
        return written
    }

    /// Stores every rendition's part of a segment; a live stream's playlists follow, then, after the
    /// first segment, its master playlist.
    public mutating func write(_ segment: Segment, programDateTime: Date? = nil) throws(StoreError) -> Written {
        precondition(sectionCount > 0, "a section begins before its segments")
        let timescales = tracks.map(\.timescale)
        let pieces = layout.split(segment, timescales: timescales)
        let rendered = renderedParts[segment.sequenceNumber] ?? [:]
        // Dropped now, with any of earlier segments that were never written: nothing is held past this write.
        renderedParts = renderedParts.filter { $0.key > segment.sequenceNumber }
        // Every part's fragments, one per rendition: those `render(part:)` made, the others made now.
        let partFragments = segment.parts.map { part in
            rendered[part.partIndex ?? 0] ?? fragments(of: layout.split(part, timescales: timescales))
        }
        // The I-frames lie in the first fragment: the whole file, or the first part.
        let firstParts = segment.parts.first.map { layout.split($0, timescales: timescales) }
        var written = Written()
        var stored: [(index: Int, piece: Segment, byteCount: Int, firstFragmentSize: Int, key: MediaPlaylist.Key?)] = []
        for (index, piece) in pieces.enumerated() {
            guard let piece else {
                written.renditionByteCounts.append(0)
                continue
            }
            let path = renditions[index].path(StreamLayout.segmentPath(piece.sequenceNumber))
            var bytes: [UInt8]
            var firstFragmentSize: Int?
            var key: MediaPlaylist.Key?
            if let encryption, encryption.method == .sampleAES {
                precondition(segment.parts.isEmpty, "parts are sent clear: an encrypted stream has none")
                var tracks = piece.tracks
                let encrypted = try encryption.encryptSamples(&tracks, descriptions: renditions[index].tracks,
                                                              directory: renditions[index].directory)
                bytes = MediaFragment.make(sequenceNumber: UInt32(piece.sequenceNumber), tracks: tracks,
                                           descriptions: renditions[index].tracks, encrypted: encrypted.subsamples)
                key = encrypted.key
            } else if segment.parts.isEmpty {
                bytes = MediaFragment.make(sequenceNumber: UInt32(piece.sequenceNumber), tracks: piece.tracks,
                                           descriptions: renditions[index].tracks)
            } else {
                // The parts' fragments one after the other: the file is exactly what clients got in parts.
                let own = partFragments.compactMap { $0[index] }
                bytes = Array(own.joined())
                firstFragmentSize = own.first?.count
            }
            if let encryption, encryption.method == .aes128 {
                precondition(segment.parts.isEmpty, "parts are sent clear: an encrypted stream has none")
                (bytes, key) = try encryption.encrypt(bytes, sequenceNumber: piece.sequenceNumber,
                                                      directory: renditions[index].directory)
            }
            try put(bytes, at: path, rendition: index)
            if written.path.isEmpty { written.path = path }
            written.paths.append(path)
            written.byteCount += bytes.count
            written.renditionByteCounts.append(bytes.count)
            stored.append((index, piece, bytes.count, firstFragmentSize ?? bytes.count, key))
        }
        nextSequenceNumber = max(nextSequenceNumber, segment.sequenceNumber + 1)
        for (index, piece, byteCount, firstFragmentSize, key) in stored {
            if segment.followsDiscontinuity { renditions[index].markDiscontinuity() }
            written.removals += renditions[index].append(piece, programDateTime: programDateTime, byteCount: byteCount,
                                                         firstFragmentSize: firstFragmentSize,
                                                         firstFragment: firstParts?[index], key: key)
            if isLive { written.paths += try writePlaylists(of: index) }
        }
        guard isLive else { return written }
        // Once the formats from before a resume have left every window, the master lists only the
        // current ones again: CODECS names formats that are present (RFC 8216bis 4.4.6.2).
        if !earlierCodecs.isEmpty, renditions.allSatisfy({ rendition in
            rendition.playlist.segments.allSatisfy { $0.mapURI == rendition.initName }
        }) {
            earlierCodecs = [:]
            wroteMaster = false
        }
        // A guessed rate went past what the master playlist declares: it is declared again, measured.
        if wroteMaster, let masterMeasures, masterMeasures.indices.contains(where: { index in
            masterMeasures[index].isEstimate && (renditions[index].peakBitrate > masterMeasures[index].peakBitrate
                || renditions[index].iFrames.peakBitrate > masterMeasures[index].iFramePeakBitrate)
        }) {
            wroteMaster = false
        }
        if !wroteMaster, var measures = declared, !stored.isEmpty {
            for index in measures.indices {
                guard !measures[index].isEstimate else {
                    // What was measured so far, with room for a camera's rate to vary.
                    let measured = renditions[index].measure
                    measures[index].averageBitrate = measured.averageBitrate
                    measures[index].peakBitrate = measured.peakBitrate + measured.peakBitrate / 4
                    measures[index].iFramePeakBitrate = measured.iFramePeakBitrate + measured.iFramePeakBitrate / 4
                    continue
                }
                measures[index].peakBitrate = max(measures[index].peakBitrate, renditions[index].peakBitrate)
                measures[index].iFramePeakBitrate = max(measures[index].iFramePeakBitrate,
                                                        renditions[index].iFrames.peakBitrate)
            }
            masterMeasures = measures
            try put(Array(masterPlaylist(measured: measures).render().utf8), at: StreamLayout.masterPlaylistName,
                    rendition: nil)
            wroteMaster = true
            written.wroteMaster = true
            written.paths.append(StreamLayout.masterPlaylistName)
        }
        return written
    }

    /// The fragments of a part for every rendition that has samples in it: the same bytes the segment
    /// file will hold, kept until `write` stores that segment.
    public mutating func render(part: Segment) -> [RenditionPart] {
        let split = layout.split(part, timescales: tracks.map(\.timescale))
        let fragments = fragments(of: split)
        renderedParts[part.sequenceNumber, default: [:]][part.partIndex ?? 0] = fragments
        return split.indices.compactMap { index in
            guard let own = split[index], let bytes = fragments[index] else { return nil }
            return RenditionPart(rendition: index, sequenceNumber: own.sequenceNumber, partIndex: own.partIndex ?? 0,
                                 durationSeconds: own.durationSeconds, independent: own.isIndependent, bytes: bytes,
                                 endsSegment: own.endsSegment, followsDiscontinuity: own.followsDiscontinuity)
        }
    }

    /// A part's fragment for each rendition of its `split`, nil where the rendition has no samples in it.
    private func fragments(of split: [Segment?]) -> [[UInt8]?] {
        split.indices.map { index in split[index].map { fragmentBytes(of: $0, rendition: index) } }
    }

    /// A part's fragment: the first carries the segment's `styp`; fragment numbers go on from part to
    /// part and segment to segment (segment × 1000 + part).
    private func fragmentBytes(of part: Segment, rendition: Int) -> [UInt8] {
        let index = part.partIndex ?? 0
        return MediaFragment.make(sequenceNumber: UInt32(truncatingIfNeeded: part.sequenceNumber * 1000 + index),
                                  tracks: part.tracks, descriptions: renditions[rendition].tracks,
                                  segmentType: index == 0)
    }

    /// Ends the stream. A recording's media is synced once, then every playlist and the master playlist
    /// are written; a live stream's playlists get EXT-X-ENDLIST.
    @discardableResult
    public mutating func finish() throws(StoreError) -> Summary {
        if isLive {
            for index in renditions.indices {
                renditions[index].end()
                try writePlaylists(of: index)
            }
            return summary
        }
        // Media went out with deferred durability; one filesystem sync covers it before a playlist names it.
        try store.synchronize()
        for index in renditions.indices { try writePlaylists(of: index) }
        try put(Array(masterPlaylist(measured: renditions.map(\.measure)).render().utf8),
                at: StreamLayout.masterPlaylistName, rendition: nil)
        return summary
    }

    @discardableResult
    private mutating func writePlaylists(of index: Int) throws(StoreError) -> [String] {
        let rendition = renditions[index]
        var paths = [rendition.path(StreamLayout.playlistName)]
        try put(Array(rendition.renderedPlaylist.utf8), at: paths[0], rendition: index)
        if writesIFrames(rendition) {
            paths.append(rendition.path(StreamLayout.iFramePlaylistName))
            try put(Array(rendition.renderedIFramePlaylist.utf8), at: paths[1], rendition: index)
        }
        return paths
    }

    /// The first rendition's playlist.
    public var playlist: MediaPlaylist { renditions[0].playlist }

    /// Every rendition's media playlist as it stands, in layout order.
    public var mediaPlaylists: [MediaPlaylist] { renditions.map(\.playlist) }

    /// Every rendition's playlists as they stand, by path: what a publisher uploads.
    public var playlists: [(path: String, playlist: MediaPlaylist)] {
        renditions.flatMap { rendition in
            [(rendition.path(StreamLayout.playlistName), rendition.playlist)]
                + (writesIFrames(rendition) ? [(rendition.path(StreamLayout.iFramePlaylistName), rendition.iFramePlaylist)] : [])
        }
    }

    /// The init section the first rendition's next segments refer to.
    public var initName: String { renditions[0].initName }

    /// Every rendition's current init section.
    public var initPaths: [String] { renditions.map { $0.path($0.initName) } }

    /// Every rendition's directory, relative to the stream directory ("" is the directory itself).
    public var renditionDirectories: [String] { renditions.map(\.directory) }

    /// The master playlist from `measured` rates, listing the formats of before a resume as well.
    private func masterPlaylist(measured: [RenditionMeasure]) -> MasterPlaylist {
        var master = MasterPlaylistBuilder(layout: layout, allTracks: tracks, measured: measured)
            .make(version: renditions[0].playlist.version)
        if encryption != nil { master.iFrameStreams = [] }
        guard !earlierCodecs.isEmpty else { return master }
        for index in master.variants.indices {
            master.variants[index].codecs = Self.joined(earlierCodecs[master.variants[index].uri],
                                                        master.variants[index].codecs)
        }
        for index in master.iFrameStreams.indices {
            master.iFrameStreams[index].codecs = Self.joined(earlierCodecs[master.iFrameStreams[index].uri],
                                                             master.iFrameStreams[index].codecs)
        }
        return master
    }

    /// Both lists of formats, each once, video before audio.
    private static func joined(_ earlier: [String]?, _ current: [String]?) -> [String]? {
        guard let earlier, !earlier.isEmpty else { return current }
        var all: [String] = []
        for codec in earlier + (current ?? []) where !all.contains(codec) { all.append(codec) }
        let isAudio = { (codec: String) in codec.hasPrefix("mp4a") || codec.hasPrefix("ac-3") || codec.hasPrefix("ec-3") }
        return all.filter { !isAudio($0) } + all.filter(isAudio)
    }

    private var summary: Summary {
        let first = renditions.first
        let duration = first?.durationSeconds ?? 0
        let mediaBytes = renditions.reduce(0) { $0 + $1.mediaBytes }
        let peak = renditions.reduce(0) { $0 + $1.peakBitrate }
        return Summary(segmentCount: first?.segmentCount ?? 0, durationSeconds: duration, mediaBytes: mediaBytes,
                       peakBitrate: peak,
                       averageBitrate: duration > 0 ? Int((Double(mediaBytes) * 8 / duration).rounded()) : 0)
    }

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

    /// Stores one file: a recording's media with deferred durability, since nothing refers to it before
    /// its playlist; everything else at once.
    private mutating func put(_ bytes: [UInt8], at path: String, rendition: Int?) throws(StoreError) {
        let isPlaylist = StreamFileKind(path: path) == .playlist
        try store.write(bytes, to: path, durability: isLive || isPlaylist ? .immediate : .deferred)
        if !isLive { writtenPaths.append(path) }
        if !isPlaylist, let rendition { renditions[rendition].countMedia(bytes: bytes.count) }
    }
}
