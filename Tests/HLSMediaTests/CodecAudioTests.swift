import CFFmpeg
import Foundation
import HLSKit
import Testing
@testable import HLSMedia

@Suite struct CodecAudioEncoderTests {
    @Test func primingAndConfigurationAreAACLowComplexity48kStereo() throws {
        let encoder = try AudioEncoder(settings: AudioEncoderSettings(), trackIndex: 1)
        #expect(encoder.primingSamples == 1024)
        let config = encoder.audioSpecificConfig
        #expect(config.objectType == AudioSpecificConfig.aacLowComplexity)
        #expect(config.sampleRate == 48_000)
        #expect(config.channelCount == 2)
        // Object type 2, frequency index 3, channel configuration 2, GASpecificConfig zeros; then
        // FFmpeg's sync extension 0x2B7 saying explicitly that there is no SBR.
        #expect(config.bytes == [0x11, 0x90, 0x56, 0xE5, 0x00])
    }

    @Test func firstSampleStartsThePrimingBeforeTheFirstFrame() throws {
        let encoder = try AudioEncoder(settings: AudioEncoderSettings(), trackIndex: 1)
        let firstInputSample = 48_000
        let frameCount = 10
        var samples: [EncodedSample] = []
        for index in 0..<frameCount {
            samples += try encoder.encode(try CodecTestMedia.sine(
                startSample: firstInputSample + index * 1024, sampleCount: 1024, sampleRate: 48_000, channelCount: 2))
        }
        samples += try encoder.flush()

        #expect(samples.first?.decodeTime == Int64(firstInputSample - encoder.primingSamples))
        let steps = zip(samples, samples.dropFirst()).map { $1.decodeTime - $0.decodeTime }
        #expect(steps.allSatisfy { $0 == 1024 })
        // Priming plus the input, rounded up to whole AAC frames.
        #expect(samples.count == frameCount + 1)
        #expect(samples.allSatisfy { $0.isSync && $0.track == 1 && !$0.data.isEmpty })
    }

    @Test func aFrameInTheWrongFormatIsRefused() throws {
        let encoder = try AudioEncoder(settings: AudioEncoderSettings(), trackIndex: 0)
        let mono = try CodecTestMedia.sine(startSample: 0, sampleCount: 1024, sampleRate: 48_000, channelCount: 1)
        #expect(throws: CodecError.self) { _ = try encoder.encode(mono) }
    }

    @Test(arguments: [AudioEncoderSettings(sampleRate: 47_000), AudioEncoderSettings(channelCount: 7)])
    func settingsAACCannotStateAreRefused(settings: AudioEncoderSettings) {
        #expect(throws: CodecError.self) { _ = try AudioEncoder(settings: settings, trackIndex: 0) }
    }
}

@Suite struct CodecResamplerTests {
    /// Feeds `inputSamples` of a sine at `inputRate` in `chunk`-sample frames through a
    /// resampler and FIFO for 48 kHz stereo; returns the frames the FIFO hands out.
    static func resample(inputSamples: Int, inputRate: Int, channels: Int, chunk: Int,
                         firstPts: Int64 = 0) throws -> [Frame] {
        let settings = AudioEncoderSettings()
        let resampler = Resampler(for: settings)
        let fifo = try AudioFIFO(for: settings)
        var output: [Frame] = []
        func drain() throws { while let frame = try fifo.readFrame() { output.append(frame) } }
        var position = 0
        while position < inputSamples {
            let count = min(chunk, inputSamples - position)
            let frame = try CodecTestMedia.sine(startSample: position, sampleCount: count, sampleRate: inputRate,
                                                channelCount: channels)
            frame.pts = firstPts + Int64(position)
            for converted in try resampler.convert(frame) { try fifo.write(converted) }
            try drain()
            position += count
        }
        if let tail = try resampler.flush() { try fifo.write(tail) }
        try drain()
        if let remainder = try fifo.readRemainder() { output.append(remainder) }
        return output
    }

