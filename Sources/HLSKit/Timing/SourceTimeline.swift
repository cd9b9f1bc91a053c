/// Where each frame of a source falls on one timeline in microseconds that starts at 0, runs on
/// across the repetitions of a looped file, and never jumps: a stream whose timestamps leap forward
/// or back (an RTP wrap, a recorder's bad clock) is re-based so that it goes on from its last frame.
public struct SourceTimeline: Sendable {
    public let jumpForwardMicroseconds: Int64
    public let jumpBackMicroseconds: Int64
    /// Added to an input time to place it; nil until the first frame (of each repetition).
    private var shift: Int64?
    /// Where the current repetition starts.
    private var base: Int64 = 0
    /// Where each stream's last frame ended.
    private var ends: [Int: Int64] = [:]
    /// The end of the latest frame of any stream.
    public private(set) var end: Int64 = 0
    /// How often a jump was re-based.
    public private(set) var rebaseCount = 0

    public init(jumpForwardMicroseconds: Int64, jumpBackMicroseconds: Int64) {
        self.jumpForwardMicroseconds = jumpForwardMicroseconds
        self.jumpBackMicroseconds = jumpBackMicroseconds
    }

    /// The timeline time of a frame at `input` lasting `duration` in stream `stream`.
    public mutating func place(inputMicroseconds input: Int64, durationMicroseconds duration: Int64, stream: Int) -> Int64 {
        let shift = self.shift ?? (base - input)
        var placed = input + shift
        if let last = ends[stream], placed > last + jumpForwardMicroseconds || placed < last - jumpBackMicroseconds {
            self.shift = shift + (last - placed)
            placed = last
            rebaseCount += 1
        } else {
            self.shift = shift
        }
        ends[stream] = placed + max(0, duration)
        end = max(end, placed + max(0, duration))
        return placed
    }

    /// The input starts again (a looped file): its first frame goes where the latest frame of any stream
    /// ended, so that no stream overlaps itself. The sound's last block usually runs a few milliseconds
    /// past the last picture: the picture has that gap, which nobody sees, while the sound, whose every
    /// overlap or gap would be heard or resampled, goes on seamlessly.
    public mutating func startAgain() {
        base = end
        shift = nil
        ends = [:]
    }
}
