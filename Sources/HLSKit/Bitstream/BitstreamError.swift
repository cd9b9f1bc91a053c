/// Why a codec bitstream structure (NAL unit, SPS, avcC, hvcC, AudioSpecificConfig, ADTS) could not be read.
public enum BitstreamError: Error, Equatable, CustomStringConvertible {
    /// The data ended before the structure was complete.
    case truncated(structure: String)
    /// A field holds a value the specification does not allow, or that this code does not support.
    case invalidField(structure: String, field: String, value: Int)
    /// A NAL unit of another type was given where `expected` was required.
    case unexpectedNALUnitType(expected: H264NALUnitType, found: UInt8)
    /// Annex-B or length-prefixed data held no SPS or no PPS.
    case missingParameterSets
    /// HEVC data or an `hvcC` held no VPS, no SPS or no PPS.
    case missingHEVCParameterSets
    /// A frame did not start with the ADTS sync word.
    case missingADTSSyncWord

    public var description: String {
        switch self {
        case .truncated(let structure):
            "\(structure) ends before all its fields were read"
        case .invalidField(let structure, let field, let value):
            "\(structure): unsupported value \(value) for \(field)"
        case .unexpectedNALUnitType(let expected, let found):
            "expected an H.264 \(expected) NAL unit (type \(expected.rawValue)), found type \(found)"
        case .missingParameterSets:
            "no H.264 sequence and picture parameter sets (SPS and PPS) found"
        case .missingHEVCParameterSets:
            "no HEVC video, sequence and picture parameter sets (VPS, SPS and PPS) found"
        case .missingADTSSyncWord:
            "AAC frame does not start with the ADTS sync word 0xFFF"
        }
    }
}
