import HLSTestSupport
import Testing
@testable import HLSKit

extension MP4Fixtures {
    static func hevcTrack(_ name: String, trackID: UInt32 = 1, matrix: [Int32]? = nil) throws -> TrackDescription {
        let fixture = try #require(HEVCFixture.all.first { $0.name == name })
        let config = try HEVCDecoderConfiguration(videoParameterSets: [fixture.vps],
                                                  sequenceParameterSets: [fixture.sps],
                                                  pictureParameterSets: [fixture.pps])
        return TrackDescription(trackID: trackID, timescale: 90000,
                                format: .hevc(try HEVCFormat(decoderConfiguration: config, matrix: matrix)))
    }
}

@Suite struct MP4HEVCSampleEntryTests {
    private func sampleEntry(_ track: TrackDescription, _ type: String) throws -> (trak: MP4Box, entry: MP4Box) {
        let trak = try #require(try MP4Box.parse(InitSegment.make(tracks: [track])).first("moov/trak"))
        return (trak, try #require(trak.first("mdia/minf/stbl/stsd/\(type)")))
    }

    @Test func hvc1EntryFieldByField() throws {
        let track = try MP4Fixtures.hevcTrack("main 320x240")
        #expect(track.isVideo)
        let (trak, hvc1) = try sampleEntry(track, "hvc1")
        #expect(try trak.first("mdia/hdlr")?.handlerType() == "vide")
        #expect(trak.first("mdia/minf/vmhd") != nil)
        let tkhd = try #require(trak.first("tkhd")).trackHeader()
        #expect(tkhd.width == 320 << 16 && tkhd.height == 240 << 16)
        #expect(tkhd.volume == 0)
        let entry = Array(hvc1.payload.prefix(78))
        #expect(entry[6..<8] == [0, 1])  // data_reference_index
        #expect(entry[24..<28] == [0x01, 0x40, 0x00, 0xF0])  // 320 x 240
        #expect(entry[74..<78] == [0, 0x18, 0xFF, 0xFF])  // depth, pre_defined −1
        // Square pixels and no colour description in the VUI: nothing but the record.
        #expect(hvc1.children.map(\.type) == ["hvcC"])
        let fixture = HEVCFixture.all[0]
        #expect(try hvc1.first("hvcC")?.hevcConfigurationBytes() == fixture.record)
    }

    @Test func conformanceWindowAndNonSquarePixels() throws {
        let (trak, hvc1) = try sampleEntry(try MP4Fixtures.hevcTrack("main 180x100 SAR 16:15"), "hvc1")
        #expect(hvc1.payload[hvc1.payload.startIndex + 24..<hvc1.payload.startIndex + 28] == [0, 180, 0, 100])
        #expect(hvc1.children.map(\.type) == ["hvcC", "pasp"])
        #expect(Array(try #require(hvc1.first("pasp")).payload) == [0, 0, 0, 16, 0, 0, 0, 15])
        let tkhd = try #require(trak.first("tkhd")).trackHeader()
        #expect(tkhd.width == 192 << 16 && tkhd.height == 100 << 16)
    }

    @Test(arguments: [
        ("main10 HLG 1920x1080", MP4Box.ColourInformation(primaries: 9, transferCharacteristics: 18,
                                                          matrixCoefficients: 9, isFullRange: false)),
        ("main10 PQ full range 3840x2160", MP4Box.ColourInformation(primaries: 9, transferCharacteristics: 16,
                                                                    matrixCoefficients: 9, isFullRange: true)),
        ("rext 4:4:4 176x144", MP4Box.ColourInformation(primaries: 1, transferCharacteristics: 1,
                                                        matrixCoefficients: 1, isFullRange: false)),
    ])
    func colourDescriptionBecomesColr(name: String, expected: MP4Box.ColourInformation) throws {
        let (_, hvc1) = try sampleEntry(try MP4Fixtures.hevcTrack(name), "hvc1")
        #expect(hvc1.children.map(\.type) == ["hvcC", "colr"])
        let colr = try #require(hvc1.first("colr"))
        #expect(try colr.colourInformation() == expected)
        #expect(colr.size == 19)
    }

    @Test func colrBytesForPQFullRange() throws {
        let (_, hvc1) = try sampleEntry(try MP4Fixtures.hevcTrack("main10 PQ full range 3840x2160"), "hvc1")
        #expect(Array(try #require(hvc1.first("colr")).payload) == Array("nclx".utf8) + [0, 9, 0, 16, 0, 9, 0x80])
    }

    @Test func rotationMatrixIsWrittenAsGiven() throws {
        let rotation: [Int32] = [0, 0x10000, 0, -0x10000, 0, 0, 0, 0, 0x4000_0000]
        let (trak, _) = try sampleEntry(try MP4Fixtures.hevcTrack("main 320x240", matrix: rotation), "hvc1")
        #expect(try trak.first("tkhd")?.trackHeader().matrix == rotation)
    }

    @Test func h264EntryGetsColrOnlyWhenTheColourIsKnown() throws {
        var track = try MP4Fixtures.videoTrack(spsNamed: "baseline 320x240")
        let (_, plain) = try sampleEntry(track, "avc1")
        #expect(plain.children.map(\.type) == ["avcC"])
        guard case .h264(var format) = track.format else { throw MP4ReadError.missingBox("avc1") }
        format.colourDescription = ColourDescription(primaries: 1, transferCharacteristics: 1, matrixCoefficients: 1,
                                                     isFullRange: false)
        track.format = .h264(format)
        let (_, described) = try sampleEntry(track, "avc1")
        #expect(described.children.map(\.type) == ["avcC", "colr"])
        #expect(try described.first("colr")?.colourInformation()
                == MP4Box.ColourInformation(primaries: 1, transferCharacteristics: 1, matrixCoefficients: 1,
                                            isFullRange: false))
    }
}
