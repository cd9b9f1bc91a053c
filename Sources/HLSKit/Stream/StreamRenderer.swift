import Foundation

/// Decides a stream's files, every rendition of it, and their bytes, in the order that keeps every
/// published state valid (DESIGN.md, writing rules): init sections first, each segment (every rendition's
/// part of it) before the playlists that list it, the master playlist once every rendition's playlist
/// exists. It stores nothing: a writer stores what it returns, in order.
///
/// The playlist policy says how playlists grow. A recording (`vod`) is listed whole once its media is
/// written, with a master playlist from the rates measured. A live stream renders its rolling playlists
/// after each segment and its master playlist once, from the rates its encoders are held to; segments
/// that leave its window come back as removals, for the caller to delete once their retention time has
/// passed.
///
/// A stream is made of sections: recordings joined one after another, or the runs of a resumed live
/// stream. Each section starts afresh behind EXT-X-DISCONTINUITY; a section whose tracks differ from the
/// one before gets its own init section (`init-2.mp4` …). The tracks are spread over the renditions of a
/// `StreamLayout`, and every video rendition of a clear stream also gets an I-frame playlist.
public struct StreamRenderer: Sendable {
    public enum PlaylistPolicy: Sendable, Equatable {
        /// Every segment listed, `EXT-X-PLAYLIST-TYPE:VOD` and `EXT-X-ENDLIST`, rendered at `finish()`.
        case vod
        /// A window of the last `windowSize` segments (0 keeps all, as an EVENT playlist), with a target
        /// duration fixed before the first segment, rendered after every segment.
        case live(targetDurationSeconds: Int, windowSize: Int)
    }

    /// One file to store: its path below the stream directory and its bytes.
    public struct File: Sendable, Equatable {
        public var path: String
        public var bytes: [UInt8]

        public init(path: String, bytes: [UInt8]) {
            self.path = path
            self.bytes = bytes
        }
    }

    /// What one segment makes: the files to store, in order, and the files that left the window.
    public struct SegmentFiles: Sendable, Equatable {
        /// Every rendition's segment file, then each rendition's playlists, then (when it is due) the
        /// master playlist.
        public var files: [File] = []
        /// How many of `files`, from the first, are segment files.
        public var segmentFileCount = 0
        /// Bytes of each rendition's segment file, in layout order (0 where it had no part).
        public var renditionByteCounts: [Int] = []
        /// Segments and init sections that left the window, their URIs relative to the stream directory.
        public var removals: [LivePlaylist.Removal] = []
        /// Whether `files` holds the master playlist.
        public var rendersMaster = false

        public var segmentFiles: ArraySlice<File> { files.prefix(segmentFileCount) }
    }

    /// One rendition's share of a segment on its way to the store: what an encrypting writer changes.
    public struct RenditionMedia: Sendable {
        public let rendition: Int
        /// The rendition's directory, relative to the stream directory.
        public let directory: String
        public let sequenceNumber: Int
        /// The rendition's samples; SAMPLE-AES encrypts them and makes `bytes` from them.
        public var tracks: [FragmentTrack]
        /// The rendition's tracks as its init section describes them.
        public let descriptions: [TrackDescription]
        /// The segment file: empty under SAMPLE-AES, whose fragment is made from the encrypted samples.
        public var bytes: [UInt8]
        /// The segment's EXT-X-KEY.
        public var key: MediaPlaylist.Key?
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

    /// One rendition's piece of a chunk: the next bytes of the part a client may be fetching already.
    public struct RenditionChunk: Sendable, Equatable {
        public var rendition: Int
        public var sequenceNumber: Int
        public var partIndex: Int
        public var bytes: [UInt8]
    }

    public let layout: StreamLayout
    public let policy: PlaylistPolicy
    /// How segments are encrypted, when set before the first section. An encrypted stream has no I-frame
    /// playlists: an AES-128 byte range cannot be decrypted apart from its segment, and the players that
    /// play SAMPLE-AES find I-frames in its segments.
    public var encryption: MediaPlaylist.Key.Method?
    /// Every track of the current section, in the stream's order.
    public private(set) var tracks: [TrackDescription] = []
    /// File number of the next segment: never reused, even for segments a crash left unlisted.
    public var nextSequenceNumber = 1
    private var renditions: [RenditionListing]
    /// The rates the master playlist declares before anything is measured (live); nil measures them.
    private let declared: [RenditionMeasure]?
    private var renderedMaster = false
    /// What the live master playlist declares, once rendered.
    private var masterMeasures: [RenditionMeasure]?
    /// A resumed stream whose tracks changed lists the earlier formats too: CODECS of the master
    /// playlist's variants and I-frame streams before the resume, by URI (RFC 8216bis 4.4.6.2).
    private var earlierCodecs: [String: [String]] = [:]
    /// The fragments `render(part:)` and `render(chunk:)` made for segments not rendered yet, by sequence
    /// number and fragment number (a chunk's index, or a part's without chunks), one per rendition (nil
    /// where it has no samples): the segment file is them one after the other.
    private var renderedFragments: [Int: [Int: [[UInt8]?]]] = [:]
    private var sectionCount = 0

