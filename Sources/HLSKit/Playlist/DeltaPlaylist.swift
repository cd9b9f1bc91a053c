/// A live playlist as a server that offers delta updates keeps it (RFC 8216bis 4.4.3.8, 6.2.5.1): the
/// full playlist with EXT-X-SERVER-CONTROL:CAN-SKIP-UNTIL, and for `_HLS_skip=YES` the same with the
/// segments more than CAN-SKIP-UNTIL from the end replaced by one EXT-X-SKIP.
///
/// For a long window (`--dvr 2h`: 3,600 segments) a player reloading every target duration then fetches
/// a few hundred bytes instead of the whole list, and neither form re-renders the window: the full text
/// comes from lines rendered once per segment, the delta renders only the segments it lists.
public struct DeltaPlaylist: Sendable {
    /// CAN-SKIP-UNTIL in target durations: six, the least RFC 8216bis 4.4.3.8 allows.
    public static let skipTargetDurations = 6.0

    public private(set) var playlist: MediaPlaylist
    private var rendered = RenderedSegments()

    public init(_ playlist: MediaPlaylist) {
        self.playlist = playlist
        for segment in playlist.segments { rendered.append(segment) }
    }

    public var canSkipUntilSeconds: Double { Double(playlist.targetDurationSeconds) * Self.skipTargetDurations }

    /// Takes the writer's playlist after an update: segments that left are dropped and new ones rendered.
    /// A playlist that does not continue this one (a restarted stream) is taken whole.
    public mutating func update(_ next: MediaPlaylist) {
        let left = next.mediaSequence - playlist.mediaSequence
        let kept = playlist.segments.count - left
        guard left >= 0, kept >= 0, kept <= next.segments.count,
              kept == 0 || next.segments[kept - 1].uri == playlist.segments[playlist.segments.count - 1].uri
        else { return self = DeltaPlaylist(next) }
        rendered.removeFirst(left)
        for segment in next.segments[kept...] { rendered.append(segment) }
        playlist = next
    }

    /// The playlist to serve: whole, or with `skip` the segments before the last CAN-SKIP-UNTIL seconds
    /// left out (none while the playlist is shorter than that, or once it has ended).
    public func render(skip: Bool) -> String {
        var header = playlist
        header.serverControl = MediaPlaylist.ServerControl(canBlockReload: false, partHoldBackSeconds: nil,
                                                           canSkipUntilSeconds: canSkipUntilSeconds)
        let skipped = skip && !playlist.endList ? skippedCount : 0
        guard skipped > 0 else {
            var state = MediaPlaylist.RenderState()
            return header.renderHeader() + rendered.text(segment: { playlist.segments[$0] }, state: &state)
                + header.renderTrailer()
        }
        header.segments = Array(playlist.segments[skipped...])
        header.skippedSegments = skipped
        return header.render()
    }

    /// Segments that start more than CAN-SKIP-UNTIL before the end, counted from the end.
    private var skippedCount: Int {
        var fromEnd = 0.0
        var listed = 0
        for segment in playlist.segments.reversed() {
            fromEnd += segment.durationSeconds
            if fromEnd > canSkipUntilSeconds { break }
            listed += 1
        }
        return playlist.segments.count - listed
    }
}