    @Test(arguments: [(44_100, 1, 1000), (44_100, 2, 4096), (48_000, 2, 480), (8_000, 1, 160), (96_000, 6, 2048)])
    func outputIsSampleAccurate48kStereoInFramesOf1024(inputRate: Int, channels: Int, chunk: Int) throws {
        let seconds = 3
        let frames = try Self.resample(inputSamples: seconds * inputRate, inputRate: inputRate, channels: channels,
                                       chunk: chunk)

        let total = frames.reduce(0) { $0 + $1.sampleCount }
        #expect(abs(total - seconds * 48_000) <= 4, "\(total) samples")
        #expect(frames.dropLast().allSatisfy { $0.sampleCount == 1024 })
        #expect(frames.allSatisfy { $0.sampleRate == 48_000 && $0.channelCount == 2 })
        // Timestamps count samples without gaps or overlaps.
        var expectedPts: Int64 = 0
        for frame in frames {
            #expect(frame.pts == expectedPts)
            expectedPts += Int64(frame.sampleCount)
        }
    }

    @Test func theFirstTimestampIsTheFirstInputFramesInOutputSamples() throws {
        // 0.1 s into the input: 4410 samples at 44.1 kHz, 4800 at 48 kHz.
        let frames = try Self.resample(inputSamples: 44_100, inputRate: 44_100, channels: 1, chunk: 1024,
                                       firstPts: 4_410)
        #expect(frames.first?.pts == 4_800)
        #expect(frames.first?.timeBase == Rational(1, 48_000))
    }

    @Test func aFormatChangeMidStreamIsFollowed() throws {
        let resampler = Resampler(outputSampleRate: 48_000, outputChannelCount: 2)
        var total = 0
        for (rate, channels) in [(44_100, 1), (32_000, 2)] {
            for index in 0..<10 {
                let frame = try CodecTestMedia.sine(startSample: index * rate / 10, sampleCount: rate / 10,
                                                    sampleRate: rate, channelCount: channels)
                total += try resampler.convert(frame).reduce(0) { $0 + $1.sampleCount }
            }
        }
        total += try resampler.flush()?.sampleCount ?? 0
        #expect(abs(total - 2 * 48_000) <= 8, "\(total) samples")
    }

    @Test func aFrameThatStatesOnlyAChannelCountIsConverted() throws {
        let resampler = Resampler(outputSampleRate: 48_000, outputChannelCount: 2)
        var total = 0
        for index in 0..<10 {
            // As WAV and raw PCM decode: two channels in no stated order.
            let frame = try Frame(timeBase: Rational(1, 44_100))
            frame.pointer.pointee.nb_samples = 4_410
            frame.pointer.pointee.sample_rate = 44_100
            frame.pointer.pointee.format = AV_SAMPLE_FMT_S16.rawValue
            frame.pointer.pointee.ch_layout.order = AV_CHANNEL_ORDER_UNSPEC
            frame.pointer.pointee.ch_layout.nb_channels = 2
            try FFmpegError.check(av_frame_get_buffer(frame.pointer, 0))
            frame.plane(0).base.initialize(repeating: 0, count: 4_410 * 2 * 2)
            frame.pts = Int64(index * 4_410)
            total += try resampler.convert(frame).reduce(0) { $0 + $1.sampleCount }
        }
        total += try resampler.flush()?.sampleCount ?? 0
        #expect(abs(total - 48_000) <= 4, "\(total) samples")
    }

    @Test(arguments: [(44_100, 0), (500_000, 2), (800, 2)])
    func impossibleInputIsAClearError(sampleRate: Int, channels: Int) throws {
        let frame = try Frame.fltp(sampleCount: 1024, sampleRate: 48_000, channelCount: 2)
        frame.pointer.pointee.sample_rate = Int32(sampleRate)
        frame.pointer.pointee.ch_layout.nb_channels = Int32(channels)
        let resampler = Resampler(outputSampleRate: 48_000, outputChannelCount: 2)
        #expect {
            _ = try resampler.convert(frame)
        } throws: { error in
            guard case .unsupportedAudio(let detail)? = error as? CodecError else { return false }
            return channels == 0 ? detail.contains("no channels") : detail.contains("\(sampleRate) Hz")
        }
    }
}
