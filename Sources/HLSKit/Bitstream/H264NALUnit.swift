/// The H.264 NAL unit types this package reads or drops (H.264 Table 7-1).
public enum H264NALUnitType: UInt8, Sendable, CustomStringConvertible {
    case nonIDRSlice = 1
    case idrSlice = 5
    case supplementalEnhancementInformation = 6
    case sequenceParameterSet = 7
    case pictureParameterSet = 8
    case accessUnitDelimiter = 9
    case endOfSequence = 10
    case endOfStream = 11
    case fillerData = 12

    /// The type field is the low 5 bits of the NAL unit's first byte.
    static let headerMask: UInt8 = 0x1F

    /// The type of a NAL unit from its header byte; nil for types not listed here.
    public init?(headerByte: UInt8) {
        self.init(rawValue: headerByte & Self.headerMask)
    }

    public var description: String {
        switch self {
        case .nonIDRSlice: "non-IDR slice"
        case .idrSlice: "IDR slice"
        case .supplementalEnhancementInformation: "SEI"
        case .sequenceParameterSet: "SPS"
        case .pictureParameterSet: "PPS"
        case .accessUnitDelimiter: "access unit delimiter"
        case .endOfSequence: "end of sequence"
        case .endOfStream: "end of stream"
        case .fillerData: "filler data"
        }
    }
}

public enum H264NALUnit {
    /// The raw type field (0…31) of a NAL unit; nil for an empty one.
    public static func typeField(of nalUnit: some Collection<UInt8>) -> UInt8? {
        nalUnit.first.map { $0 & H264NALUnitType.headerMask }
    }

    /// The RBSP of a NAL unit payload: every emulation prevention byte (the 0x03 in 00 00 03)
    /// removed, so that header fields can be read bit by bit (H.264 7.4.1).
    public static func removingEmulationPrevention(_ payload: some Collection<UInt8>) -> [UInt8] {
        var rbsp: [UInt8] = []
        rbsp.reserveCapacity(payload.count)
        var zeroRun = 0
        for byte in payload {
            if zeroRun >= 2 && byte == 0x03 {
                zeroRun = 0
                continue
            }
            zeroRun = byte == 0 ? zeroRun + 1 : 0
            rbsp.append(byte)
        }
        return rbsp
    }
}
