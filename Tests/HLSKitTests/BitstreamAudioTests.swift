import HLSTestSupport
import Testing
@testable import HLSKit

@Suite struct BitstreamAudioTests {
    struct ConfigCase: Sendable, CustomTestStringConvertible {
        let bytes: [UInt8]
        let objectType: Int
        let sampleRate: Int
        let channelCount: Int
        var testDescription: String { "AOT \(objectType) \(sampleRate) Hz \(channelCount) ch" }
    }

    static let builtConfigs: [ConfigCase] = [
        ConfigCase(bytes: [0x12, 0x08], objectType: 2, sampleRate: 44100, channelCount: 1),
        ConfigCase(bytes: [0x11, 0x90], objectType: 2, sampleRate: 48000, channelCount: 2),
        ConfigCase(bytes: [0x13, 0x88], objectType: 2, sampleRate: 22050, channelCount: 1),
        ConfigCase(bytes: [0x11, 0xB8], objectType: 2, sampleRate: 48000, channelCount: 8),
        // explicit 24-bit rate: index 15 then 0x00AC44 (44100 is listed, 44000 is not)
        ConfigCase(bytes: [0x17, 0x80, 0x55, 0xF0, 0x10], objectType: 2, sampleRate: 44000, channelCount: 2),
    ]

    @Test(arguments: builtConfigs)
    func buildsAndParsesConfigs(config: ConfigCase) throws {
        let built = AudioSpecificConfig(objectType: config.objectType, sampleRate: config.sampleRate,
                                        channelCount: config.channelCount)
        #expect(built.bytes == config.bytes)
        let parsed = try AudioSpecificConfig(parsing: config.bytes)
        #expect(parsed == built)
    }

    @Test func parsesFFmpegConfigWithSBRSyncExtension() throws {
        // esds of `ffmpeg -f lavfi -i sine=sample_rate=44100 -ac 1 -c:a aac out.mp4`
        let bytes = [UInt8](hex: "120856e500")
        let config = try AudioSpecificConfig(parsing: bytes)
        #expect(config.objectType == 2)
        #expect(config.sampleRate == 44100)
        #expect(config.channelCount == 1)
        #expect(config.bytes == bytes)
        #expect(config.codecsString == "mp4a.40.2")
    }

    @Test func parsesEscapedObjectType() throws {
        // 31 (escape), then 42 − 32 = 10 in 6 bits; index 3 (48000); 2 channels
        let config = try AudioSpecificConfig(parsing: [0xF9, 0x46, 0x40])
        #expect(config.objectType == 42)
        #expect(config.sampleRate == 48000)
        #expect(config.channelCount == 2)
    }

    @Test func explicitHEAACTakesTheOutputRate() throws {
        // AOT 5, core index 6 (24000), 2 channels, extension index 3 (48000), core AOT 2
        let config = try AudioSpecificConfig(parsing: [0x2B, 0x11, 0x88, 0x00])
        #expect(config.objectType == 5)
        #expect(config.sampleRate == 48000)
        #expect(config.codecsString == "mp4a.40.5")
    }

    @Test func rejectsBadConfigs() {
        #expect(throws: BitstreamError.invalidField(structure: "AudioSpecificConfig",
                                                    field: "channelConfiguration", value: 0)) {
            try AudioSpecificConfig(parsing: [0x11, 0x80])
        }
        #expect(throws: BitstreamError.invalidField(structure: "AudioSpecificConfig",
                                                    field: "samplingFrequencyIndex", value: 13)) {
            try AudioSpecificConfig(parsing: [0x16, 0x90])
        }
        #expect(throws: BitstreamError.truncated(structure: "AudioSpecificConfig")) {
            try AudioSpecificConfig(parsing: [0x12])
        }
    }

    /// The first header of `ffmpeg -f lavfi -i sine=sample_rate=48000 -ac 2 -c:a aac -f adts -`.
    static let ffmpegADTSHeader: [UInt8] = [0xFF, 0xF1, 0x4C, 0x80, 0x24, 0xFF, 0xFC]

    @Test func parsesADTSHeader() throws {
        let header = try ADTSHeader(parsing: Self.ffmpegADTSHeader)
        #expect(header.profile == 1)
        #expect(header.objectType == 2)
        #expect(header.samplingFrequencyIndex == 3)
        #expect(header.sampleRate == 48000)
        #expect(header.channelConfiguration == 2)
        #expect(header.frameLength == 295)
        #expect(header.headerLength == 7)
        #expect(header.rawDataBlockCount == 1)
        #expect(try header.audioSpecificConfig().bytes == [0x11, 0x90])
    }

    @Test func stripsHeaderWithAndWithoutCRC() throws {
        let payload: [UInt8] = [0x21, 0x1B, 0x94, 0x00]
        // 44100 Hz (index 4) mono LC, frame length 7 + 4
        let plain: [UInt8] = [0xFF, 0xF1, 0x50, 0x40, 0x01, 0x7F, 0xFC] + payload + [0xEE]
        #expect(Array(try ADTSHeader.payload(ofFrame: plain)) == payload)
        #expect(try ADTSHeader(parsing: plain).audioSpecificConfig().bytes == [0x12, 0x08])
        // protection_absent 0: a 16-bit CRC follows, frame length 9 + 4
        let protected: [UInt8] = [0xFF, 0xF0, 0x50, 0x40, 0x01, 0xBF, 0xFC, 0xAB, 0xCD] + payload
        let header = try ADTSHeader(parsing: protected)
        #expect(header.headerLength == 9)
        #expect(Array(try ADTSHeader.payload(ofFrame: protected)) == payload)
    }

    @Test func rejectsBadADTS() {
        #expect(throws: BitstreamError.missingADTSSyncWord) {
            try ADTSHeader(parsing: [0xFF, 0xE1, 0x4C, 0x80, 0x24, 0xFF, 0xFC])
        }
        #expect(throws: BitstreamError.truncated(structure: "ADTS header")) {
            try ADTSHeader(parsing: Self.ffmpegADTSHeader.prefix(6))
        }
        #expect(throws: BitstreamError.truncated(structure: "ADTS frame")) {
            try ADTSHeader.payload(ofFrame: Self.ffmpegADTSHeader + [0x21])
        }
    }
}
