/// The HEVC NAL unit types this package reads or drops (H.265 Table 7-1).
public enum HEVCNALUnitType: UInt8, Sendable, CustomStringConvertible {
    case brokenLinkAccessWithLeadingPictures = 16
    case brokenLinkAccessWithDecodableLeadingPictures = 17
    case brokenLinkAccess = 18
    case instantaneousDecodingRefreshWithLeadingPictures = 19
    case instantaneousDecodingRefresh = 20
    case cleanRandomAccess = 21
    case videoParameterSet = 32
    case sequenceParameterSet = 33
    case pictureParameterSet = 34
    case accessUnitDelimiter = 35
    case endOfSequence = 36
    case endOfBitstream = 37
    case fillerData = 38
    case prefixSEI = 39
    case suffixSEI = 40

    /// The type of a NAL unit from the first byte of its two-byte header; nil for types not listed here.
    public init?(headerByte: UInt8) {
        self.init(rawValue: HEVCNALUnit.typeField(ofHeaderByte: headerByte))
    }

    public var description: String {
        switch self {
        case .brokenLinkAccessWithLeadingPictures, .brokenLinkAccessWithDecodableLeadingPictures,
             .brokenLinkAccess: "BLA slice"
        case .instantaneousDecodingRefreshWithLeadingPictures, .instantaneousDecodingRefresh: "IDR slice"
        case .cleanRandomAccess: "CRA slice"
        case .videoParameterSet: "VPS"
        case .sequenceParameterSet: "SPS"
        case .pictureParameterSet: "PPS"
        case .accessUnitDelimiter: "access unit delimiter"
        case .endOfSequence: "end of sequence"
        case .endOfBitstream: "end of bitstream"
        case .fillerData: "filler data"
        case .prefixSEI: "prefix SEI"
        case .suffixSEI: "suffix SEI"
        }
    }
}

public enum HEVCNALUnit {
    /// Bytes in the NAL unit header: forbidden_zero_bit, nal_unit_type (6 bits), nuh_layer_id (6),
    /// nuh_temporal_id_plus1 (3).
    public static let headerSize = 2
    /// nal_unit_type sits in bits 1…6 of the first header byte.
    private static let typeShift: UInt8 = 1
    private static let typeMask: UInt8 = 0x3F
    /// Intra random access point pictures (BLA, IDR, CRA, and the reserved IRAP types 22 and 23):
    /// decoding can start at them, so they are sync samples and segments may start there.
    public static let intraRandomAccessPointTypes: ClosedRange<UInt8> = 16...23

    static func typeField(ofHeaderByte byte: UInt8) -> UInt8 {
        (byte >> typeShift) & typeMask
    }

    /// The raw type field (0…63) of a NAL unit; nil for an empty one.
    public static func typeField(of nalUnit: some Collection<UInt8>) -> UInt8? {
        nalUnit.first.map(typeField(ofHeaderByte:))
    }

    /// Whether the NAL unit is a slice of an IRAP picture.
    public static func isIntraRandomAccessPoint(_ nalUnit: some Collection<UInt8>) -> Bool {
        typeField(of: nalUnit).map(intraRandomAccessPointTypes.contains) ?? false
    }
}
