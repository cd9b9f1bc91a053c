import Foundation
import HLSKit

extension StreamWriter {
    /// Why a stream in the store cannot be continued.
    public struct ResumeError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Continues the live stream in `store` after a stop or a crash: numbering goes on, the first new
    /// segment of every rendition follows a discontinuity, and `beginSection` writes a new init section
    /// where the tracks changed. Segments and init sections that no playlist lists any more are deleted,
    /// except those the last run left waiting for a retention time that has not passed at `now`: they are
    /// the `pendingRemovals`. Errors naming the stream are `ResumeError`; a failed listing or deletion is
    /// the store's own.
    public init(resuming store: any StreamStore, layout: StreamLayout, tracks: [TrackDescription],
                policy: PlaylistPolicy, declared: [RenditionMeasure]? = nil, now: Date) throws {
        guard case .live(let targetDurationSeconds, _) = policy else {
            throw ResumeError(description: "only a live stream can be continued")
        }
        self.init(store: store, layout: layout, policy: policy, declared: declared)
        var waiting: [String: Date] = [:]
        if try store.exists(StreamLayout.retiredListName) {
            let text = String(decoding: try store.read(StreamLayout.retiredListName), as: UTF8.self)
            for file in RetiredFiles.parseManifest(text) where file.removableAt > now {
                waiting[file.path] = file.removableAt
            }
        }
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
            let segmentDirectory = rendition.path(StreamLayout.segmentDirectory)
            let storedSegments = try store.list(segmentDirectory).map { StreamLayout.segmentDirectory + "/" + $0 }
            let listed = previous.segments.compactMap { StreamLayout.sequenceNumber(ofPath: $0.uri) }
            highest = max(highest, (listed + storedSegments.compactMap(StreamLayout.sequenceNumber(ofPath:))).max() ?? 0)
            let currentInit = previous.segments.last?.mapURI ?? StreamLayout.initName
            var initName = currentInit
            let names = try store.list(rendition.directory)
            let currentInitPath = rendition.path(currentInit)
            let initBytes = InitSegment.make(tracks: layout.tracks(of: index, in: tracks))
            if try !store.exists(currentInitPath) || store.read(currentInitPath) != initBytes {
                let used = (names + previous.segments.compactMap(\.mapURI)).compactMap(StreamLayout.initNumber(ofName:))
                initName = "init-\(max(used.max() ?? 1, 1) + 1).mp4"
            }
            // Segments and init sections the playlist no longer lists (they left the window, or a crash
            // left them unlisted) are deleted; numbers are never reused, so a cached copy is never wrong.
            let listedPaths = Set(previous.segments.flatMap { [$0.uri] + ($0.mapURI.map { [$0] } ?? []) })
            for path in names.filter({ StreamLayout.initNumber(ofName: $0) != nil }) + storedSegments
            where !listedPaths.contains(path) && path != initName {
                if let removableAt = waiting[rendition.path(path)] {
                    pendingRemovals.append((rendition.path(path), removableAt))
                } else {
                    try store.remove(rendition.path(path))
                }
            }
            renderer.resume(rendition: index, from: previous, initName: initName)
        }
        renderer.nextSequenceNumber = highest + 1
        try store.remove(StreamLayout.retiredListName)
        // The master playlist names the same renditions; it is written again only if missing, or if
        // the tracks changed, since its CODECS must then list the formats from before and after.
        let masterStored = try store.exists(StreamLayout.masterPlaylistName)
        var earlier: MasterPlaylistDocument?
        if masterStored, renderer.changesInitSection {
            let text = try store.read(StreamLayout.masterPlaylistName)
            earlier = MasterPlaylistDocument(text: String(decoding: text, as: UTF8.self))
        }
        renderer.resumeMaster(stored: masterStored, earlier: earlier)
    }

    /// Whether `store` already holds a stream that a new one would overwrite.
    public static func holdsStream(_ store: any StreamStore) throws(StoreError) -> Bool {
        for name in [StreamLayout.playlistName, StreamLayout.masterPlaylistName, StreamLayout.initName]
        where try store.exists(name) {
            return true
        }
        return try !store.list(StreamLayout.segmentDirectory).isEmpty
    }

    /// Removes a previous stream: the playlists first, so the old stream stops being playable before its
    /// media disappears; then the media of every rendition directory the master playlist named.
    public static func removeStream(in store: any StreamStore) throws(StoreError) {
        var directories = [""]
        if try store.exists(StreamLayout.masterPlaylistName) {
            let text = String(decoding: try store.read(StreamLayout.masterPlaylistName), as: UTF8.self)
            directories += renditionDirectories(inMaster: text)
        }
        try store.remove(StreamLayout.masterPlaylistName)
        try store.remove(StreamLayout.retiredListName)
        for directory in directories {
            let prefix = directory.isEmpty ? "" : directory + "/"
            try store.remove(prefix + StreamLayout.playlistName)
            try store.remove(prefix + StreamLayout.iFramePlaylistName)
        }
        for directory in directories {
            let prefix = directory.isEmpty ? "" : directory + "/"
            for name in try store.list(directory) where StreamLayout.initNumber(ofName: name) != nil {
                try store.remove(prefix + name)
            }
            for name in try store.list(prefix + StreamLayout.segmentDirectory)
            where StreamFileKind(path: name) == .segment {
                try store.remove(prefix + StreamLayout.segmentDirectory + "/" + name)
            }
        }
    }

    /// The directories of the playlists a master playlist of ours names (`720p/playlist.m3u8` → `720p`).
    static func renditionDirectories(inMaster text: String) -> [String] {
        let master = MasterPlaylistDocument(text: text)
        var directories: [String] = []
        for uri in (master.variants + master.iFrameVariants).map(\.uri) + master.renditions.compactMap(\.uri) {
            guard let slash = uri.lastIndex(of: "/"), !uri.contains(".."), !uri.hasPrefix("/"),
                  !uri.contains(":") else { continue }
            let directory = String(uri[..<slash])
            if !directories.contains(directory) { directories.append(directory) }
        }
        return directories
    }
}
