/// What the init segment says about one track.
public struct TrackDescription: Sendable, Equatable {
    public enum Format: Sendable, Equatable {
        case h264(H264Format)
        case hevc(HEVCFormat)
        case aac(AACFormat)
    }

    /// 1-based track ID written into `tkhd`, `tfhd` and `trex`.
    public var trackID: UInt32
    public var timescale: Timescale
    public var format: Format
    /// ISO-639-2/T code for `mdhd`; "und" when unknown.
    public var language: String

    public init(trackID: UInt32, timescale: Timescale, format: Format, language: String = "und") {
        self.trackID = trackID
        self.timescale = timescale
        self.format = format
        self.language = language
    }

    public var isVideo: Bool {
        switch format {
        case .h264, .hevc: true
        case .aac: false
        }
    }

    /// What `tkhd` says of a video track: the display size and the transformation matrix (identity when nil).
    var videoPresentation: (displayWidth: Int, displayHeight: Int, matrix: [Int32]?)? {
        switch format {
        case .h264(let format): (format.displayWidth, format.displayHeight, format.matrix)
        case .hevc(let format): (format.displayWidth, format.displayHeight, format.matrix)
        case .aac: nil
        }
    }

    /// The colour description a video track declares in `colr`; nil when unknown or for audio.
    public var colourDescription: ColourDescription? {
        switch format {
        case .h264(let format): format.colourDescription
        case .hevc(let format): format.colourDescription
        case .aac: nil
        }
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
    /// Written as `colr` when known, usually from the SPS's VUI.
    public var colourDescription: ColourDescription?

    public init(decoderConfiguration: AVCDecoderConfiguration, width: Int, height: Int,
                displayWidth: Int? = nil, displayHeight: Int? = nil, matrix: [Int32]? = nil,
                colourDescription: ColourDescription? = nil) {
        self.decoderConfiguration = decoderConfiguration
        self.width = width
        self.height = height
        self.displayWidth = displayWidth ?? width
        self.displayHeight = displayHeight ?? height
        self.matrix = matrix
        self.colourDescription = colourDescription
    }
}

public struct HEVCFormat: Sendable, Equatable {
    /// The `hvcC` payload (HEVCDecoderConfigurationRecord).
    public var decoderConfiguration: HEVCDecoderConfiguration
    /// Display size written into `tkhd` (after pixel aspect ratio).
    public var displayWidth: Int
    public var displayHeight: Int
    /// Coded size written into the sample entry: the picture inside the conformance window.
    public var width: Int
    public var height: Int
    /// `tkhd` transformation matrix (9 values, 16.16 / 2.30 fixed point); identity when nil.
    public var matrix: [Int32]?
    /// Written as `colr`; HDR transfer functions (PQ, HLG) also set the master playlist's VIDEO-RANGE.
    public var colourDescription: ColourDescription?

    public init(decoderConfiguration: HEVCDecoderConfiguration, width: Int, height: Int,
                displayWidth: Int? = nil, displayHeight: Int? = nil, matrix: [Int32]? = nil,
                colourDescription: ColourDescription? = nil) {
        self.decoderConfiguration = decoderConfiguration
        self.width = width
        self.height = height
        self.displayWidth = displayWidth ?? width
        self.displayHeight = displayHeight ?? height
        self.matrix = matrix
        self.colourDescription = colourDescription
    }

    /// The format an SPS describes: its size inside the conformance window, its sample aspect ratio
    /// applied to the display width, and its colour description.
    public init(decoderConfiguration: HEVCDecoderConfiguration, matrix: [Int32]? = nil) throws {
        let sps = try decoderConfiguration.parsedSequenceParameterSet()
        self.init(decoderConfiguration: decoderConfiguration, width: sps.width, height: sps.height,
                  displayWidth: sps.displayWidth, displayHeight: sps.height, matrix: matrix,
                  colourDescription: sps.colourDescription)
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
