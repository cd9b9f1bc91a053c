/// AVCDecoderConfigurationRecord (ISO/IEC 14496-15 5.3.3.1), the payload of `avcC`.
public struct AVCDecoderConfiguration: Sendable, Equatable {
    public var profileIndication: UInt8
    public var profileCompatibility: UInt8
    public var levelIndication: UInt8
    /// Bytes in each NAL unit length prefix (1, 2 or 4).
    public var nalUnitLengthSize: Int
    /// SPS NAL units without start codes or length prefixes.
    public var sequenceParameterSets: [[UInt8]]
    public var pictureParameterSets: [[UInt8]]

    public init(profileIndication: UInt8, profileCompatibility: UInt8, levelIndication: UInt8,
                nalUnitLengthSize: Int = 4, sequenceParameterSets: [[UInt8]],
                pictureParameterSets: [[UInt8]]) {
        self.profileIndication = profileIndication
        self.profileCompatibility = profileCompatibility
        self.levelIndication = levelIndication
        self.nalUnitLengthSize = nalUnitLengthSize
        self.sequenceParameterSets = sequenceParameterSets
        self.pictureParameterSets = pictureParameterSets
    }
}
