/// How the NAL units of a source's H.264 or HEVC samples are framed.
public enum NALUnitFraming: Sendable, Equatable {
    /// Start codes, as in MPEG-TS and encoder output (H.264 and H.265 Annex B).
    case annexB
    /// Big-endian lengths of 1, 2 or 4 bytes, as the input's `avcC` or `hvcC` declares.
    case lengthPrefixed(lengthSize: Int)

    /// The NAL units of one sample, without start codes or lengths.
    public func nalUnits(in sample: [UInt8]) throws -> [ArraySlice<UInt8>] {
        switch self {
        case .annexB: AnnexB.nalUnits(in: sample)
        case .lengthPrefixed(let lengthSize): try LengthPrefixed.nalUnits(in: sample, lengthSize: lengthSize)
        }
    }

    /// Whether a sample in this framing already has the 4-byte lengths an `mdat` sample needs.
    public var hasFourByteLengths: Bool { self == .lengthPrefixed(lengthSize: 4) }
}
