/// What the init segment says about one track.
public struct TrackDescription: Sendable, Equatable {
    public enum Format: Sendable, Equatable {
        case h264(H264Format)
        case aac(AACFormat)
    }

    /// 1-based track ID written into `tkhd`, `tfhd` and `trex`.
    public var trackID: UInt32
    public var timescale: UInt32
    public var format: Format
    /// ISO-639-2/T code for `mdhd`; "und" when unknown.
    public var language: String

    public init(trackID: UInt32, timescale: UInt32, format: Format, language: String = "und") {
        self.trackID = trackID
        self.timescale = timescale
        self.format = format
        self.language = language
    }

    public var isVideo: Bool {
        if case .h264 = format { return true }
        return false
    }
}

public struct H264Format: Sendable, Equatable {
    /// The `avcC` payload (AVCDecoderConfigurationRecord).
    public var decoderConfiguration: AVCDecoderConfiguration
    /// Display size written into `tkhd` (after pixel aspect ratio).
    public var displayWidth: Int
    public var displayHeight: Int
    /// Coded size written into the sample entry.
    public var width: Int
    public var height: Int
    /// `tkhd` transformation matrix (9 values, 16.16 / 2.30 fixed point); identity when nil.
    public var matrix: [Int32]?

    public init(decoderConfiguration: AVCDecoderConfiguration, width: Int, height: Int,
                displayWidth: Int? = nil, displayHeight: Int? = nil, matrix: [Int32]? = nil) {
        self.decoderConfiguration = decoderConfiguration
        self.width = width
        self.height = height
        self.displayWidth = displayWidth ?? width
        self.displayHeight = displayHeight ?? height
        self.matrix = matrix
    }
}

public struct AACFormat: Sendable, Equatable {
    public var audioSpecificConfig: AudioSpecificConfig
    /// Bit rates for `esds`' DecoderConfigDescriptor; 0 when unknown.
    public var averageBitrate: UInt32
    public var maxBitrate: UInt32

    public init(audioSpecificConfig: AudioSpecificConfig, averageBitrate: UInt32 = 0,
                maxBitrate: UInt32 = 0) {
        self.audioSpecificConfig = audioSpecificConfig
        self.averageBitrate = averageBitrate
        self.maxBitrate = maxBitrate
    }
}
