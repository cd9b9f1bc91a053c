/// HEVCDecoderConfigurationRecord (ISO/IEC 14496-15 8.3.3.1), the payload of `hvcC`.
public struct HEVCDecoderConfiguration: Sendable, Equatable {
    /// One array of NAL units of one type (VPS, SPS, PPS or SEI).
    public struct NALUnitArray: Sendable, Equatable {
        /// Whether every NAL unit of this type is in the array and none in the samples; an `hvc1`
        /// entry requires it for parameter sets.
        public var isComplete: Bool
        public var type: UInt8
        /// NAL units without start codes or length prefixes, two-byte header included.
        public var nalUnits: [[UInt8]]

        public init(isComplete: Bool, type: UInt8, nalUnits: [[UInt8]]) {
            self.isComplete = isComplete
            self.type = type
            self.nalUnits = nalUnits
        }
    }

    public var profileTierLevel: HEVCProfileTierLevel
    /// min_spatial_segmentation_idc from the VUI's bitstream restriction; 0, "unknown", when not read.
    public var minSpatialSegmentation: UInt16
    /// parallelismType: 0 unknown or mixed, 1 slices, 2 tiles, 3 wavefronts.
    public var parallelismType: UInt8
    /// chroma_format_idc of the SPS.
    public var chromaFormat: UInt8
    public var bitDepthLuma: Int
    public var bitDepthChroma: Int
    /// Frames per 256 seconds; 0 when unspecified.
    public var averageFrameRate: UInt16
    /// 0 unknown, 1 constant, 2 each temporal layer constant.
    public var constantFrameRate: UInt8
    /// sps_max_sub_layers_minus1 + 1.
    public var temporalLayerCount: UInt8
    public var temporalIDNested: Bool
    /// Bytes in each NAL unit length prefix (1, 2 or 4).
    public var nalUnitLengthSize: Int
    public var arrays: [NALUnitArray]

    public init(profileTierLevel: HEVCProfileTierLevel, minSpatialSegmentation: UInt16 = 0, parallelismType: UInt8 = 0,
                chromaFormat: UInt8, bitDepthLuma: Int, bitDepthChroma: Int, averageFrameRate: UInt16 = 0,
                constantFrameRate: UInt8 = 0, temporalLayerCount: UInt8, temporalIDNested: Bool,
                nalUnitLengthSize: Int = 4, arrays: [NALUnitArray]) {
        self.profileTierLevel = profileTierLevel
        self.minSpatialSegmentation = minSpatialSegmentation
        self.parallelismType = parallelismType
        self.chromaFormat = chromaFormat
        self.bitDepthLuma = bitDepthLuma
        self.bitDepthChroma = bitDepthChroma
        self.averageFrameRate = averageFrameRate
        self.constantFrameRate = constantFrameRate
        self.temporalLayerCount = temporalLayerCount
        self.temporalIDNested = temporalIDNested
        self.nalUnitLengthSize = nalUnitLengthSize
        self.arrays = arrays
    }

    public var videoParameterSets: [[UInt8]] { nalUnits(of: .videoParameterSet) }
    public var sequenceParameterSets: [[UInt8]] { nalUnits(of: .sequenceParameterSet) }
    public var pictureParameterSets: [[UInt8]] { nalUnits(of: .pictureParameterSet) }

    private func nalUnits(of type: HEVCNALUnitType) -> [[UInt8]] {
        arrays.filter { $0.type == type.rawValue }.flatMap(\.nalUnits)
    }

    /// This record as an `hvc1` entry declares it for samples rewritten to 4-byte lengths: every parameter set
    /// array complete (an `hev1` input's may not be), other arrays (SEI) as they were.
    public var forFourByteLengthSamples: HEVCDecoderConfiguration {
        var record = self
        record.nalUnitLengthSize = 4
        let parameterSetTypes: [HEVCNALUnitType] = [.videoParameterSet, .sequenceParameterSet, .pictureParameterSet]
        for index in record.arrays.indices
        where parameterSetTypes.contains(where: { $0.rawValue == record.arrays[index].type }) {
            record.arrays[index].isComplete = true
        }
        return record
    }

