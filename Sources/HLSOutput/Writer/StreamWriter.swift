import HLSKit

/// Writes one VOD stream's files in the order that keeps every published state valid: init sections
/// first, each segment before the playlist that lists it, the master playlist last (DESIGN.md,
/// writing rules).
///
/// A stream is made of sections: recordings joined one after another. Each section's timestamps start
/// afresh behind EXT-X-DISCONTINUITY; a section whose tracks differ from the one before gets its own
/// init section (`init-2.mp4` …). The stream's tracks are spread over the renditions of a
/// `StreamLayout`; every video rendition also gets an I-frame playlist.
public struct StreamWriter {

    public struct Summary: Sendable, Equatable {
        public var segmentCount: Int
        public var durationSeconds: Double
        /// Bytes of init sections and segments.
        public var mediaBytes: Int
        /// The largest segment's bitrate, bits per second.
        public var peakBitrate: Int
        public var averageBitrate: Int
    }

    public let store: any StreamStore
    public let layout: StreamLayout?
    public private(set) var tracks: [TrackDescription] = []
    private var renditions: [RenditionRecord] = []
    private var sectionCount = 0
    private var writtenPaths: [String] = []

    /// `layout` nil puts every track in one rendition at the top of the directory.
    public init(store: any StreamStore, layout: StreamLayout? = nil) {
        self.store = store
        self.layout = layout
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
        let master = (try? store.read(StreamLayout.masterPlaylistName)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        let directories = [""] + renditionDirectories(inMaster: master)
        try store.remove(StreamLayout.masterPlaylistName)
        for directory in directories {
            let prefix = directory.isEmpty ? "" : directory + "/"
            try store.remove(prefix + StreamLayout.playlistName)
            try store.remove(prefix + StreamLayout.iFramePlaylistName)
        }
        for directory in directories {
            let prefix = directory.isEmpty ? "" : directory + "/"
            for name in (try? store.list(directory)) ?? [] where name.hasPrefix("init") && name.hasSuffix(".mp4") {
                try store.remove(prefix + name)
            }
            for name in (try? store.list(prefix + StreamLayout.segmentDirectory)) ?? [] where name.hasSuffix(".m4s") {
                try store.remove(prefix + StreamLayout.segmentDirectory + "/" + name)
            }
        }
    }

    /// The directories of the playlists a master playlist of ours names (`720p/playlist.m3u8` → `720p`).
    static func renditionDirectories(inMaster text: String) -> [String] {
        var directories: [String] = []
        for line in text.split(separator: "\n") {
            var uri = String(line)
            if line.hasPrefix("#"), let range = line.range(of: "URI=\"") {
                uri = String(line[range.upperBound...].prefix { $0 != "\"" })
            } else if line.hasPrefix("#") {
                continue
            }
            guard let slash = uri.lastIndex(of: "/"), !uri.contains(".."), !uri.hasPrefix("/"),
                  !uri.contains(":") else { continue }
            let directory = String(uri[..<slash])
            if !directories.contains(directory) { directories.append(directory) }
        }
        return directories
    }

    /// Starts a section with these tracks: the first one writes each rendition's `init.mp4`; a later one
    /// follows a discontinuity and writes new init sections only where the tracks changed.
    /// Returns the paths of the init sections it wrote.
    @discardableResult
    public mutating func beginSection(tracks: [TrackDescription]) throws(StoreError) -> [String] {
        sectionCount += 1
        let layout = self.layout ?? .single(trackCount: tracks.count)
        if renditions.isEmpty {
            renditions = layout.renditions.indices.map { RenditionRecord(layout.renditions[$0]) }
        }
        self.tracks = tracks
        var written: [String] = []
        for index in renditions.indices {
            let own = layout.tracks(of: index, in: tracks)
            renditions[index].startsSection = sectionCount > 1
            guard own != renditions[index].tracks else { continue }
            renditions[index].earlierTracks += renditions[index].tracks
            renditions[index].tracks = own
            renditions[index].initName = sectionCount == 1 ? StreamLayout.initName : "init-\(sectionCount).mp4"
            let path = renditions[index].path(renditions[index].initName)
            try put(InitSegment.make(tracks: own), at: path, rendition: index)
            written.append(path)
        }
        return written
    }

    /// Stores each rendition's part of the segment; returns the paths written.
    @discardableResult
    public mutating func write(_ segment: Segment) throws(StoreError) -> [String] {
        let layout = self.layout ?? .single(trackCount: tracks.count)
        let parts = layout.split(segment, timescales: tracks.map(\.timescale))
        var written: [String] = []
        for (index, part) in parts.enumerated() {
            guard let part else { continue }
            let path = renditions[index].path(StreamLayout.segmentPath(part.sequenceNumber))
            let bytes = MediaFragment.make(sequenceNumber: UInt32(part.sequenceNumber), tracks: part.tracks,
                                           descriptions: renditions[index].tracks)
            try put(bytes, at: path, rendition: index)
            renditions[index].record(part, bytes: bytes)
            written.append(path)
        }
        return written
    }

    /// Writes every rendition's VOD playlist (and I-frame playlist), ending with ENDLIST, then the
    /// master playlist that points at them.
    public mutating func finishVOD() throws(StoreError) -> Summary {
        // Media went out with deferred durability; one filesystem sync covers it before a playlist names it.
        try store.synchronize()
        for index in renditions.indices {
            let record = renditions[index]
            try put(Array(record.playlist.render().utf8), at: record.path(StreamLayout.playlistName), rendition: index)
            if let iFrames = record.iFramePlaylist {
                try put(Array(iFrames.render().utf8), at: record.path(StreamLayout.iFramePlaylistName), rendition: index)
            }
        }
        try put(Array(masterPlaylist.render().utf8), at: StreamLayout.masterPlaylistName, rendition: nil)
        return summary
    }

    /// The VOD playlist of every segment written so far, of the first rendition.
    public var vodPlaylist: MediaPlaylist {
        renditions.first?.playlist ?? RenditionRecord.emptyPlaylist
    }

    /// Every rendition's playlists as they stand, by path: what a publisher uploads.
    public var playlists: [(path: String, playlist: MediaPlaylist)] {
        renditions.flatMap { record in
            [(record.path(StreamLayout.playlistName), record.playlist)]
                + (record.iFramePlaylist.map { [(record.path(StreamLayout.iFramePlaylistName), $0)] } ?? [])
        }
    }

    /// Every rendition's directory, relative to the stream directory ("" is the directory itself).
    public var renditionDirectories: [String] { renditions.map(\.directory) }

    /// The master playlist from what was measured.
    public var masterPlaylist: MasterPlaylist {
        let layout = self.layout ?? .single(trackCount: tracks.count)
        let measured = renditions.map { record in
            var measure = RenditionMeasure(
                tracks: record.tracks, peakBitrate: record.peakBitrate, averageBitrate: record.averageBitrate,
                framesPerSecond: record.framesPerSecond, iFramePeakBitrate: record.iFramePeakBitrate,
                iFrameAverageBitrate: record.iFrameAverageBitrate)
            measure.earlierTracks = record.earlierTracks
            return measure
        }
        return MasterPlaylistBuilder(layout: layout, allTracks: tracks, measured: measured)
            .make(version: vodPlaylist.version)
    }

    private var summary: Summary {
        let first = renditions.first
        let duration = first?.durationSeconds ?? 0
        let mediaBytes = renditions.reduce(0) { $0 + $1.mediaBytes }
        let peak = renditions.reduce(0) { $0 + $1.peakBitrate }
        return Summary(segmentCount: first?.entries.count ?? 0, durationSeconds: duration, mediaBytes: mediaBytes,
                       peakBitrate: peak,
                       averageBitrate: duration > 0 ? Int((Double(mediaBytes) * 8 / duration).rounded()) : 0)
    }

    /// Removes every file this writer stored, newest first, so a failed run leaves no stream that looks
    /// valid, then the directories left empty that the run created.
    public func removeWrittenFiles() {
        for path in writtenPaths.reversed() { try? store.remove(path) }
        store.removeEmptyDirectories()
    }

    private mutating func put(_ bytes: [UInt8], at path: String, rendition: Int?) throws(StoreError) {
        let isPlaylist = path.hasSuffix(".m3u8")
        // Nothing refers to media before the playlist, so it need not reach the disk one file at a time.
        try store.write(bytes, to: path, durability: isPlaylist ? .immediate : .deferred)
        writtenPaths.append(path)
        if !isPlaylist, let rendition { renditions[rendition].mediaBytes += bytes.count }
    }
}

/// What the VOD writer keeps of one rendition.
private struct RenditionRecord {
    let directory: String
    var tracks: [TrackDescription] = []
    /// The tracks of earlier sections that had other parameters.
    var earlierTracks: [TrackDescription] = []
    var initName = StreamLayout.initName
    var startsSection = false
    var entries: [MediaPlaylist.Segment] = []
    var iFrames = IFrameIndex()
    var mediaBytes = 0
    var peakBitrate = 0
    private var firstSequenceNumber: Int?
    private var frameRate: FrameRateMeter?

