import HLSTestSupport
import Testing
@testable import HLSKit

@Suite struct MP4MediaFragmentTests {
    static let idrSample: [UInt8] = [0, 0, 0, 2, 0x06, 0x05] + [0, 0, 0, 4, 0x65, 0x88, 0x84, 0x21]
    static let predictedSample: [UInt8] = [0, 0, 0, 3, 0x41, 0x9A, 0x02]
    static let bidirectionalSample: [UInt8] = [0, 0, 0, 2, 0x01, 0x9E]
    /// Larger than 2^32 so that a 32-bit tfdt would lose it.
    static let videoBaseDecodeTime: UInt64 = 0x1_0000_0000 + 900_000

    static func video() throws -> TrackDescription {
        try MP4Fixtures.videoTrack(spsNamed: "high 1920x1080", trackID: 1)
    }

    static func videoFragmentTrack() -> FragmentTrack {
        // Decode order I P B with composition offsets 2, 3, −1 frames of 3000 ticks.
        let base = Int64(videoBaseDecodeTime)
        return FragmentTrack(trackID: 1, baseDecodeTime: videoBaseDecodeTime, samples: [
            TimedSample(decodeTime: base, durationTicks: 3000, compositionOffset: 6000, isSync: true,
                        data: idrSample),
            TimedSample(decodeTime: base + 3000, durationTicks: 3000, compositionOffset: 9000, isSync: false,
                        data: predictedSample),
            TimedSample(decodeTime: base + 6000, durationTicks: 3001, compositionOffset: -3000, isSync: false,
                        data: bidirectionalSample),
        ])
    }

    static func audioFragmentTrack() -> FragmentTrack {
        // isSync false on purpose: audio samples are written as sync samples regardless.
        FragmentTrack(trackID: 2, baseDecodeTime: 441_000, samples: [
            TimedSample(decodeTime: 441_000, durationTicks: 1024, compositionOffset: 0, isSync: true,
                        data: [0x21, 0x10, 0x04, 0x60]),
            TimedSample(decodeTime: 442_024, durationTicks: 1024, compositionOffset: 0, isSync: false,
                        data: [0x21, 0x10, 0x05]),
        ])
    }

    static func fragment() throws -> [UInt8] {
        MediaFragment.make(sequenceNumber: 42, tracks: [
            videoFragmentTrack(),
            FragmentTrack(trackID: 3, baseDecodeTime: 0, samples: []),
            audioFragmentTrack(),
        ], descriptions: [try video(), MP4Fixtures.audioTrack(trackID: 2),
                          MP4Fixtures.audioTrack(trackID: 3)])
    }

    @Test func writesSegmentTypeMoofAndMdat() throws {
        let boxes = try MP4Box.parse(try Self.fragment())
        #expect(boxes.map(\.type) == ["styp", "moof", "mdat"])
        #expect(Array(boxes[0].payload) == Array("msdh".utf8) + [0, 0, 0, 0] + Array("msdhmsix".utf8))
        #expect(try boxes.first("moof/mfhd")?.sequenceNumber() == 42)
        #expect(boxes[1].children.map(\.type) == ["mfhd", "traf", "traf"])
        let expectedData = Self.videoFragmentTrack().samples.flatMap(\.data)
            + Self.audioFragmentTrack().samples.flatMap(\.data)
        #expect(Array(boxes[2].payload) == expectedData)
    }

    @Test func trackFragmentHeadersAndDecodeTimes() throws {
        let trafs = try MP4Box.parse(try Self.fragment()).all("moof/traf")
        #expect(trafs.map { $0.children.map(\.type) } == [["tfhd", "tfdt", "trun"], ["tfhd", "tfdt", "trun"]])
        #expect(try trafs.map { try $0.first("tfhd")!.trackFragmentTrackID() } == [1, 2])
        #expect(trafs.map { $0.first("tfhd")!.flags } == [0x02_0000, 0x02_0000])
        #expect(trafs.map { $0.first("tfhd")!.payload.count } == [8, 8])  // no optional fields
        #expect(trafs.map { $0.first("tfdt")!.version } == [1, 1])
        #expect(try trafs.map { try $0.first("tfdt")!.baseDecodeTime() } == [Self.videoBaseDecodeTime, 441_000])
    }

    @Test func videoRunHasSignedCompositionOffsetsAndSyncFlags() throws {
        let trun = try #require(try MP4Box.parse(try Self.fragment()).first("moof/traf/trun")).trackRun()
        #expect(trun.version == 1)
        #expect(trun.flags == 0x000F01)
        #expect(trun.firstSampleFlags == nil)
        #expect(trun.entries == [
            .init(duration: 3000, size: 14, flags: 0x0200_0000, compositionOffset: 6000),
            .init(duration: 3000, size: 7, flags: 0x0101_0000, compositionOffset: 9000),
            .init(duration: 3001, size: 6, flags: 0x0101_0000, compositionOffset: -3000),
        ])
    }

    @Test func audioRunOmitsCompositionOffsetsAndIsAllSync() throws {
        let trafs = try MP4Box.parse(try Self.fragment()).all("moof/traf")
        let trun = try #require(trafs.last?.first("trun")).trackRun()
        #expect(trun.version == 0)
        #expect(trun.flags == 0x000701)
        #expect(trun.entries == [
            .init(duration: 1024, size: 4, flags: 0x0200_0000, compositionOffset: nil),
            .init(duration: 1024, size: 3, flags: 0x0200_0000, compositionOffset: nil),
        ])
    }

    @Test func dataOffsetsPointAtEachTracksSamples() throws {
        let fragment = try Self.fragment()
        let boxes = try MP4Box.parse(fragment)
        let moof = try #require(boxes.first("moof"))
        let mdat = try #require(boxes.first("mdat"))
        let offsets = try moof.all("traf/trun").map { try $0.trackRun().dataOffset }
        let firstPayloadByte = mdat.offset + 8 - moof.offset
        #expect(offsets == [Int32(firstPayloadByte), Int32(firstPayloadByte + 14 + 7 + 6)])

        #expect(try FragmentSamples.samples(in: fragment, trackID: 1) == Self.videoFragmentTrack().samples.map(\.data))
        #expect(try FragmentSamples.samples(in: fragment, trackID: 2) == Self.audioFragmentTrack().samples.map(\.data))
        #expect(throws: MP4ReadError.self) { try FragmentSamples.samples(in: fragment, trackID: 3) }
    }

    @Test func segmentStartsWithIDR() throws {
        let samples = try FragmentSamples.samples(in: try Self.fragment(), trackID: 1)
        #expect(try samples.map(FragmentSamples.containsIDR) == [true, false, false])
    }

    @Test func runWithoutCompositionOffsetsIsVersionZero() throws {
        let track = FragmentTrack(trackID: 1, baseDecodeTime: 0, samples: [
            TimedSample(decodeTime: 0, durationTicks: 3000, compositionOffset: 0, isSync: true, data: Self.idrSample),
        ])
        let fragment = MediaFragment.make(sequenceNumber: 1, tracks: [track], descriptions: [try Self.video()])
        let trun = try #require(try MP4Box.parse(fragment).first("moof/traf/trun")).trackRun()
        #expect(trun.version == 0)
        #expect(trun.flags == 0x000701)
        #expect(try FragmentSamples.samples(in: fragment, trackID: 1) == [Self.idrSample])
    }
}
