import HLSTestSupport
import Testing
@testable import HLSKit

enum MP4Fixtures {
    static let pps = [UInt8](hex: "68ebe3cb22c0")

    static func videoTrack(spsNamed name: String, trackID: UInt32 = 1, matrix: [Int32]? = nil) throws
        -> TrackDescription {
        let sps = SPSFixture.all.first { $0.name == name }!.nalUnit
        let config = try AVCDecoderConfiguration(sequenceParameterSets: [sps], pictureParameterSets: [pps])
        let parsed = try H264SequenceParameterSet(parsing: sps)
        let format = H264Format(decoderConfiguration: config, width: parsed.width, height: parsed.height,
                                displayWidth: parsed.displayWidth, displayHeight: parsed.height, matrix: matrix)
        return TrackDescription(trackID: trackID, timescale: 90000, format: .h264(format))
    }

    static func audioTrack(trackID: UInt32 = 2, language: String = "eng") -> TrackDescription {
        let config = AudioSpecificConfig(sampleRate: 44100, channelCount: 1)
        return TrackDescription(trackID: trackID, timescale: 44100,
                                format: .aac(AACFormat(audioSpecificConfig: config, averageBitrate: 64000,
                                                       maxBitrate: 70000)),
                                language: language)
    }
}

@Suite struct MP4InitSegmentTests {
    static let identity: [Int32] = [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x4000_0000]

    @Test func writesFileTypeAndMovieHeader() throws {
        let tracks = [try MP4Fixtures.videoTrack(spsNamed: "high 1920x1080"), MP4Fixtures.audioTrack()]
        let boxes = try MP4Box.parse(InitSegment.make(tracks: tracks))
        #expect(boxes.map(\.type) == ["ftyp", "moov"])
        #expect(Array(boxes[0].payload) == Array("iso6".utf8) + [0, 0, 0, 0] + Array("iso6mp41".utf8))
        let moov = boxes[1]
        #expect(moov.children.map(\.type) == ["mvhd", "trak", "trak", "mvex"])
        let mvhd = try #require(moov.first("mvhd"))
        #expect(mvhd.version == 0)
        #expect(Array(mvhd.payload[mvhd.payload.startIndex + 12..<mvhd.payload.startIndex + 16]) == [0, 0, 0x03, 0xE8])
        #expect(Array(mvhd.payload.suffix(4)) == [0, 0, 0, 3])  // next_track_ID
        #expect(mvhd.size == 108)
    }

    @Test func singleTrackClaimsCMAF() throws {
        let boxes = try MP4Box.parse(InitSegment.make(tracks: [MP4Fixtures.audioTrack(trackID: 1)]))
        #expect(Array(boxes[0].payload.suffix(12)) == Array("iso6mp41cmfc".utf8))
    }

    @Test func videoTrackFieldByField() throws {
        let track = try MP4Fixtures.videoTrack(spsNamed: "high 1920x1080", trackID: 1)
        let moov = try #require(try MP4Box.parse(InitSegment.make(tracks: [track])).first("moov"))
        let trak = try #require(moov.first("trak"))

        let tkhd = try #require(trak.first("tkhd")).trackHeader()
        #expect(tkhd.flags == 7)
        #expect(tkhd.trackID == 1)
        #expect(tkhd.volume == 0)
        #expect(tkhd.matrix == Self.identity)
        #expect(tkhd.width == 1920 << 16)
        #expect(tkhd.height == 1080 << 16)

        #expect(try trak.first("mdia/mdhd")?.mediaTimescale() == 90000)
        #expect(try trak.first("mdia/mdhd")?.mediaLanguage() == "und")
        let hdlr = try #require(trak.first("mdia/hdlr"))
        #expect(try hdlr.handlerType() == "vide")
        #expect(Array(hdlr.payload.suffix(13)) == Array("VideoHandler\0".utf8))
        #expect(trak.first("mdia/minf/vmhd")?.flags == 1)
        #expect(trak.first("mdia/minf/smhd") == nil)
        #expect(trak.first("mdia/minf/dinf/dref/url ")?.flags == 1)
        #expect(trak.first("mdia/minf/dinf/dref/url ")?.size == 12)

        let stbl = try #require(trak.first("mdia/minf/stbl"))
        #expect(stbl.children.map(\.type) == ["stsd", "stts", "stsc", "stsz", "stco"])
        for table in ["stts", "stsc", "stco"] {
            #expect(Array(stbl.first(table)!.payload) == [0, 0, 0, 0, 0, 0, 0, 0])
        }
        #expect(stbl.first("stsz")?.payload.count == 12)
        let avc1 = try #require(stbl.first("stsd/avc1"))
        let entry = Array(avc1.payload.prefix(78))
        #expect(entry[6..<8] == [0, 1])  // data_reference_index
        #expect(entry[24..<28] == [0x07, 0x80, 0x04, 0x38])  // 1920 x 1080
        #expect(entry[28..<36] == [0, 0x48, 0, 0, 0, 0x48, 0, 0])  // 72 dpi
        #expect(entry[40..<42] == [0, 1])  // frame_count
        #expect(entry[74..<78] == [0, 0x18, 0xFF, 0xFF])  // depth, pre_defined −1
        #expect(avc1.children.map(\.type) == ["avcC"])
        guard case .h264(let format) = track.format else { return }
        #expect(try avc1.first("avcC")?.avcConfigurationBytes() == format.decoderConfiguration.serialized)
    }

