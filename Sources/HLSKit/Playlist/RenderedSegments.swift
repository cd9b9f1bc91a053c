/// The lines of a live playlist's segments, each rendered once, when it is listed.
///
/// A live playlist is written out again after every segment. With a DVR window of thousands of
/// segments, rendering every line each time would cost in proportion to the window; with this, an
/// update costs the new segment's lines, the first segment's (whose EXT-X-MAP and EXT-X-KEY depend on
/// the segments that left), and the copying of the text. Segments leave from the front without moving
/// the rest: a start index advances, and the storage is compacted once it is half unused.
public struct RenderedSegments: Sendable {
    private var texts: [String] = []
    /// What was in force after each segment, as its successor was rendered.
    private var statesAfter: [MediaPlaylist.RenderState] = []
    private var start = 0

    public init() {}

    public var count: Int { texts.count - start }

    /// Renders `segment` after the ones already here.
    public mutating func append(_ segment: MediaPlaylist.Segment) {
        var state = statesAfter.count > start ? statesAfter[statesAfter.count - 1] : MediaPlaylist.RenderState()
        texts.append(MediaPlaylist.render(segment, state: &state))
        statesAfter.append(state)
    }

    public mutating func removeFirst(_ removed: Int = 1) {
        precondition(removed <= count, "removes no more segments than are rendered")
        start += removed
        if start > texts.count / 2 {
            texts.removeFirst(start)
            statesAfter.removeFirst(start)
            start = 0
        }
    }

    public mutating func removeLast() {
        precondition(count > 0, "removes a rendered segment")
        texts.removeLast()
        statesAfter.removeLast()
    }

    /// The lines of the segments rendered here, `segment(i)` giving the i-th of them again: the first ones
    /// are rendered again until what is in force after one agrees with what its successor was rendered
    /// after (usually after the first), the rest are taken as they were. `state` becomes what is in force
    /// after the last, for lines that follow.
    public func text(segment: (Int) -> MediaPlaylist.Segment, state: inout MediaPlaylist.RenderState) -> String {
        var text = ""
        state = MediaPlaylist.RenderState()
        var index = 0
        while index < count {
            text += MediaPlaylist.render(segment(index), state: &state)
            index += 1
            if state == statesAfter[start + index - 1] { break }
        }
        guard index < count else { return text }
        for cached in texts[(start + index)...] { text += cached }
        state = statesAfter[statesAfter.count - 1]
        return text
    }
}
