import Foundation
import HLSKit

/// Writes a live stream's files: the init sections, then each segment (every rendition's part of it)
/// before the rolling playlists that list it, and the master playlist once, right after every
/// rendition's first playlist (DESIGN.md, writing rules). Segments that leave the window come back as
/// removals for the caller to delete once their retention time has passed.
public struct LiveStreamWriter {
    /// Why a stream in the directory cannot be continued.
    public struct ResumeError: Error, CustomStringConvertible {
        public var description: String
    }

    public let store: any StreamStore
    public let layout: StreamLayout
    public let tracks: [TrackDescription]
    /// File number of the next segment: never reused, even for segments a crash left unlisted.
    public private(set) var nextSequenceNumber: Int
    private var renditions: [LiveRendition]
    private let declared: [RenditionMeasure]?
    private var wroteMaster = false
    /// A resumed stream whose tracks changed lists the earlier formats too: CODECS of the master
    /// playlist's variants and I-frame streams before the resume, by URI (RFC 8216bis 4.4.6.2).
    private var earlierCodecs: [String: [String]] = [:]
    /// The fragments `render(part:)` made for segments not written yet, by sequence number and part index,
    /// one per rendition (nil where the part has no samples): the segment file is them one after the other.
    private var renderedParts: [Int: [Int: [[UInt8]?]]] = [:]

    /// A new stream in an empty directory. The master playlist is written from the `declared` rates
    /// once the first playlists exist (a rate below the first segment's is raised to it); nil writes none.
    public init(store: any StreamStore, layout: StreamLayout? = nil, tracks: [TrackDescription],
                targetDurationSeconds: Int, windowSize: Int, declared: [RenditionMeasure]? = nil) {
        let layout = layout ?? .single(trackCount: tracks.count)
        self.store = store
        self.layout = layout
        self.tracks = tracks
        self.declared = declared
        nextSequenceNumber = 1
        renditions = layout.renditions.indices.map { index in
            LiveRendition(directory: layout.renditions[index].directory, tracks: layout.tracks(of: index, in: tracks),
                          live: LivePlaylist(targetDurationSeconds: targetDurationSeconds, windowSize: windowSize),
                          initName: StreamLayout.initName)
        }
    }

