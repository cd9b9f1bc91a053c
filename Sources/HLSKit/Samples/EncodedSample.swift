/// One compressed sample crossing from the FFmpeg side into the pure-Swift side.
///
/// Times are integers in the track's timescale (90000 for video, the sample rate for audio).
public struct EncodedSample: Sendable, Equatable {
    /// Index of the track in the stream's track list (0-based).
    public var track: Int
    public var decodeTime: Int64
    /// Presentation time minus decode time; negative values are allowed (B-frames).
    public var compositionOffset: Int32
    /// Duration when the source knows it; the segmenter prefers the next sample's decode time.
    public var durationHint: Int64?
    public var isSync: Bool
    /// Length-prefixed (4-byte) NAL units for H.264, raw access units for AAC.
    public var data: [UInt8]

    public init(track: Int, decodeTime: Int64, compositionOffset: Int32 = 0,
                durationHint: Int64? = nil, isSync: Bool, data: [UInt8]) {
        self.track = track
        self.decodeTime = decodeTime
        self.compositionOffset = compositionOffset
        self.durationHint = durationHint
        self.isSync = isSync
        self.data = data
    }

    public var presentationTime: Int64 { decodeTime + Int64(compositionOffset) }
}

/// A sample with its final duration, as placed in a media fragment.
public struct TimedSample: Sendable, Equatable {
    public var decodeTime: Int64
    public var durationTicks: UInt32
    public var compositionOffset: Int32
    public var isSync: Bool
    public var data: [UInt8]

    public init(decodeTime: Int64, durationTicks: UInt32, compositionOffset: Int32,
                isSync: Bool, data: [UInt8]) {
        self.decodeTime = decodeTime
        self.durationTicks = durationTicks
        self.compositionOffset = compositionOffset
        self.isSync = isSync
        self.data = data
    }
}
