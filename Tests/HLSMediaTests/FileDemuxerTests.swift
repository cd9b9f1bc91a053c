import Foundation
import Testing
@testable import HLSMedia

/// Every packet of the file, in the order the demuxer returns them.
func readAllPackets(_ demuxer: FileDemuxer) throws -> [DemuxedPacket] {
    var packets: [DemuxedPacket] = []
    while let packet = try demuxer.nextPacket() { packets.append(packet) }
    return packets
}

/// A packet as ffprobe would describe it, for comparison.
func probed(_ packet: DemuxedPacket, of demuxer: FileDemuxer) -> ProbedPacket {
    ProbedPacket(
        streamIndex: demuxer.streams[packet.streamIndex].index, pts: packet.pts, dts: packet.dts,
        duration: packet.duration, size: packet.data.count, isKeyframe: packet.isKeyframe,
        isDiscard: packet.isDiscard, dataHash: adler32Hash(packet.data))
}

@Suite struct FileDemuxerPacketTests {
    /// Writes the container named by `fileExtension` holding 2 s of H.264 and AAC.
    static func makeAudioVideo(_ fixtures: MediaFixtures, _ fileExtension: String) throws -> String {
        let source = try fixtures.makeAudioVideo("source.mp4")
        return fileExtension == "mp4" ? source : try fixtures.remux(source, to: "copy.\(fileExtension)")
    }

    @Test(arguments: ["mp4", "mov", "mkv", "ts"])
    func packetsMatchFFprobe(fileExtension: String) throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let path = try Self.makeAudioVideo(fixtures, fileExtension)

        let demuxer = try FileDemuxer(path: path)
        let packets = try readAllPackets(demuxer)

        #expect(packets.map { probed($0, of: demuxer) } == (try ProbedPacket.read(path)))
        var counts: [Int: Int] = [:]
        for packet in packets { counts[demuxer.streams[packet.streamIndex].index, default: 0] += 1 }
        #expect(counts == (try probedPacketCounts(path)))
        #expect(try demuxer.nextPacket() == nil, "the end of file stays the end")
    }

    @Test(arguments: ["mp4", "mov", "mkv", "ts"])
    func videoHasOneKeyframeASecond(fileExtension: String) throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let demuxer = try FileDemuxer(path: try Self.makeAudioVideo(fixtures, fileExtension))

        let video = try readAllPackets(demuxer).filter { $0.streamIndex == 0 }
        #expect(video.count == 50)
        let keyframePositions = video.indices.filter { video[$0].isKeyframe }
        // In decode order the frame shown at 1 s may arrive just before or after position 25.
        #expect(keyframePositions.count == 2)
        #expect(keyframePositions.first == 0)
    }

    @Test func audioOnlyFileHasOneAudioStream() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let path = try fixtures.makeAudioOnly("audio.m4a")

        let demuxer = try FileDemuxer(path: path)
        #expect(demuxer.streams.map(\.kind) == [.audio])
        let packets = try readAllPackets(demuxer)
        #expect(packets.allSatisfy { $0.streamIndex == 0 })
        #expect(packets.map { probed($0, of: demuxer) } == (try ProbedPacket.read(path)))
    }

    @Test func videoOnlyFileHasOneVideoStream() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let path = try fixtures.makeVideoOnly("video.mp4")

        let demuxer = try FileDemuxer(path: path)
        #expect(demuxer.streams.map(\.kind) == [.video])
        #expect(try readAllPackets(demuxer).count == 50)
    }

    @Test func firstAACPacketInMP4CarriesTheEncoderPriming() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let demuxer = try FileDemuxer(path: try fixtures.makeAudioOnly("audio.m4a"))

        let first = try #require(try demuxer.nextPacket())
        #expect(first.skipSamplesAtStart == 1024)
        #expect(first.isDiscard)
        #expect(first.pts == -1024)
        let second = try #require(try demuxer.nextPacket())
        #expect(second.skipSamplesAtStart == 0)
        #expect(!second.isDiscard)
    }

    @Test func otherStreamsAreLeftOut() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let source = try fixtures.makeAudioVideo("source.mp4")
        let subtitles = try fixtures.write(Data("1\n00:00:00,000 --> 00:00:01,000\nHello\n\n".utf8), to: "s.srt")
        // Subtitles first, so that FFmpeg's indexes and ours differ.
        let path = try fixtures.ffmpeg(["-i", subtitles, "-i", source, "-map", "0", "-map", "1", "-c", "copy"],
                                       output: "with-subtitles.mkv")

        let demuxer = try FileDemuxer(path: path)
        #expect(demuxer.streams.map(\.index) == [1, 2])
        let packets = try readAllPackets(demuxer)
        #expect(Set(packets.map(\.streamIndex)) == [0, 1])
        #expect(packets.count == (try probedPacketCounts(path)).filter { $0.key != 0 }.values.reduce(0, +))
    }
}