    /// A new stream. A live stream's master playlist is rendered from the `declared` rates once the first
    /// playlists exist (a rate below the first segment's is raised to it); a live stream without them
    /// has none.
    public init(layout: StreamLayout, policy: PlaylistPolicy, declared: [RenditionMeasure]? = nil) {
        self.layout = layout
        self.policy = policy
        self.declared = declared
        renditions = layout.renditions.map { RenditionListing(directory: $0.directory, policy: policy) }
    }

    private var isLive: Bool { policy != .vod }

    /// Whether a rendition gets an I-frame playlist.
    private func hasIFrames(_ rendition: RenditionListing) -> Bool {
        rendition.hasVideo && encryption == nil
    }

    /// Starts a section with these tracks: the first one makes each rendition's init section; a later one
    /// follows a discontinuity and makes new init sections only where the tracks changed. A resumed
    /// rendition's init section is left out when `isStored` says the store holds these very bytes.
    /// `sampleKey` is what SAMPLE-AES init sections name.
    public mutating func beginSection<Failure: Error>(
        tracks: [TrackDescription], sampleKey: SampleEncryption.TrackKey? = nil,
        isStored: (File) throws(Failure) -> Bool
    ) throws(Failure) -> [File] {
        sectionCount += 1
        self.tracks = tracks
        var files: [File] = []
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
            let file = File(path: renditions[index].path(renditions[index].initName),
                            bytes: InitSegment.make(tracks: own, key: sampleKey))
            if renditions[index].resumed, try isStored(file) { continue }
            renditions[index].countMedia(bytes: file.bytes.count)
            files.append(file)
        }
        return files
    }

    /// Starts a section of a stream that was not resumed: every init section it makes is stored.
    public mutating func beginSection(tracks: [TrackDescription], sampleKey: SampleEncryption.TrackKey? = nil) -> [File] {
        beginSection(tracks: tracks, sampleKey: sampleKey) { (_: File) throws(Never) in false }
    }

    /// A clear segment's files: every rendition's part of it, then a live stream's playlists, then, after
    /// the first segment, its master playlist.
    public mutating func write(_ segment: Segment, programDateTime: Date? = nil) -> SegmentFiles {
        list(media(of: segment), programDateTime: programDateTime)
    }

    /// A segment's media, made but not listed yet: a writer stores it before it asks for the playlists
    /// that list it (`list`), so a segment whose storing failed is never listed.
    public struct SegmentMedia: Sendable {
        public let segment: Segment
        /// Every rendition's segment file, in layout order.
        public let files: [File]
        /// Bytes of each rendition's segment file, in layout order (0 where it had no part).
        public let renditionByteCounts: [Int]
        fileprivate let pieces: [(rendition: Int, piece: Segment, firstFragmentSize: Int, key: MediaPlaylist.Key?)]
    }

    /// A clear segment's media files.
    public mutating func media(of segment: Segment) -> SegmentMedia {
        media(of: segment) { (_: inout RenditionMedia) throws(Never) in }
    }

