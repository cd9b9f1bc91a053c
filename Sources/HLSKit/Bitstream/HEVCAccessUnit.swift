/// An HEVC access unit made ready for an `mdat`: 4-byte lengths, no delimiters or filler, and no
/// parameter sets that the `hvcC` already carries.
public struct HEVCAccessUnit: Sendable, Equatable {
    public var bytes: [UInt8]
    /// Whether the access unit is an IRAP picture (IDR, CRA or BLA): decoding, and a segment, may start here.
    public var isIntraRandomAccessPoint: Bool

    /// Rewrites `sample` only when something must change; a 4-byte length-prefixed sample with nothing
    /// to drop, the common case for MP4 input, is passed through without a copy.
    public init(_ sample: [UInt8], framing: NALUnitFraming, configuration: HEVCDecoderConfiguration) throws {
        let units = try framing.nalUnits(in: sample)
        let kept = units.filter { !Self.isRedundant($0, configuration: configuration) }
        isIntraRandomAccessPoint = kept.contains(where: HEVCNALUnit.isIntraRandomAccessPoint)
        if framing.hasFourByteLengths && kept.count == units.count {
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

    /// Parameter sets that differ from the record's stay in the sample, where a decoder finds them in time.
    private static func isRedundant(_ unit: ArraySlice<UInt8>, configuration: HEVCDecoderConfiguration) -> Bool {
        guard let type = HEVCNALUnit.typeField(of: unit) else { return true }
        switch HEVCNALUnitType(rawValue: type) {
        case .accessUnitDelimiter, .fillerData:
            return true
        case .videoParameterSet, .sequenceParameterSet, .pictureParameterSet:
            return configuration.arrays.contains { array in
                array.type == type && array.nalUnits.contains { $0.elementsEqual(unit) }
            }
        default:
            return false
        }
    }
}
