extension AVCDecoderConfiguration {
    /// A configuration from the SPS and PPS NAL units in Annex-B data: libx264's extradata,
    /// or a keyframe that repeats its parameter sets in-band.
    public init(annexB bytes: [UInt8]) throws {
        var sequenceParameterSets: [[UInt8]] = []
        var pictureParameterSets: [[UInt8]] = []
        for unit in AnnexB.nalUnits(in: bytes) {
            switch unit.first.flatMap(H264NALUnitType.init(headerByte:)) {
            case .sequenceParameterSet: sequenceParameterSets.append(Array(unit))
            case .pictureParameterSet: pictureParameterSets.append(Array(unit))
            default: continue
            }
        }
        try self.init(sequenceParameterSets: sequenceParameterSets, pictureParameterSets: pictureParameterSets)
    }
}