    /// Continues the stream in `store` after a stop or a crash: numbering goes on, the first new segment
    /// of every rendition follows a discontinuity, and a new init section is written where the tracks
    /// changed.
    public init(resuming store: any StreamStore, layout: StreamLayout? = nil, tracks: [TrackDescription],
                targetDurationSeconds: Int, windowSize: Int, declared: [RenditionMeasure]? = nil) throws {
        // Errors naming the stream are ResumeError; a failed listing or deletion is the store's own.
        let layout = layout ?? .single(trackCount: tracks.count)
        self.store = store
        self.layout = layout
        self.tracks = tracks
        self.declared = declared
        var renditions: [LiveRendition] = []
        var highest = 0
        for index in layout.renditions.indices {
            let rendition = layout.renditions[index]
            let playlistPath = rendition.path(StreamLayout.playlistName)
            let previous: MediaPlaylist
            do {
                previous = try MediaPlaylist.parse(String(decoding: try store.read(playlistPath), as: UTF8.self))
            } catch {
                throw ResumeError(description: "\(store.location)/\(playlistPath) cannot be continued (\(error)); "
                    + "a stream is continued with the same renditions it was started with, or replaced")
            }
            guard previous.targetDurationSeconds >= targetDurationSeconds else {
                throw ResumeError(description: "the stream in \(store.location) has a target duration of "
                    + "\(previous.targetDurationSeconds) s, shorter than this run needs; the target duration "
                    + "cannot change within a stream: replace the stream or use shorter segments")
            }
            let own = layout.tracks(of: index, in: tracks)
            let initBytes = InitSegment.make(tracks: own)
            let listed = previous.segments.compactMap { StreamLayout.sequenceNumber(ofPath: $0.uri) }
            let stored = ((try? store.list(rendition.path(StreamLayout.segmentDirectory))) ?? [])
                .compactMap { StreamLayout.sequenceNumber(ofPath: StreamLayout.segmentDirectory + "/" + $0) }
            highest = max(highest, (listed + stored).max() ?? 0)
            let currentInit = previous.segments.last?.mapURI ?? StreamLayout.initName
            var initName = currentInit
            let names = try store.list(rendition.directory)
            if (try? store.read(rendition.path(currentInit))) != initBytes {
                let used = (names + previous.segments.compactMap(\.mapURI)).compactMap(StreamLayout.initNumber(ofName:))
                initName = "init-\(max(used.max() ?? 1, 1) + 1).mp4"
            }
            // Segments and init sections the playlist no longer lists (they left the window, or a crash
            // left them unlisted) are deleted; numbers are never reused, so a cached copy is never wrong.
            let listedPaths = Set(previous.segments.flatMap { [$0.uri] + ($0.mapURI.map { [$0] } ?? []) })
            let segmentDirectory = rendition.path(StreamLayout.segmentDirectory)
            let segmentPaths = try store.exists(segmentDirectory)
                ? try store.list(segmentDirectory).map { StreamLayout.segmentDirectory + "/" + $0 } : []
            for path in names.filter({ StreamLayout.initNumber(ofName: $0) != nil }) + segmentPaths
            where !listedPaths.contains(path) && path != initName {
                try store.remove(rendition.path(path))
            }
            var live = LiveRendition(directory: rendition.directory, tracks: own,
                                     live: LivePlaylist(resuming: previous, windowSize: windowSize), initName: initName)
            live.iFrameSequenceOffset = previous.mediaSequence + previous.segments.count
            renditions.append(live)
        }
        self.renditions = renditions
        nextSequenceNumber = highest + 1
        // The master playlist names the same renditions; it is written again only if missing, or if
        // the tracks changed, since its CODECS must then list the formats from before and after.
        wroteMaster = try store.exists(StreamLayout.masterPlaylistName)
        if wroteMaster, zip(renditions, layout.renditions).contains(where: { rendition, _ in
            rendition.initName != (rendition.live.playlist.segments.last?.mapURI ?? StreamLayout.initName)
        }), let text = try? store.read(StreamLayout.masterPlaylistName) {
            let previous = MasterPlaylistDocument(text: String(decoding: text, as: UTF8.self))
            for variant in previous.variants + previous.iFrameVariants {
                earlierCodecs[variant.uri] = variant.codecs ?? []
            }
            wroteMaster = false
        }
    }

    /// The first rendition's playlist.
    public var live: LivePlaylist { renditions[0].live }

    /// The init section the next segments of the first rendition refer to.
    public var initName: String { renditions[0].initName }

    /// Every init section's path.
    public var initPaths: [String] { renditions.map { $0.path($0.initName) } }

    /// Every rendition's media playlist as it stands, in layout order.
    public var mediaPlaylists: [MediaPlaylist] { renditions.map(\.live.playlist) }

    /// Every rendition's playlists as they stand, by path: what a publisher uploads.
    public var playlists: [(path: String, playlist: MediaPlaylist)] {
        renditions.flatMap { rendition in
            [(rendition.path(StreamLayout.playlistName), rendition.live.playlist)]
                + (rendition.hasVideo ? [(rendition.path(StreamLayout.iFramePlaylistName), rendition.iFramePlaylist)] : [])
        }
    }

    /// Stores the init sections, except where the stream already has these exact bytes under that name.
    public func writeInitSection() throws(StoreError) {
        for rendition in renditions {
            let path = rendition.path(rendition.initName)
            let bytes = InitSegment.make(tracks: rendition.tracks)
            if (try? store.read(path)) == bytes { continue }
            try store.write(bytes, to: path)
        }
    }

    /// What storing one segment did.
    public struct Written: Sendable, Equatable {
        /// The first rendition's segment file.
        public var path: String
        /// Every file stored, segments first, then playlists.
        public var paths: [String]
        /// Bytes of every rendition's segment file.
        public var byteCount: Int
        /// Bytes of each rendition's segment file, in layout order (0 where it had no part).
        public var renditionByteCounts: [Int]
        /// Segments that left the window, their URIs relative to the stream directory.
        public var removals: [LivePlaylist.Removal]
        /// Whether this write stored the master playlist.
        public var wroteMaster: Bool
    }