    @Test func nonSquarePixelsGetPaspAndDisplayWidth() throws {
        let track = try MP4Fixtures.videoTrack(spsNamed: "high 720x576 SAR 16:15")
        let trak = try #require(try MP4Box.parse(InitSegment.make(tracks: [track])).first("moov/trak"))
        #expect(try trak.first("tkhd")?.trackHeader().width == 768 << 16)
        let avc1 = try #require(trak.first("mdia/minf/stbl/stsd/avc1"))
        #expect(avc1.children.map(\.type) == ["avcC", "pasp"])
        #expect(Array(avc1.first("pasp")!.payload) == [0, 0, 0, 16, 0, 0, 0, 15])
        #expect(avc1.payload[avc1.payload.startIndex + 24..<avc1.payload.startIndex + 26] == [0x02, 0xD0])  // 720
    }

    @Test func matrixIsWrittenAsGiven() throws {
        let rotation: [Int32] = [0, 0x10000, 0, -0x10000, 0, 0, 0, 0, 0x4000_0000]
        let track = try MP4Fixtures.videoTrack(spsNamed: "baseline 320x240", matrix: rotation)
        let moov = try MP4Box.parse(InitSegment.make(tracks: [track]))
        #expect(try moov.first("moov/trak/tkhd")?.trackHeader().matrix == rotation)
    }

    @Test func audioTrackFieldByField() throws {
        let track = MP4Fixtures.audioTrack(trackID: 2, language: "eng")
        let moov = try #require(try MP4Box.parse(InitSegment.make(tracks: [track])).first("moov"))
        let tkhd = try #require(moov.first("trak/tkhd")).trackHeader()
        #expect(tkhd.trackID == 2)
        #expect(tkhd.volume == 0x0100)
        #expect(tkhd.width == 0 && tkhd.height == 0)
        #expect(try moov.first("trak/mdia/mdhd")?.mediaTimescale() == 44100)
        #expect(try moov.first("trak/mdia/mdhd")?.mediaLanguage() == "eng")
        #expect(try moov.first("trak/mdia/hdlr")?.handlerType() == "soun")
        #expect(moov.first("trak/mdia/minf/smhd") != nil)
        #expect(moov.first("trak/mdia/minf/vmhd") == nil)

        let mp4a = try #require(moov.first("trak/mdia/minf/stbl/stsd/mp4a"))
        let entry = Array(mp4a.payload.prefix(28))
        #expect(entry[16..<20] == [0, 1, 0, 16])  // channelcount 1, samplesize 16
        #expect(entry[24..<28] == [0xAC, 0x44, 0, 0])  // 44100 << 16
        let esds = try #require(mp4a.first("esds"))
        #expect(try esds.audioSpecificConfigBytes() == [0x12, 0x08])
        // ES_Descriptor(ES_ID 2) { DecoderConfig(0x40, audio, 768-byte buffer, 70000, 64000)
        //   { DecSpecificInfo }, SLConfig(2) }
        #expect(Array(esds.payload) == [
            0, 0, 0, 0,
            0x03, 0x19, 0x00, 0x02, 0x00,
            0x04, 0x11, 0x40, 0x15, 0x00, 0x03, 0x00, 0x00, 0x01, 0x11, 0x70, 0x00, 0x00, 0xFA, 0x00,
            0x05, 0x02, 0x12, 0x08,
            0x06, 0x01, 0x02,
        ])
    }

    @Test func trackExtendsPerTrack() throws {
        let tracks = [try MP4Fixtures.videoTrack(spsNamed: "main 640x360", trackID: 1), MP4Fixtures.audioTrack()]
        let trexes = try MP4Box.parse(InitSegment.make(tracks: tracks)).all("moov/mvex/trex")
        #expect(trexes.map { Array($0.payload) } == [
            [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            [0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        ])
    }
}
