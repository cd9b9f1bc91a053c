/// Reading and writing the HEVCDecoderConfigurationRecord (ISO/IEC 14496-15 8.3.3.1.2):
///
///     configurationVersion = 1                                   8 bits
///     general_profile_space, general_tier_flag, general_profile_idc  2 + 1 + 5
///     general_profile_compatibility_flags                        32
///     general_constraint_indicator_flags                         48
///     general_level_idc                                          8
///     reserved '1111'b, min_spatial_segmentation_idc             4 + 12
///     reserved '111111'b, parallelismType                        6 + 2
///     reserved '111111'b, chromaFormat                           6 + 2
///     reserved '11111'b, bitDepthLumaMinus8                      5 + 3
///     reserved '11111'b, bitDepthChromaMinus8                    5 + 3
///     avgFrameRate                                               16
///     constantFrameRate, numTemporalLayers, temporalIdNested, lengthSizeMinusOne  2 + 3 + 1 + 2
///     numOfArrays                                                8
///     { array_completeness, reserved 0, NAL_unit_type            1 + 1 + 6
///       numNalus                                                 16
///       { nalUnitLength 16, nalUnit } }
extension HEVCDecoderConfiguration {
    private static let structure = "hvcC"
    private static let configurationVersion: UInt8 = 1
    private static let minSpatialSegmentationReservedBits: UInt16 = 0xF000
    private static let minSpatialSegmentationMask: UInt16 = 0x0FFF
    private static let twoBitFieldReservedBits: UInt8 = 0b1111_1100
    private static let bitDepthReservedBits: UInt8 = 0b1111_1000
    private static let baseBitDepth = 8
    private static let arrayCompletenessBit: UInt8 = 0x80
    private static let nalUnitTypeMask: UInt8 = 0x3F
    private static let constantFrameRateShift: UInt8 = 6
    private static let temporalLayersShift: UInt8 = 3
    private static let temporalLayersMask: UInt8 = 0b111
    private static let temporalIDNestedBit: UInt8 = 0b100
    private static let lengthSizeMask: UInt8 = 0b11
    private static let profileSpaceShift: UInt8 = 6
    private static let profileSpaceMask: UInt8 = 0b11
    private static let highTierBit: UInt8 = 1 << 5
    private static let profileIDCMask: UInt8 = 0x1F

    /// Parses an `hvcC` payload.
    public init(parsing record: [UInt8]) throws {
        var reader = BitReader(record, structure: Self.structure)
        let version = try reader.readBits(8)
        guard version == Self.configurationVersion else {
            throw BitstreamError.invalidField(structure: Self.structure, field: "configurationVersion",
                                              value: Int(version))
        }
        let profileTierLevel = try HEVCProfileTierLevel(reading: &reader, maxSubLayersMinus1: 0)
        let minSpatialSegmentation = UInt16(try reader.readBits(16)) & Self.minSpatialSegmentationMask
        let parallelismType = UInt8(try reader.readBits(8)) & ~Self.twoBitFieldReservedBits
        let chromaFormat = UInt8(try reader.readBits(8)) & ~Self.twoBitFieldReservedBits
        let bitDepthLuma = Int(UInt8(try reader.readBits(8)) & ~Self.bitDepthReservedBits) + Self.baseBitDepth
        let bitDepthChroma = Int(UInt8(try reader.readBits(8)) & ~Self.bitDepthReservedBits) + Self.baseBitDepth
        let averageFrameRate = UInt16(try reader.readBits(16))
        let layering = UInt8(try reader.readBits(8))
        let lengthSize = Int(layering & Self.lengthSizeMask) + 1
        guard LengthPrefixed.allowedLengthSizes.contains(lengthSize) else {
            throw BitstreamError.invalidField(structure: Self.structure, field: "lengthSizeMinusOne",
                                              value: lengthSize - 1)
        }
        var arrays: [NALUnitArray] = []
        for _ in 0..<(try reader.readBits(8)) {
            let arrayHeader = UInt8(try reader.readBits(8))
            var units: [[UInt8]] = []
            for _ in 0..<(try reader.readBits(16)) {
                let length = Int(try reader.readBits(16))
                units.append(try (0..<length).map { _ in UInt8(try reader.readBits(8)) })
            }
            arrays.append(NALUnitArray(isComplete: arrayHeader & Self.arrayCompletenessBit != 0,
                                       type: arrayHeader & Self.nalUnitTypeMask, nalUnits: units))
        }
        self.init(profileTierLevel: profileTierLevel, minSpatialSegmentation: minSpatialSegmentation,
                  parallelismType: parallelismType, chromaFormat: chromaFormat, bitDepthLuma: bitDepthLuma,
                  bitDepthChroma: bitDepthChroma, averageFrameRate: averageFrameRate,
                  constantFrameRate: layering >> Self.constantFrameRateShift,
                  temporalLayerCount: (layering >> Self.temporalLayersShift) & Self.temporalLayersMask,
                  temporalIDNested: layering & Self.temporalIDNestedBit != 0, nalUnitLengthSize: lengthSize,
                  arrays: arrays)
    }

    /// The `hvcC` payload.
    public var serialized: [UInt8] {
        var writer = ByteWriter()
        let level = profileTierLevel
        writer.write(Self.configurationVersion)
        writer.write((level.profileSpace & Self.profileSpaceMask) << Self.profileSpaceShift
                     | (level.isHighTier ? Self.highTierBit : 0) | level.profileIDC & Self.profileIDCMask)
        writer.write(level.compatibilityFlags)
        writer.write(bytes: level.constraintIndicatorBytes)
        writer.write(level.levelIDC)
        writer.write(Self.minSpatialSegmentationReservedBits | minSpatialSegmentation & Self.minSpatialSegmentationMask)
        writer.write(Self.twoBitFieldReservedBits | parallelismType)
        writer.write(Self.twoBitFieldReservedBits | chromaFormat)
        writer.write(Self.bitDepthReservedBits | UInt8(bitDepthLuma - Self.baseBitDepth))
        writer.write(Self.bitDepthReservedBits | UInt8(bitDepthChroma - Self.baseBitDepth))
        writer.write(averageFrameRate)
        writer.write(constantFrameRate << Self.constantFrameRateShift
                     | (temporalLayerCount & Self.temporalLayersMask) << Self.temporalLayersShift
                     | (temporalIDNested ? Self.temporalIDNestedBit : 0)
                     | UInt8(nalUnitLengthSize - 1))
        writer.write(UInt8(arrays.count))
        for array in arrays {
            writer.write((array.isComplete ? Self.arrayCompletenessBit : 0) | array.type & Self.nalUnitTypeMask)
            writer.write(UInt16(array.nalUnits.count))
            for unit in array.nalUnits {
                writer.write(UInt16(unit.count))
                writer.write(bytes: unit)
            }
        }
        return writer.bytes
    }
}