    /// A segment's media files, each rendition's passed through `encrypt`.
    public mutating func media<Failure: Error>(
        of segment: Segment, encrypt: (inout RenditionMedia) throws(Failure) -> Void
    ) throws(Failure) -> SegmentMedia {
        precondition(sectionCount > 0, "a section begins before its segments")
        precondition(encryption == nil || segment.parts.isEmpty, "parts are sent clear: an encrypted stream has none")
        let timescales = tracks.map(\.timescale)
        // Every part's fragments, one per rendition: those `render(part:)` made, the others made now.
        var started = renditions.map { _ in false }
        let fragmentsOfParts = segment.parts.map { partFragments(of: $0, started: &started) }
        // Dropped now, with any of earlier segments that were never written: nothing is held past this write.
        renderedFragments = renderedFragments.filter { $0.key > segment.sequenceNumber }
        var files: [File] = []
        var byteCounts: [Int] = []
        var pieces: [(rendition: Int, piece: Segment, firstFragmentSize: Int, key: MediaPlaylist.Key?)] = []
        for (index, piece) in layout.split(segment, timescales: timescales).enumerated() {
            guard let piece else {
                byteCounts.append(0)
                continue
            }
            var media = RenditionMedia(rendition: index, directory: renditions[index].directory,
                                       sequenceNumber: piece.sequenceNumber, tracks: piece.tracks,
                                       descriptions: renditions[index].tracks, bytes: [])
            var firstFragmentSize: Int?
            if encryption == .sampleAES {
                try encrypt(&media)
            } else if segment.parts.isEmpty {
                media.bytes = MediaFragment.make(sequenceNumber: UInt32(piece.sequenceNumber), tracks: piece.tracks,
                                                 descriptions: renditions[index].tracks)
                try encrypt(&media)
            } else {
                // The parts' fragments one after the other: the file is exactly what clients got in parts.
                let own = fragmentsOfParts.flatMap { $0[index] }
                media.bytes = Array(own.joined())
                firstFragmentSize = own.first?.count
            }
            files.append(File(path: renditions[index].path(StreamLayout.segmentPath(piece.sequenceNumber)),
                              bytes: media.bytes))
            byteCounts.append(media.bytes.count)
            pieces.append((index, piece, firstFragmentSize ?? media.bytes.count, media.key))
        }
        return SegmentMedia(segment: segment, files: files, renditionByteCounts: byteCounts, pieces: pieces)
    }

    /// Lists stored media: its files, then a live stream's playlists, then, after the first segment, its
    /// master playlist.
    public mutating func list(_ media: SegmentMedia, programDateTime: Date? = nil) -> SegmentFiles {
        let segment = media.segment
        var output = SegmentFiles(files: media.files, segmentFileCount: media.files.count,
                                  renditionByteCounts: media.renditionByteCounts)
        nextSequenceNumber = max(nextSequenceNumber, segment.sequenceNumber + 1)
        // The I-frames lie in the first fragment: the whole file, or the first part or chunk.
        let firstParts = firstFragments(of: segment)
        for (index, piece, firstFragmentSize, key) in media.pieces {
            let byteCount = media.renditionByteCounts[index]
            renditions[index].countMedia(bytes: byteCount)
            if segment.followsDiscontinuity { renditions[index].markDiscontinuity() }
            output.removals += renditions[index].append(piece, programDateTime: programDateTime, byteCount: byteCount,
                                                        firstFragmentSize: firstFragmentSize,
                                                        firstFragment: firstParts[index], key: key)
            if isLive { output.files += playlistFiles(of: index) }
        }
        guard isLive else { return output }
        if let master = liveMaster(listedAny: !media.pieces.isEmpty) {
            output.files.append(master)
            output.rendersMaster = true
        }
        return output
    }

    /// The live master playlist when it is due: once, after the first segment, and again when what it
    /// declares no longer holds.
    private mutating func liveMaster(listedAny: Bool) -> File? {
        // Once the formats from before a resume have left every window, the master lists only the
        // current ones again: CODECS names formats that are present (RFC 8216bis 4.4.6.2).
        if !earlierCodecs.isEmpty, renditions.allSatisfy({ rendition in
            rendition.playlist.segments.allSatisfy { $0.mapURI == rendition.initName }
        }) {
            earlierCodecs = [:]
            renderedMaster = false
        }
        // A guessed rate went past what the master playlist declares, or its average moved away from it as
        // the measure settled: it is declared again, measured.
        if renderedMaster, let masterMeasures, masterMeasures.indices.contains(where: { index in
            masterMeasures[index].isOutdated(by: renditions[index].measure)
        }) {
            renderedMaster = false
        }
        guard !renderedMaster, var measures = declared, listedAny else { return nil }
        for index in measures.indices {
            guard !measures[index].isEstimate else {
                // What was measured so far, with room for a camera's rate to vary.
                let measured = renditions[index].measure
                measures[index].averageBitrate = measured.averageBitrate
                measures[index].iFrameAverageBitrate = measured.iFrameAverageBitrate
                measures[index].peakBitrate = max(masterMeasures?[index].peakBitrate ?? 0,
                                                  measured.peakBitrate + measured.peakBitrate / 4)
                measures[index].iFramePeakBitrate = max(masterMeasures?[index].iFramePeakBitrate ?? 0,
                                                        measured.iFramePeakBitrate + measured.iFramePeakBitrate / 4)
                continue
            }
            measures[index].peakBitrate = max(measures[index].peakBitrate, renditions[index].peakBitrate)
            measures[index].iFramePeakBitrate = max(measures[index].iFramePeakBitrate,
                                                    renditions[index].iFrames.peakBitrate)
        }
        masterMeasures = measures
        renderedMaster = true
        return File(path: StreamLayout.masterPlaylistName, bytes: Array(masterPlaylist(measured: measures).render().utf8))
    }

