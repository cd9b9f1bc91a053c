/// Reading and writing the start of an AudioSpecificConfig (ISO/IEC 14496-3 1.6.2.1):
///
///     audioObjectType            5 bits; 31 = escape, then 6 bits + 32
///     samplingFrequencyIndex     4 bits; 15 = escape, then samplingFrequency 24 bits
///     channelConfiguration       4 bits
///     for SBR/PS (types 5, 29):  extensionSamplingFrequencyIndex (+ escape), audioObjectType
///     GASpecificConfig …         (not read; the bytes are kept as they are)
extension AudioSpecificConfig {
    /// Sampling frequencies by samplingFrequencyIndex (Table 1.18); index 15 means explicit.
    public static let samplingFrequencies = [
        96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350,
    ]
    public static let aacLowComplexity = 2

    private static let structure = "AudioSpecificConfig"
    private static let objectTypeEscape: UInt32 = 31
    private static let escapedObjectTypeBase = 32
    private static let explicitFrequencyIndex: UInt32 = 15
    private static let spectralBandReplication: Int = 5
    private static let parametricStereo: Int = 29
    /// channelConfiguration 7 is 7.1, eight channels; 1 to 6 count the channels directly.
    static let channelCountsByConfiguration = [1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 8]

    public init(parsing bytes: [UInt8]) throws {
        var reader = BitReader(bytes, structure: Self.structure)
        let objectType = try Self.readObjectType(&reader)
        var sampleRate = try Self.readSamplingFrequency(&reader)
        let configuration = Int(try reader.readBits(4))
        guard let channelCount = Self.channelCountsByConfiguration[configuration] else {
            throw BitstreamError.invalidField(structure: Self.structure, field: "channelConfiguration",
                                              value: configuration)
        }
        // Explicit HE-AAC signalling: the output rate follows, then the core object type.
        // CODECS names the signalled type (mp4a.40.5), so only the rate is taken from here.
        if objectType == Self.spectralBandReplication || objectType == Self.parametricStereo {
            sampleRate = try Self.readSamplingFrequency(&reader)
            _ = try Self.readObjectType(&reader)
        }
        self.init(bytes: bytes, objectType: objectType, sampleRate: sampleRate, channelCount: channelCount)
    }

    /// Builds the config of a plain AAC stream: two bytes, five with an explicit sample rate.
    /// `objectType` must be one of the AAC types below 31 (GASpecificConfig follows), and
    /// `channelCount` 1 to 6 or 8, the counts a channelConfiguration can express.
    public init(objectType: Int = aacLowComplexity, sampleRate: Int, channelCount: Int) {
        guard let configuration = Self.channelCountsByConfiguration.first(where: { $0.value == channelCount })?.key
        else { preconditionFailure("AudioSpecificConfig cannot express \(channelCount) channels") }
        precondition((1..<Int(Self.objectTypeEscape)).contains(objectType),
                     "object type \(objectType) does not use the GASpecificConfig written here")
        var bits = BitWriter()
        bits.write(UInt32(objectType), count: 5)
        if let index = Self.samplingFrequencies.firstIndex(of: sampleRate) {
            bits.write(UInt32(index), count: 4)
        } else {
            bits.write(Self.explicitFrequencyIndex, count: 4)
            bits.write(UInt32(sampleRate), count: 24)
        }
        bits.write(UInt32(configuration), count: 4)
        // GASpecificConfig: frameLengthFlag 0 (1024 samples), dependsOnCoreCoder 0, extensionFlag 0.
        bits.write(0, count: 3)
        self.init(bytes: bits.bytes, objectType: objectType, sampleRate: sampleRate, channelCount: channelCount)
    }

    /// The RFC 6381 CODECS value: `mp4a.40.` and the object type (`mp4a.40.2` for AAC-LC).
    public var codecsString: String {
        "mp4a.40.\(objectType)"
    }

    private static func readObjectType(_ reader: inout BitReader) throws -> Int {
        let objectType = try reader.readBits(5)
        guard objectType == objectTypeEscape else { return Int(objectType) }
        return escapedObjectTypeBase + Int(try reader.readBits(6))
    }

    private static func readSamplingFrequency(_ reader: inout BitReader) throws -> Int {
        let index = try reader.readBits(4)
        if index == explicitFrequencyIndex {
            return Int(try reader.readBits(24))
        }
        guard Int(index) < samplingFrequencies.count else {
            throw BitstreamError.invalidField(structure: structure, field: "samplingFrequencyIndex",
                                              value: Int(index))
        }
        return samplingFrequencies[Int(index)]
    }
}

/// Packs bit fields MSB-first, zero-padding the last byte.
struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private var bitCount = 0

    mutating func write(_ value: UInt32, count: Int) {
        for shift in stride(from: count - 1, through: 0, by: -1) {
            if bitCount % 8 == 0 {
                bytes.append(0)
            }
            let bit = UInt8((value >> UInt32(shift)) & 1)
            bytes[bytes.count - 1] |= bit << (7 - UInt8(bitCount % 8))
            bitCount += 1
        }
    }
}
