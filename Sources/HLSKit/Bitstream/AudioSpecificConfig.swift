/// MPEG-4 AudioSpecificConfig (ISO/IEC 14496-3 1.6.2.1), the decoder config inside `esds`.
public struct AudioSpecificConfig: Sendable, Equatable {
    /// The serialized config, written into `esds` as is.
    public var bytes: [UInt8]
    /// Audio object type: 2 for AAC-LC.
    public var objectType: Int
    public var sampleRate: Int
    public var channelCount: Int

    public init(bytes: [UInt8], objectType: Int, sampleRate: Int, channelCount: Int) {
        self.bytes = bytes
        self.objectType = objectType
        self.sampleRate = sampleRate
        self.channelCount = channelCount
    }
}