    /// Stores every rendition's part of a segment, then the playlists that list them.
    public mutating func write(_ segment: Segment, programDateTime: Date?) throws(StoreError) -> Written {
        let timescales = tracks.map(\.timescale)
        let parts = layout.split(segment, timescales: timescales)
        let rendered = renderedParts[segment.sequenceNumber] ?? [:]
        // Dropped now, with any of earlier segments that were never written: nothing is held past this write.
        renderedParts = renderedParts.filter { $0.key > segment.sequenceNumber }
        // Every part's fragments, one per rendition: those `render(part:)` made, the others made now.
        let partFragments = segment.parts.map { piece in
            rendered[piece.partIndex ?? 0] ?? fragments(of: layout.split(piece, timescales: timescales))
        }
        // The I-frames lie in the first fragment: the whole file, or the first part.
        let firstPieces = segment.parts.first.map { layout.split($0, timescales: timescales) }
        var written = Written(path: "", paths: [], byteCount: 0, renditionByteCounts: [], removals: [],
                              wroteMaster: false)
        var stored: [(Int, Segment, Int, Segment?)] = []
        for (index, part) in parts.enumerated() {
            guard let part else {
                written.renditionByteCounts.append(0)
                continue
            }
            let path = renditions[index].path(StreamLayout.segmentPath(part.sequenceNumber))
            var bytes: [UInt8] = []
            var firstPartSize: Int?
            if segment.parts.isEmpty {
                bytes = MediaFragment.make(sequenceNumber: UInt32(part.sequenceNumber), tracks: part.tracks,
                                           descriptions: renditions[index].tracks)
            } else {
                // The parts' fragments one after the other: the file is exactly what clients got in parts.
                let own = partFragments.compactMap { $0[index] }
                bytes = Array(own.joined())
                firstPartSize = own.first?.count
            }
            try store.write(bytes, to: path)
            if written.path.isEmpty { written.path = path }
            written.paths.append(path)
            written.byteCount += bytes.count
            written.renditionByteCounts.append(bytes.count)
            stored.append((index, part, firstPartSize ?? bytes.count, firstPieces?[index]))
        }
        nextSequenceNumber = max(nextSequenceNumber, segment.sequenceNumber + 1)
        for (index, part, size, iFrameSource) in stored {
            if segment.followsDiscontinuity { renditions[index].live.markDiscontinuity() }
            written.removals += renditions[index].append(part, programDateTime: programDateTime, fragmentSize: size,
                                                         iFrameSource: iFrameSource)
            written.paths += try writePlaylists(of: index)
        }
        // Once the formats from before a resume have left every window, the master lists only the
        // current ones again: CODECS names formats that are present (RFC 8216bis 4.4.6.2).
        if !earlierCodecs.isEmpty, renditions.allSatisfy({ rendition in
            rendition.live.playlist.segments.allSatisfy { $0.mapURI == rendition.initName }
        }) {
            earlierCodecs = [:]
            wroteMaster = false
        }
        if !wroteMaster, var measures = declared {
            for (index, part, size, _) in stored where part.durationTicks > 0 {
                let bitrate = Int(Int64(size) * 8 * Int64(part.timescale) / part.durationTicks)
                measures[index].peakBitrate = max(measures[index].peakBitrate, bitrate)
                measures[index].iFramePeakBitrate = max(measures[index].iFramePeakBitrate, renditions[index].iFrames.peakBitrate)
            }
            var master = MasterPlaylistBuilder(layout: layout, allTracks: tracks, measured: measures)
                .make(version: renditions[0].live.playlist.version)
            if !earlierCodecs.isEmpty {
                for index in master.variants.indices {
                    master.variants[index].codecs = Self.joined(earlierCodecs[master.variants[index].uri],
                                                                master.variants[index].codecs)
                }
                for index in master.iFrameStreams.indices {
                    master.iFrameStreams[index].codecs = Self.joined(earlierCodecs[master.iFrameStreams[index].uri],
                                                                     master.iFrameStreams[index].codecs)
                }
            }
            try store.write(Array(master.render().utf8), to: StreamLayout.masterPlaylistName)
            wroteMaster = true
            written.wroteMaster = true
            written.paths.append(StreamLayout.masterPlaylistName)
        }
        return written
    }

