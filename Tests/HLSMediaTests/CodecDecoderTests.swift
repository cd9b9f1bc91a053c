import Foundation
import HLSTestSupport
import Testing
@testable import HLSMedia

/// What decoding one stream of a file gave.
struct DecodedStream {
    var frames: [Frame] = []
    /// Packets the decoder rejected as damaged.
    var corruptPackets = 0
}

/// Decodes every packet of the stream at `position` in the demuxer's streams, handing each
/// packet through `alter` first (to damage some).
func decodeStream(_ path: String, kind: InputStreamInfo.Kind,
                  alter: (Int, DemuxedPacket) -> DemuxedPacket = { $1 }) throws -> DecodedStream {
    let demuxer = try FileDemuxer(path: path)
    let position = try #require(demuxer.streams.firstIndex { $0.kind == kind })
    let decoder = try Decoder(demuxer: demuxer, streamIndex: position)
    var decoded = DecodedStream()
    func receiveAll() throws {
        while true {
            let result: Decoder.DecodeResult
            do {
                result = try decoder.receive()
            } catch CodecError.corruptPacket {
                decoded.corruptPackets += 1
                continue
            }
            switch result {
            case .frame(let frame): decoded.frames.append(frame)
            case .needsInput, .endOfStream: return
            }
        }
    }
    var packetNumber = 0
    while let packet = try demuxer.nextPacket() {
        guard packet.streamIndex == position else { continue }
        do {
            try decoder.send(alter(packetNumber, packet))
        } catch CodecError.corruptPacket {
            decoded.corruptPackets += 1
        }
        packetNumber += 1
        try receiveAll()
    }
    try decoder.sendEndOfStream()
    try receiveAll()
    return decoded
}

@Suite struct CodecDecoderTests {
    static func fixture(_ name: String) -> String {
        ExternalTools.fixturesDirectory.appendingPathComponent(name).path
    }

    @Test(arguments: ["h264-aac.mp4", "h264-bframes-aac.mp4", "h264-aac.ts", "mpeg4-mp3.avi"])
    func fixtureFrameCountsMatchFFprobe(name: String) throws {
        let path = Self.fixture(name)
        let video = try decodeStream(path, kind: .video)
        let audio = try decodeStream(path, kind: .audio)
        #expect(video.frames.count == (try ExternalTools.ffprobeFrameCount(path: path, stream: "v:0")))
        #expect(audio.frames.count == (try ExternalTools.ffprobeFrameCount(path: path, stream: "a:0")))
        #expect(video.corruptPackets == 0 && audio.corruptPackets == 0)
    }

    /// Codecs beyond the committed fixtures', made here with the ffmpeg tool.
    @Test(arguments: [
        ("hevc.mkv", ["-c:v", "libx265", "-x265-params", "log-level=error"], InputStreamInfo.Kind.video),
        ("vp9.webm", ["-c:v", "libvpx-vp9", "-deadline", "realtime"], .video),
        ("opus.webm", ["-c:a", "libopus"], .audio),
        ("audio.mp3", ["-c:a", "libmp3lame"], .audio),
    ])
    func otherCodecsDecodeAsFFprobeCounts(name: String, encoding: [String], kind: InputStreamInfo.Kind) throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let source = kind == .video ? MediaFixtures.videoSource : MediaFixtures.audioSource
        let path = try fixtures.ffmpeg(source + encoding, output: name)

        let decoded = try decodeStream(path, kind: kind)

        let expected = try ExternalTools.ffprobeFrameCount(path: path, stream: kind == .video ? "v:0" : "a:0")
        #expect(expected > 0)
        #expect(decoded.frames.count == expected)
    }

    @Test func framesKeepTheStreamTimeBaseAndPresentationTimes() throws {
        let path = Self.fixture("h264-bframes-aac.mp4")
        let demuxer = try FileDemuxer(path: path)
        let decoded = try decodeStream(path, kind: .video)

        #expect(decoded.frames.allSatisfy { $0.timeBase == demuxer.streams[0].timeBase })
        let times = decoded.frames.compactMap(\.pts)
        #expect(times.count == decoded.frames.count)
        // Decoded frames come out in presentation order even though B-frames are sent out of it.
        #expect(times == times.sorted())
        #expect(Set(times).count == times.count)
        #expect(decoded.frames.allSatisfy { $0.width == 320 && $0.height == 240 })
    }

    @Test func audioFramesHaveTheStreamFormat() throws {
        let decoded = try decodeStream(Self.fixture("h264-bframes-aac.mp4"), kind: .audio)
        let first = try #require(decoded.frames.first)
        #expect(first.sampleRate == 44_100)
        #expect(first.channelCount == 1)
        #expect(first.sampleCount > 0)
    }

    @Test func aDamagedPacketIsReportedAndDecodingGoesOn() throws {
        let path = Self.fixture("h264-aac.mp4")
        let damagedPacket = 10
        // A NAL unit length far larger than the packet: not H.264 the decoder can read.
        let garbage: [UInt8] = [0x7F, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 0xA5, count: 60)
        let decoded = try decodeStream(path, kind: .video) { number, packet in
            var packet = packet
            if number == damagedPacket { packet.data = garbage }
            return packet
        }

        let total = try ExternalTools.ffprobeFrameCount(path: path, stream: "v:0")
        #expect(decoded.corruptPackets == 1)
        #expect(decoded.frames.count == total - 1)
    }

    @Test func errorsNameTheCodecAndTheFile() {
        let missing = CodecError.decoderNotFound(codec: "vvc", path: "clip.mkv").description
        #expect(missing.hasPrefix("clip.mkv: ") && missing.contains("vvc"))
        #expect(CodecError.encoderNotFound(codec: "libx264").description.contains("libx264"))
    }
}
