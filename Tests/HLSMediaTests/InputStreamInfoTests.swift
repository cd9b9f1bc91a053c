import Foundation
import HLSKit
import Testing
@testable import HLSMedia

@Suite struct InputStreamInfoTests {
    /// AAC-LC (object type 2), 44.1 kHz (frequency index 4), 2 channels.
    static let stereoAACLC44100Config: [UInt8] = [0x12, 0x10]
    static let avcConfigurationVersion: UInt8 = 1
    static let annexBStartCode: [UInt8] = [0, 0, 0, 1]

    @Test func mp4StreamsDescribeH264AndAAC() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let demuxer = try FileDemuxer(path: try fixtures.makeAudioVideo("av.mp4"))

        #expect(demuxer.streams.count == 2)
        let video = demuxer.streams[0]
        #expect(video.kind == .video)
        #expect(video.index == 0)
        #expect(video.codecName == "h264")
        #expect(video.isH264 && !video.isAAC)
        #expect(video.width == 160 && video.height == 120)
        #expect(video.averageFrameRate == Rational(25, 1))
        #expect(video.timeBase == Rational(1, 12800))
        // A picture at 25 fps: 512 ticks of its own time base, 40 ms, 3600 ticks at 90 kHz.
        #expect(video.pictureTicks(in: video.timeBase) == 512)
        #expect(video.pictureTicks(in: Rational(1, 1_000_000)) == 40_000)
        #expect(video.pictureTicks(in: Rational(1, 90_000)) == 3600)
        // Under a tick, or no time base: not known.
        #expect(video.pictureTicks(in: Rational(1, 10)) == nil)
        #expect(video.pictureTicks(in: Rational(0, 0)) == nil)
        #expect(video.extradata.first == Self.avcConfigurationVersion)
        #expect(video.rotationDegrees == 0)
        #expect(video.displayMatrix == nil)
        #expect(video.frameCountHint == 50)
        #expect(abs((video.durationSeconds ?? 0) - 2) < 0.05)
        #expect(video.sampleRate == 0 && video.channelCount == 0)

        let audio = demuxer.streams[1]
        #expect(audio.kind == .audio)
        #expect(audio.index == 1)
        #expect(audio.codecName == "aac")
        #expect(audio.isAAC && !audio.isH264)
        #expect(audio.sampleRate == 44100)
        #expect(audio.channelCount == 2)
        #expect(audio.timeBase == Rational(1, 44100))
        #expect(audio.pictureTicks(in: audio.timeBase) == nil, "sound has no pictures")
        // FFmpeg's encoder follows the config with an explicit "no SBR" sync extension.
        #expect(Array(audio.extradata.prefix(2)) == Self.stereoAACLC44100Config)
        #expect(audio.width == 0 && audio.averageFrameRate == nil && audio.sampleAspectRatio == nil)
    }

    @Test func matroskaCountsInMilliseconds() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let path = try fixtures.remux(try fixtures.makeAudioVideo("av.mp4"), to: "av.mkv")
        let demuxer = try FileDemuxer(path: path)

        #expect(demuxer.streams.map(\.timeBase) == [Rational(1, 1000), Rational(1, 1000)])
        #expect(demuxer.streams.map(\.codecName) == ["h264", "aac"])
        #expect(demuxer.streams[0].frameCountHint == nil, "Matroska does not declare a frame count")
    }

    @Test func transportStreamCarriesAnnexBAndADTS() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let path = try fixtures.remux(try fixtures.makeAudioVideo("av.mp4"), to: "av.ts")
        let demuxer = try FileDemuxer(path: path)

        #expect(demuxer.streams.map(\.timeBase) == [Rational(1, 90000), Rational(1, 90000)])
        #expect(demuxer.streams[1].sampleRate == 44100)
        let packets = try readAllPackets(demuxer)
        let firstVideo = try #require(packets.first { $0.streamIndex == 0 })
        #expect(Array(firstVideo.data.prefix(4)) == Self.annexBStartCode)
        let firstAudio = try #require(packets.first { $0.streamIndex == 1 })
        // ADTS frames begin with a 12-bit syncword of ones.
        #expect(firstAudio.data.count > 2 && firstAudio.data[0] == 0xFF && firstAudio.data[1] & 0xF0 == 0xF0)
    }

    /// FFmpeg 5.1's command line turns the tag `rotate=N` into a display matrix that turns the
    /// picture N degrees counter-clockwise (its own autorotation does the same), so a tag of
    /// 270 gives the 90-degree clockwise matrix a phone writes for a portrait recording.
    @Test(arguments: [(tag: "270", clockwise: 90), (tag: "90", clockwise: 270), (tag: "180", clockwise: 180)])
    func rotationComesFromTheDisplayMatrix(tag: String, clockwise: Int) throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let path = try fixtures.remux(try fixtures.makeVideoOnly("plain.mp4"), to: "rotated.mov",
                                      extra: ["-metadata:s:v:0", "rotate=\(tag)"])
        let demuxer = try FileDemuxer(path: path)

        let video = try #require(demuxer.streams.first)
        #expect(video.rotationDegrees == clockwise)
        let matrix = try #require(video.displayMatrix)
        #expect(matrix.count == 9)
        if clockwise == 90 {
            let one = Int32(1 << 16)
            // The QuickTime matrix (a b; c d) = (0 1; -1 0) of a phone's portrait recording.
            #expect(Array(matrix[0...1]) + Array(matrix[3...4]) == [0, one, -one, 0])
        }
    }
}
