import Foundation
import HLSKit
import HLSTestSupport
import Testing
@testable import HLSMedia

@Suite struct CodecVideoEncoderTests {
    static let frameRate = Rational(30, 1)
    static let width = 320
    static let height = 240

    static func settings(zeroLatency: Bool = false, keyframeInterval: Int = 250) -> VideoEncoderSettings {
        VideoEncoderSettings(width: width, height: height, frameRate: frameRate, bitrate: 400_000,
                             zeroLatency: zeroLatency, keyframeIntervalFrames: keyframeInterval)
    }

    /// Encodes `count` pattern frames at 30 fps (pts in 1/30 s), forcing keyframes at `keyframes`.
    static func encode(count: Int, keyframes: Set<Int>, settings: VideoEncoderSettings,
                       sceneChangeFrame: Int = .max) throws -> (VideoEncoder, [EncodedSample]) {
        let encoder = try VideoEncoder(settings: settings, trackIndex: 0)
        var samples: [EncodedSample] = []
        for index in 0..<count {
            let frame = try CodecTestMedia.pattern(index: index, width: width, height: height,
                                                   timeBase: Rational(1, 30), sceneChangeFrame: sceneChangeFrame)
            samples += try encoder.encode(frame, forceKeyframe: keyframes.contains(index))
        }
        samples += try encoder.flush()
        return (encoder, samples)
    }

    /// The input frame a sample holds, from its presentation time (3000 ticks a frame at 30 fps).
    static func frameIndex(_ sample: EncodedSample) -> Int { Int(sample.presentationTime / 3000) }

    /// Whether the first slice of a length-prefixed sample is an I slice: after the NAL header
    /// come first_mb_in_slice and slice_type as unsigned Exp-Golomb codes; slice_type 2 or 7 is I.
    static func isIntra(_ sample: [UInt8]) throws -> Bool {
        var offset = 0
        while offset + 4 < sample.count {
            let length = sample[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let unit = sample[(offset + 4)..<(offset + 4 + length)]
            offset += 4 + length
            guard let header = unit.first, [1, 5].contains(header & 0x1F) else { continue }
            var bits = ExpGolombReader(H264NALUnit.removingEmulationPrevention(unit.dropFirst()))
            _ = bits.unsigned()
            return bits.unsigned() % 5 == 2
        }
        return false
    }

    @Test(arguments: [([0, 30], false), ([0, 30], true), ([0, 17, 45], false), ([0, 17, 45], true)])
    func forcedKeyframesAreTheOnlyIDRs(keyframes: [Int], zeroLatency: Bool) throws {
        // A scene change at frame 40 would get its own keyframe if scene-cut detection were on.
        let (_, samples) = try Self.encode(count: 60, keyframes: Set(keyframes),
                                           settings: Self.settings(zeroLatency: zeroLatency), sceneChangeFrame: 40)

        #expect(samples.count == 60)
        #expect(samples.map(Self.frameIndex).sorted() == Array(0..<60))
        let idrFrames = try samples.filter { try FragmentSamples.containsIDR($0.data) }.map(Self.frameIndex)
        #expect(idrFrames.sorted() == keyframes)
        #expect(samples.filter(\.isSync).map(Self.frameIndex).sorted() == keyframes)
        // Nor did the scene change get an intra picture that is not an IDR.
        let intraFrames = try samples.filter { try Self.isIntra($0.data) }.map(Self.frameIndex)
        #expect(intraFrames.sorted() == keyframes)
        for sample in samples {
            let types = try FragmentSamples.nalUnitTypes(inSample: sample.data)
            #expect(!types.contains(7) && !types.contains(8), "SPS/PPS belong in avcC, not the samples")
        }
    }

    /// Live encoding (Low-Latency HLS parts among it) uses zero latency: each frame comes out of the encoder
    /// as the call that took it returns, in presentation order (no B-frame, no lookahead), so no part waits
    /// for frames after its own. The default settings hold frames back.
    @Test func zeroLatencyHandsEachFrameBackAtOnceWithoutBFrames() throws {
        for zeroLatency in [true, false] {
            let encoder = try VideoEncoder(settings: Self.settings(zeroLatency: zeroLatency), trackIndex: 0)
            var heldBack = 0
            var samples: [EncodedSample] = []
            for index in 0..<30 {
                let frame = try CodecTestMedia.pattern(index: index, width: Self.width, height: Self.height,
                                                       timeBase: Rational(1, 30))
                let out = try encoder.encode(frame, forceKeyframe: index == 0)
                heldBack += out.isEmpty ? 1 : 0
                samples += out
            }
            if zeroLatency {
                #expect(heldBack == 0)
                #expect(samples.map(Self.frameIndex) == Array(0..<30))
                #expect(samples.allSatisfy { $0.compositionOffset == 0 })
            } else {
                #expect(heldBack > 0)
            }
        }
    }

    @Test func keyframeIntervalAppliesWhenNothingIsForced() throws {
        let (_, samples) = try Self.encode(count: 60, keyframes: [], settings: Self.settings(keyframeInterval: 20))
        let idrFrames = samples.filter(\.isSync).map(Self.frameIndex).sorted()
        #expect(idrFrames == [0, 20, 40])
    }

    @Test func timesAreOn90kHzWithDecodeOrderBeforePresentation() throws {
        let (encoder, samples) = try Self.encode(count: 30, keyframes: [0], settings: Self.settings())
        #expect(samples.map(\.presentationTime).sorted() == (0..<30).map { Int64($0) * 3000 })
        let decodeTimes = samples.map(\.decodeTime)
        #expect(decodeTimes == decodeTimes.sorted())
        #expect(samples.allSatisfy { $0.decodeTime <= $0.presentationTime })
        #expect(samples.allSatisfy { $0.track == encoder.trackIndex })
    }

    @Test func formatComesFromTheEncodersParameterSets() throws {
        let encoder = try VideoEncoder(settings: Self.settings(), trackIndex: 0)
        let configuration = try #require(encoder.format).decoderConfiguration
        #expect(configuration.profileIndication == 100, "High profile")
        #expect(Int(configuration.levelIndication) == encoder.level?.idc)
        #expect(encoder.level?.idc == 13)
        let sps = try configuration.parsedSequenceParameterSet()
        #expect(sps.width == Self.width && sps.height == Self.height)
        #expect(encoder.format?.width == Self.width && encoder.format?.height == Self.height)
    }

    @Test(arguments: [
        (VideoEncoderSettings(width: 321, height: 240, frameRate: Rational(30, 1), bitrate: 1_000_000,
                              keyframeIntervalFrames: 60), "even"),
        (VideoEncoderSettings(width: 320, height: 240, frameRate: Rational(0, 1), bitrate: 1_000_000,
                              keyframeIntervalFrames: 60), "frame rate"),
        (VideoEncoderSettings(width: 1920, height: 1080, frameRate: Rational(30, 1), bitrate: 900_000_000,
                              keyframeIntervalFrames: 60), "level"),
    ])
    func impossibleSettingsAreRefused(settings: VideoEncoderSettings, reason: String) {
        #expect {
            _ = try VideoEncoder(settings: settings, trackIndex: 0)
        } throws: { error in
            guard let error = error as? CodecError, case .unsupportedSettings = error else { return false }
            return error.description.contains(reason)
        }
    }