    /// Whether the record holds a VPS, an SPS and a PPS, enough to decode from.
    public var hasParameterSets: Bool {
        !videoParameterSets.isEmpty && !sequenceParameterSets.isEmpty && !pictureParameterSets.isEmpty
    }

    /// The CODECS value of an `hvc1` sample entry with this record.
    public var codecsString: String { profileTierLevel.codecsString() }

    /// The first SPS, parsed.
    public func parsedSequenceParameterSet() throws -> HEVCSequenceParameterSet {
        guard let sps = sequenceParameterSets.first else { throw BitstreamError.missingHEVCParameterSets }
        return try HEVCSequenceParameterSet(parsing: sps)
    }
}

extension HEVCDecoderConfiguration {
    private static let maximumRecordBitDepth = 15

    /// A configuration for 4-byte length prefixes with complete parameter set arrays, as an `hvc1`
    /// entry needs; profile, level, chroma format, bit depths and temporal layers come from the first SPS.
    public init(videoParameterSets: [[UInt8]], sequenceParameterSets: [[UInt8]],
                pictureParameterSets: [[UInt8]]) throws {
        guard let sps = sequenceParameterSets.first, !videoParameterSets.isEmpty, !pictureParameterSets.isEmpty else {
            throw BitstreamError.missingHEVCParameterSets
        }
        let parsed = try HEVCSequenceParameterSet(parsing: sps)
        // hvcC has three bits for each bit depth minus 8: 16-bit video, which an SPS may declare, does not fit.
        let depths = [("bitDepthLumaMinus8", parsed.bitDepthLuma), ("bitDepthChromaMinus8", parsed.bitDepthChroma)]
        for (field, depth) in depths where depth > Self.maximumRecordBitDepth {
            throw BitstreamError.invalidField(structure: "hvcC", field: field, value: depth - 8)
        }
        for units in [videoParameterSets, sequenceParameterSets, pictureParameterSets] {
            if units.count > UInt16.max {
                throw BitstreamError.invalidField(structure: "hvcC", field: "numNalus", value: units.count)
            }
            if let long = units.first(where: { $0.count > UInt16.max }) {
                throw BitstreamError.invalidField(structure: "hvcC", field: "nalUnitLength", value: long.count)
            }
        }
        let arrays: [NALUnitArray] = [
            (HEVCNALUnitType.videoParameterSet, videoParameterSets),
            (.sequenceParameterSet, sequenceParameterSets),
            (.pictureParameterSet, pictureParameterSets),
        ].map { NALUnitArray(isComplete: true, type: $0.0.rawValue, nalUnits: $0.1) }
        self.init(profileTierLevel: parsed.profileTierLevel, chromaFormat: UInt8(parsed.chromaFormat),
                  bitDepthLuma: parsed.bitDepthLuma, bitDepthChroma: parsed.bitDepthChroma,
                  temporalLayerCount: UInt8(parsed.subLayerCount), temporalIDNested: parsed.temporalIDNesting,
                  arrays: arrays)
    }

    /// A configuration from the VPS, SPS and PPS NAL units in Annex-B data: libx265's extradata, or a
    /// keyframe that carries its parameter sets in-band.
    public init(annexB bytes: [UInt8]) throws {
        try self.init(parameterSetsIn: AnnexB.nalUnits(in: bytes))
    }

    /// A configuration from the VPS, SPS and PPS among `units`, in their order; other NAL units are ignored.
    public init(parameterSetsIn units: [ArraySlice<UInt8>]) throws {
        var sets: [HEVCNALUnitType: [[UInt8]]] = [:]
        for unit in units {
            guard let type = unit.first.flatMap(HEVCNALUnitType.init(headerByte:)),
                  [.videoParameterSet, .sequenceParameterSet, .pictureParameterSet].contains(type) else { continue }
            sets[type, default: []].append(Array(unit))
        }
        try self.init(videoParameterSets: sets[.videoParameterSet] ?? [],
                      sequenceParameterSets: sets[.sequenceParameterSet] ?? [],
                      pictureParameterSets: sets[.pictureParameterSet] ?? [])
    }
}
