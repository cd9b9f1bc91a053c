/// One compressed packet read from a file, with its bytes copied out of FFmpeg.
public struct DemuxedPacket: Sendable {
    /// The position of the packet's stream in `FileDemuxer.streams` (not FFmpeg's index).
    public var streamIndex: Int
    /// In the stream's `timeBase`; `nil` when the container gives none.
    public var pts: Int64?
    public var dts: Int64?
    public var duration: Int64
    public var isKeyframe: Bool
    /// The demuxer knows the content is damaged (`AV_PKT_FLAG_CORRUPT`).
    public var isCorrupt: Bool
    /// The packet is needed for decoding but must not be shown or played (`AV_PKT_FLAG_DISCARD`),
    /// such as audio before an edit list's start.
    public var isDiscard: Bool
    /// Audio samples to drop from the start of this packet (`AV_PKT_DATA_SKIP_SAMPLES`); 0 when absent.
    public var skipSamplesAtStart: Int
    public var data: [UInt8]
}

extension DemuxedPacket {
    init(_ packet: borrowing Packet, streamIndex: Int) {
        self.init(
            streamIndex: streamIndex,
            pts: packet.pts,
            dts: packet.dts,
            duration: packet.duration,
            isKeyframe: packet.isKeyframe,
            isCorrupt: packet.isCorrupt,
            isDiscard: packet.isDiscard,
            skipSamplesAtStart: packet.skipSamplesAtStart,
            data: packet.bytes
        )
    }
}