    @Test func aFrameOfTheWrongSizeIsRefused() throws {
        let encoder = try VideoEncoder(settings: Self.settings(), trackIndex: 0)
        let frame = try Frame.yuv420p(width: 160, height: 120)
        frame.pts = 0
        #expect(throws: CodecError.self) { _ = try encoder.encode(frame, forceKeyframe: false) }
    }

    /// Video and audio through HLSKit's init segment and media fragment, decoded by ffmpeg.
    @Test func encodedStreamPackagedByHLSKitDecodesCleanly() throws {
        let (video, videoSamples) = try Self.encode(count: 60, keyframes: [0, 30], settings: Self.settings())
        let audio = try AudioEncoder(settings: AudioEncoderSettings(), trackIndex: 1)
        var audioSamples: [EncodedSample] = []
        let audioFrames = 2 * audio.settings.sampleRate / AudioEncoder.frameSampleCount
        for index in 0..<audioFrames {
            audioSamples += try audio.encode(try CodecTestMedia.sine(
                startSample: index * AudioEncoder.frameSampleCount, sampleCount: AudioEncoder.frameSampleCount,
                sampleRate: audio.settings.sampleRate, channelCount: audio.settings.channelCount))
        }
        audioSamples += try audio.flush()

        let tracks = [
            TrackDescription(trackID: 1, timescale: 90_000, format: video.trackFormat),
            TrackDescription(trackID: 2, timescale: Timescale(audio.settings.sampleRate),
                             format: .aac(AACFormat(audioSpecificConfig: audio.audioSpecificConfig))),
        ]
        // Ten seconds in, as the segmenter starts, so that B-frame and priming times stay positive.
        let fragment = MediaFragment.make(sequenceNumber: 1, tracks: [
            FragmentTrack(trackID: 1, baseDecodeTime: UInt64(900_000 + videoSamples[0].decodeTime),
                          samples: CodecTestMedia.timed(videoSamples, shiftedBy: 900_000, lastDuration: 3000)),
            FragmentTrack(trackID: 2, baseDecodeTime: UInt64(480_000 + audioSamples[0].decodeTime),
                          samples: CodecTestMedia.timed(audioSamples, shiftedBy: 480_000, lastDuration: 1024)),
        ], descriptions: tracks)
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let path = try fixtures.write(Data(InitSegment.make(tracks: tracks) + fragment), to: "stream.mp4")

        #expect(try ExternalTools.ffmpegDecodeErrors(path: path) == "")
        #expect(try ExternalTools.ffprobeFrameCount(path: path, stream: "v:0") == 60)
    }
}

/// Reads unsigned Exp-Golomb codes (H.264 9.1), enough for the start of a slice header.
struct ExpGolombReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    private mutating func bit() -> Int {
        guard position / 8 < bytes.count else { return 1 }
        defer { position += 1 }
        return Int(bytes[position / 8] >> (7 - UInt8(position % 8)) & 1)
    }

    mutating func unsigned() -> Int {
        var leadingZeros = 0
        while bit() == 0 { leadingZeros += 1 }
        var value = 0
        for _ in 0..<leadingZeros { value = value << 1 | bit() }
        return (1 << leadingZeros) - 1 + value
    }
}
