/// An H.264 access unit made ready for an `mdat`: 4-byte lengths, no delimiters, no filler (unless a
/// constant bit rate must be kept), and no parameter sets that the `avcC` already carries.
public struct H264AccessUnit: Sendable, Equatable {
    public typealias Framing = NALUnitFraming

    public var bytes: [UInt8]
    /// Whether the access unit holds an IDR slice: a segment may start here.
    public var isIDR: Bool

    /// Rewrites `sample` only when something must change; a 4-byte length-prefixed sample with nothing
    /// to drop, the common case for MP4 input, is passed through without a copy.
    public init(_ sample: [UInt8], framing: Framing, configuration: AVCDecoderConfiguration,
                keepsFillerData: Bool = false) throws {
        let units: [ArraySlice<UInt8>]
        let alreadyFinal: Bool
        switch framing {
        case .annexB:
            units = AnnexB.nalUnits(in: sample)
            alreadyFinal = false
        case .lengthPrefixed(let lengthSize):
            units = try LengthPrefixed.nalUnits(in: sample, lengthSize: lengthSize)
            alreadyFinal = lengthSize == 4
        }
        let kept = units.filter { unit in
            if keepsFillerData && H264NALUnit.typeField(of: unit) == H264NALUnitType.fillerData.rawValue { return true }
            return !Self.isRedundant(unit, configuration: configuration)
        }
        isIDR = kept.contains { H264NALUnit.typeField(of: $0) == H264NALUnitType.idrSlice.rawValue }
        if alreadyFinal && kept.count == units.count {
            bytes = sample
            return
        }
        var writer = ByteWriter(capacity: sample.count + 4 * kept.count)
        for unit in kept {
            writer.write(UInt32(unit.count))
            writer.write(bytes: unit)
        }
        bytes = writer.bytes
    }

    private static func isRedundant(_ unit: ArraySlice<UInt8>, configuration: AVCDecoderConfiguration) -> Bool {
        switch H264NALUnit.typeField(of: unit) {
        case H264NALUnitType.accessUnitDelimiter.rawValue, H264NALUnitType.fillerData.rawValue, nil:
            return true
        case H264NALUnitType.sequenceParameterSet.rawValue:
            return configuration.sequenceParameterSets.contains { $0.elementsEqual(unit) }
        case H264NALUnitType.pictureParameterSet.rawValue:
            return configuration.pictureParameterSets.contains { $0.elementsEqual(unit) }
        default:
            return false
        }
    }
}