    /// The fragments of a part for every rendition that has samples in it: the same bytes the segment
    /// file will hold, kept until `write` renders that segment. A part handed out in chunks is its
    /// chunks' fragments, as `render(chunk:)` made them.
    public mutating func render(part: Segment) -> [RenditionPart] {
        let split = layout.split(part, timescales: tracks.map(\.timescale))
        var started = startedRenditions(sequenceNumber: part.sequenceNumber)
        let fragments = partFragments(of: part, started: &started)
        if part.chunks.isEmpty {
            renderedFragments[part.sequenceNumber, default: [:]][part.partIndex ?? 0] = fragments.map(\.first)
        }
        return split.indices.compactMap { index in
            guard let own = split[index], !fragments[index].isEmpty else { return nil }
            return RenditionPart(rendition: index, sequenceNumber: own.sequenceNumber, partIndex: own.partIndex ?? 0,
                                 durationSeconds: own.durationSeconds, independent: own.isIndependent,
                                 bytes: Array(fragments[index].joined()),
                                 endsSegment: own.endsSegment, followsDiscontinuity: own.followsDiscontinuity)
        }
    }

    /// The fragments of a chunk of a part for every rendition that has samples in it, kept until `write`
    /// renders that segment: the part will be its chunks' fragments one after the other.
    public mutating func render(chunk: Segment) -> [RenditionChunk] {
        let started = startedRenditions(sequenceNumber: chunk.sequenceNumber)
        let fragments = fragments(of: layout.split(chunk, timescales: tracks.map(\.timescale)), number: chunk.chunkIndex ?? 0,
                                  started: started)
        renderedFragments[chunk.sequenceNumber, default: [:]][chunk.chunkIndex ?? 0] = fragments
        return fragments.indices.compactMap { index in
            fragments[index].map { RenditionChunk(rendition: index, sequenceNumber: chunk.sequenceNumber,
                                                  partIndex: chunk.partIndex ?? 0, bytes: $0) }
        }
    }

    /// Each rendition's first part or chunk of a segment made of parts (nil for one without parts, or
    /// where the rendition has none): the fragment that starts its file.
    private func firstFragments(of segment: Segment) -> [Segment?] {
        var first: [Segment?] = renditions.map { _ in nil }
        let timescales = tracks.map(\.timescale)
        for part in segment.parts {
            for piece in part.chunks.isEmpty ? [part] : part.chunks {
                for (index, own) in layout.split(piece, timescales: timescales).enumerated() where first[index] == nil {
                    first[index] = own
                }
                if !first.contains(where: { $0 == nil }) { return first }
            }
        }
        return first
    }

    /// Which renditions have a fragment in segment `sequenceNumber` already, among those rendered so far.
    private func startedRenditions(sequenceNumber: Int) -> [Bool] {
        let rendered = renderedFragments[sequenceNumber] ?? [:]
        return renditions.indices.map { index in rendered.values.contains { $0[index] != nil } }
    }

    /// A part's fragments for each rendition (none where it has no samples): its own, or its chunks'
    /// in order; those rendered already are taken as they were. `started` says which renditions have a
    /// fragment in the segment before this part, and is updated.
    private func partFragments(of part: Segment, started: inout [Bool]) -> [[[UInt8]]] {
        let rendered = renderedFragments[part.sequenceNumber] ?? [:]
        let timescales = tracks.map(\.timescale)
        var own: [[[UInt8]]] = renditions.map { _ in [] }
        for piece in part.chunks.isEmpty ? [part] : part.chunks {
            let number = piece.chunkIndex ?? piece.partIndex ?? 0
            let fragments = rendered[number] ?? fragments(of: layout.split(piece, timescales: timescales),
                                                          number: number, started: started)
            for index in fragments.indices {
                guard let fragment = fragments[index] else { continue }
                own[index].append(fragment)
                started[index] = true
            }
        }
        return own
    }