    init(_ rendition: StreamLayout.Rendition) {
        directory = rendition.directory
    }

    static let emptyPlaylist = MediaPlaylist(targetDurationSeconds: 1, mediaSequence: 1, playlistType: .vod,
                                             independentSegments: true, endList: true)

    func path(_ name: String) -> String {
        directory.isEmpty ? name : directory + "/" + name
    }

    mutating func record(_ segment: Segment, bytes: [UInt8]) {
        let path = StreamLayout.segmentPath(segment.sequenceNumber)
        if firstSequenceNumber == nil { firstSequenceNumber = segment.sequenceNumber }
        if segment.durationTicks > 0 {
            let bitrate = Int(Int64(bytes.count) * 8 * Int64(segment.timescale) / segment.durationTicks)
            peakBitrate = max(peakBitrate, bitrate)
        }
        if let video = tracks.first(where: \.isVideo),
           let run = segment.tracks.first(where: { $0.trackID == video.trackID }) {
            var meter = frameRate ?? FrameRateMeter(timescale: Int64(video.timescale))
            for sample in run.samples { meter.add(durationTicks: Int64(sample.durationTicks)) }
            frameRate = meter
            iFrames.add(segment: segment, uri: path, mapURI: initName, discontinuity: startsSection,
                        video: video, fragmentSize: bytes.count)
        }
        entries.append(MediaPlaylist.Segment(uri: path, durationSeconds: segment.durationSeconds, mapURI: initName,
                                             discontinuity: startsSection))
        startsSection = false
    }

    var durationSeconds: Double { entries.reduce(0) { $0 + $1.durationSeconds } }

    var averageBitrate: Int {
        durationSeconds > 0 ? Int((Double(mediaBytes) * 8 / durationSeconds).rounded()) : 0
    }

    /// The peak rate: a variable frame rate's fastest second.
    var framesPerSecond: Double? { frameRate?.framesPerSecond }

    var playlist: MediaPlaylist {
        MediaPlaylist(
            targetDurationSeconds: MediaPlaylist.targetDuration(forSegmentDurations: entries.map(\.durationSeconds)),
            mediaSequence: firstSequenceNumber ?? 1, discontinuitySequence: 0, playlistType: .vod,
            independentSegments: true, segments: entries, endList: true)
    }

    var iFramePlaylist: MediaPlaylist? {
        guard tracks.contains(where: \.isVideo) else { return nil }
        var playlist = iFrames.playlist(playlistType: .vod)
        playlist.endList = true
        return playlist
    }

    var iFramePeakBitrate: Int { iFrames.peakBitrate }
    var iFrameAverageBitrate: Int { iFrames.averageBitrate }
}
