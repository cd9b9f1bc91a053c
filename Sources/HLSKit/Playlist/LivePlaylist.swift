/// The playlist of a stream that grows while it is served (RFC 8216bis 6.2.1–6.2.2).
///
/// A sliding window of `windowSize` segments, or with a window of 0 an EVENT playlist that keeps
/// everything. The target duration is fixed before the first segment and never changes. Segments
/// that leave the window are handed back with the time they must stay downloadable.
///
/// Each segment's lines are rendered once, as it is listed (`RenderedSegments`): rendering an update
/// costs what changed, not the window.
public struct LivePlaylist: Sendable, Equatable {
    /// A segment that left the window: delete its file only after `retentionSeconds`.
    public struct Removal: Sendable, Equatable {
        public var uri: String
        /// The init section the segment named.
        public var mapURI: String?
        public var retentionSeconds: Double

        public init(uri: String, mapURI: String? = nil, retentionSeconds: Double) {
            self.uri = uri
            self.mapURI = mapURI
            self.retentionSeconds = retentionSeconds
        }
    }

    public let windowSize: Int
    public private(set) var playlist: MediaPlaylist
    /// Whether the next appended segment follows EXT-X-DISCONTINUITY.
    public private(set) var nextIsDiscontinuity = false
    private var rendered = RenderedSegments()

    /// Equal when they list the same: the rendered text is what the playlist makes.
    public static func == (lhs: LivePlaylist, rhs: LivePlaylist) -> Bool {
        lhs.windowSize == rhs.windowSize && lhs.playlist == rhs.playlist && lhs.nextIsDiscontinuity == rhs.nextIsDiscontinuity
    }

    public init(targetDurationSeconds: Int, windowSize: Int, firstSequenceNumber: Int = 1) {
        precondition(windowSize >= 0, "a window holds zero (everything) or more segments")
        self.windowSize = windowSize
        playlist = MediaPlaylist(targetDurationSeconds: targetDurationSeconds, mediaSequence: firstSequenceNumber,
                                 playlistType: windowSize == 0 ? .event : nil, independentSegments: true)
    }

    /// Continues a stream from its playlist: the next segment follows a discontinuity.
    public init(resuming previous: MediaPlaylist, windowSize: Int) {
        self.windowSize = windowSize
        playlist = previous
        playlist.endList = false
        playlist.playlistType = windowSize == 0 ? .event : nil
        nextIsDiscontinuity = !previous.segments.isEmpty
        for segment in previous.segments { rendered.append(segment) }
        listedSeconds = previous.segments.reduce(0) { $0 + $1.durationSeconds }
    }

    /// The sequence number the next appended segment gets.
    public var nextSequenceNumber: Int { playlist.mediaSequence + playlist.segments.count }

    /// Total duration of the listed segments.
    public var durationSeconds: Double { listedSeconds }
    private var listedSeconds = 0.0

    /// The next segment starts a new timeline or a new init section (EXT-X-DISCONTINUITY).
    public mutating func markDiscontinuity() {
        nextIsDiscontinuity = true
    }

    /// Lists a stored segment and slides the window; returns the segments that left it.
    public mutating func append(_ segment: MediaPlaylist.Segment) -> [Removal] {
        var segment = segment
        if nextIsDiscontinuity {
            segment.discontinuity = true
            nextIsDiscontinuity = false
        }
        playlist.segments.append(segment)
        rendered.append(segment)
        listedSeconds += segment.durationSeconds
        guard windowSize > 0 else { return [] }
        let leaving = playlist.segments.count - windowSize
        guard leaving > 0 else { return [] }
        var removals: [Removal] = []
        for removed in playlist.segments.prefix(leaving) {
            // 6.2.2: available for its own duration plus that of the longest playlist that held it.
            let holdingDuration = listedSeconds
            listedSeconds -= removed.durationSeconds
            playlist.mediaSequence += 1
            // The discontinuity sequence counts the discontinuity tags that left the playlist.
            if removed.discontinuity { playlist.discontinuitySequence += 1 }
            removals.append(Removal(uri: removed.uri, mapURI: removed.mapURI,
                                    retentionSeconds: removed.durationSeconds + holdingDuration))
        }
        playlist.segments.removeFirst(leaving)
        rendered.removeFirst(leaving)
        return removals
    }

    /// The stream is over: EXT-X-ENDLIST.
    public mutating func end() {
        playlist.endList = true
    }

    /// The playlist's text, from the lines rendered as segments were listed.
    public func render() -> String {
        var state = MediaPlaylist.RenderState()
        return playlist.renderHeader() + rendered.text(segment: { playlist.segments[$0] }, state: &state)
            + playlist.renderTrailer()
    }
}
