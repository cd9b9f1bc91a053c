import HLSKit
import HLSOutput

/// Follows a live stream beyond its store: an LL-HLS server answering blocking requests, delta
/// playlists, a log, metrics. An engine tells any number of them (`LiveConfiguration.observers`),
/// each on the engine's output queue, in stream order; the engine does not know what they are.
/// Every method does nothing unless an observer says otherwise.
public protocol LiveStreamObserver: Sendable {
    /// The stream's renditions and first playlists are known, before any part or segment: the
    /// directories in layout order, their playlists, and the PART-TARGET of them all (the longest
    /// part any of them lists; 0 without parts).
    func started(directories: [String], playlists: [MediaPlaylist], partTargetSeconds: Double)
    /// One rendition's piece of a chunk of a part (LL-HLS), before the part is whole: the next bytes
    /// of that part, which `part` then gives whole.
    func chunk(_ chunk: StreamWriter.RenditionChunk)
    /// One rendition's piece of a part (LL-HLS), before the segment that holds it is stored.
    func part(_ part: StreamWriter.RenditionPart)
    /// Every rendition's playlist, after a segment is listed and at the end.
    func playlists(_ playlists: [MediaPlaylist])
    /// A segment was stored and listed.
    func segmentPublished(_ report: LiveSegmentReport)
    /// The stream's counters as they stand: once it has started, after every listed segment, and as it
    /// ends (before its playlists get EXT-X-ENDLIST).
    func counted(_ statistics: LiveStatistics.Snapshot)
}

extension LiveStreamObserver {
    public func started(directories: [String], playlists: [MediaPlaylist], partTargetSeconds: Double) {}
    public func chunk(_ chunk: StreamWriter.RenditionChunk) {}
    public func part(_ part: StreamWriter.RenditionPart) {}
    public func playlists(_ playlists: [MediaPlaylist]) {}
    public func segmentPublished(_ report: LiveSegmentReport) {}
    public func counted(_ statistics: LiveStatistics.Snapshot) {}
}