    /// Both lists of formats, each once, video before audio.
    private static func joined(_ earlier: [String]?, _ current: [String]?) -> [String]? {
        guard let earlier, !earlier.isEmpty else { return current }
        var all: [String] = []
        for codec in earlier + (current ?? []) where !all.contains(codec) { all.append(codec) }
        let isAudio = { (codec: String) in codec.hasPrefix("mp4a") || codec.hasPrefix("ac-3") || codec.hasPrefix("ec-3") }
        return all.filter { !isAudio($0) } + all.filter(isAudio)
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

    /// Ends the stream: every playlist gets EXT-X-ENDLIST.
    public mutating func finish() throws(StoreError) {
        for index in renditions.indices {
            renditions[index].live.end()
            try writePlaylists(of: index)
        }
    }

    /// Writes every rendition's playlists as they stand.
    public func writePlaylist() throws(StoreError) {
        for index in renditions.indices { try writePlaylists(of: index) }
    }

    @discardableResult
    private func writePlaylists(of index: Int) throws(StoreError) -> [String] {
        let rendition = renditions[index]
        var paths = [rendition.path(StreamLayout.playlistName)]
        try store.write(Array(rendition.live.render().utf8), to: paths[0])
        if rendition.hasVideo {
            paths.append(rendition.path(StreamLayout.iFramePlaylistName))
            try store.write(Array(rendition.iFramePlaylist.render().utf8), to: paths[1])
        }
        return paths
    }
}

/// One rendition of a live stream: its rolling playlist and I-frame playlist.
private struct LiveRendition {
    let directory: String
    let tracks: [TrackDescription]
    var live: LivePlaylist
    var initName: String
    var iFrames = IFrameIndex()
    /// The media sequence number of the first I-frame entry this run adds.
    var iFrameSequenceOffset = 1

    func path(_ name: String) -> String {
        directory.isEmpty ? name : directory + "/" + name
    }

    var hasVideo: Bool { tracks.contains(where: \.isVideo) }

    mutating func append(_ segment: Segment, programDateTime: Date?, fragmentSize: Int,
                         iFrameSource: Segment? = nil) -> [LivePlaylist.Removal] {
        let uri = StreamLayout.segmentPath(segment.sequenceNumber)
        let discontinuity = live.nextIsDiscontinuity
        let mapsBefore = Set(live.playlist.segments.compactMap(\.mapURI))
        var removals = live.append(MediaPlaylist.Segment(uri: uri, durationSeconds: segment.durationSeconds,
                                                         mapURI: initName, programDateTime: programDateTime))
        // An init section that no listed segment refers to any more leaves with the last one that did.
        let mapsAfter = Set(live.playlist.segments.compactMap(\.mapURI))
        for map in mapsBefore.subtracting(mapsAfter).sorted() {
            removals.append(.init(uri: map, retentionSeconds: removals.map(\.retentionSeconds).max() ?? 0))
        }
        if let video = tracks.first(where: \.isVideo) {
            iFrames.add(segment: segment, uri: uri, mapURI: initName, discontinuity: discontinuity, video: video,
                        fragmentSize: fragmentSize, programDateTime: programDateTime, firstFragment: iFrameSource)
            iFrames.remove(segmentURIs: Set(removals.map(\.uri)))
        }
        return removals.map { removal in
            var moved = removal
            moved.uri = path(removal.uri)
            return moved
        }
    }

    var iFramePlaylist: MediaPlaylist {
        var playlist = iFrames.playlist(playlistType: live.playlist.playlistType,
                                        targetDurationSeconds: live.playlist.targetDurationSeconds,
                                        firstSequenceNumber: iFrameSequenceOffset)
        playlist.endList = live.playlist.endList
        return playlist
    }
}