    /// A fragment for each rendition of a part's or chunk's `split`, nil where the rendition has no
    /// samples in it. Fragment numbers go on from segment to segment (segment × 1000 + `number`); a
    /// rendition's first fragment in its segment carries the segment's `styp`.
    private func fragments(of split: [Segment?], number: Int, started: [Bool]) -> [[UInt8]?] {
        split.indices.map { index in
            split[index].map { piece in
                MediaFragment.make(sequenceNumber: UInt32(truncatingIfNeeded: piece.sequenceNumber * 1000 + number),
                                   tracks: piece.tracks, descriptions: renditions[index].tracks,
                                   segmentType: !started[index])
            }
        }
    }

    /// Ends the stream: a live stream's playlists with EXT-X-ENDLIST; a recording's playlists, every
    /// segment listed, then its master playlist from the rates measured.
    public mutating func finish() -> [File] {
        if isLive {
            return renditions.indices.flatMap { index in
                renditions[index].end()
                return playlistFiles(of: index)
            }
        }
        return renditions.indices.flatMap(playlistFiles(of:))
            + [File(path: StreamLayout.masterPlaylistName,
                    bytes: Array(masterPlaylist(measured: renditions.map(\.measure)).render().utf8))]
    }

    /// A rendition's media playlist, then its I-frame playlist if it has one.
    private func playlistFiles(of index: Int) -> [File] {
        let rendition = renditions[index]
        var files = [File(path: rendition.path(StreamLayout.playlistName), bytes: Array(rendition.renderedPlaylist.utf8))]
        if hasIFrames(rendition) {
            files.append(File(path: rendition.path(StreamLayout.iFramePlaylistName),
                              bytes: Array(rendition.renderedIFramePlaylist.utf8)))
        }
        return files
    }

    /// The first rendition's playlist.
    public var playlist: MediaPlaylist { renditions[0].playlist }

    /// Every rendition's media playlist as it stands, in layout order.
    public var mediaPlaylists: [MediaPlaylist] { renditions.map(\.playlist) }

    /// Every rendition's playlists as they stand, by path: what a publisher uploads.
    public var playlists: [(path: String, playlist: MediaPlaylist)] {
        renditions.flatMap { rendition in
            [(rendition.path(StreamLayout.playlistName), rendition.playlist)]
                + (hasIFrames(rendition) ? [(rendition.path(StreamLayout.iFramePlaylistName), rendition.iFramePlaylist)] : [])
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

    public var summary: Summary {
        let first = renditions.first
        let duration = first?.durationSeconds ?? 0
        let mediaBytes = renditions.reduce(0) { $0 + $1.mediaBytes }
        let peak = renditions.reduce(0) { $0 + $1.peakBitrate }
        return Summary(segmentCount: first?.segmentCount ?? 0, durationSeconds: duration, mediaBytes: mediaBytes,
                       peakBitrate: peak,
                       averageBitrate: duration > 0 ? Int((Double(mediaBytes) * 8 / duration).rounded()) : 0)
    }
}

extension StreamRenderer {
    /// Continues rendition `index` from `previous`, its playlist from an earlier run, whose segments
    /// refer to `initName` from now on: numbering goes on and the first new segment follows a discontinuity.
    public mutating func resume(rendition index: Int, from previous: MediaPlaylist, initName: String) {
        renditions[index] = RenditionListing(directory: layout.renditions[index].directory, policy: policy,
                                             resuming: previous, initName: initName)
    }

    /// Whether a resumed rendition's next segments refer to another init section than its last listed one.
    public var changesInitSection: Bool {
        renditions.contains { rendition in
            rendition.initName != (rendition.playlist.segments.last?.mapURI ?? StreamLayout.initName)
        }
    }

    /// A resumed stream's master playlist, if the earlier run stored one: it is rendered again only if the
    /// tracks changed, when its CODECS list `earlier`'s formats too.
    public mutating func resumeMaster(stored: Bool, earlier: MasterPlaylistDocument?) {
        renderedMaster = stored
        guard stored, changesInitSection else { return }
        for variant in (earlier?.variants ?? []) + (earlier?.iFrameVariants ?? []) {
            earlierCodecs[variant.uri] = variant.codecs ?? []
        }
        renderedMaster = false
    }
}
