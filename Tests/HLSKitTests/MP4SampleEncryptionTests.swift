import HLSTestSupport
import Testing
@testable import HLSKit

/// 'cbcs' (SAMPLE-AES for fMP4): which bytes of a sample are protected, which blocks the 1:9 pattern
/// encrypts, and the boxes that say so, read back with the independent box reader.
@Suite struct MP4SampleEncryptionTests {
    typealias Subsample = SampleEncryption.Subsample

    /// A length-prefixed NAL unit (4-byte length) of `payload` bytes after a header byte.
    static func nalUnit(header: UInt8, payload: Int, fill: UInt8 = 0x5A) -> [UInt8] {
        let length = UInt32(1 + payload)
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), header]
            + [UInt8](repeating: fill, count: payload)
    }

    /// A cipher that leaves a mark: every byte of an encrypted block becomes its block's number in the
    /// sample, XORed with the IV's first byte, so tests see which blocks were encrypted with which IV.
    static func markingCipher(_ bytes: inout [UInt8], _ range: Range<Int>, _ iv: [UInt8]) {
        for index in range { bytes[index] = UInt8(truncatingIfNeeded: index / 16) ^ iv[0] }
    }

    @Test func slicesKeepTheirHeaderClearAndOtherUnitsStayClearWhole() {
        let sps = Self.nalUnit(header: 0x67, payload: 20)
        let pps = Self.nalUnit(header: 0x68, payload: 4)
        let idr = Self.nalUnit(header: 0x65, payload: 500)
        let tinySlice = Self.nalUnit(header: 0x41, payload: 40)
        let sample = sps + pps + idr + tinySlice
        let subsamples = SampleEncryption.subsamples(of: sample, nalLengthSize: 4, isHEVC: false)
        // SPS, PPS and the slice's length, header and first 31 bytes clear; the tiny slice has fewer
        // than 16 bytes past its clear part, so it is clear whole.
        let clearOfSlice = 4 + 1 + SampleEncryption.clearSliceBytes
        #expect(subsamples == [
            Subsample(clearBytes: UInt16(sps.count + pps.count + clearOfSlice), protectedBytes: UInt32(idr.count - clearOfSlice)),
            Subsample(clearBytes: UInt16(tinySlice.count), protectedBytes: 0),
        ])
        #expect(subsamples.reduce(0) { $0 + Int($1.clearBytes) + Int($1.protectedBytes) } == sample.count)
    }

    @Test func hevcSlicesHaveTwoHeaderBytesAndParameterSetsStayClear() {
        let vps = [0, 0, 0, 4, 0x40, 0x01, 0x0C, 0x01] as [UInt8]
        var slice = Self.nalUnit(header: 0x26, payload: 200)  // IDR_W_RADL, type 19
        slice.insert(0x01, at: 5)
        slice[3] += 1
        let subsamples = SampleEncryption.subsamples(of: vps + slice, nalLengthSize: 4, isHEVC: true)
        let clearOfSlice = 4 + 2 + SampleEncryption.clearSliceBytes
        #expect(subsamples == [Subsample(clearBytes: UInt16(vps.count + clearOfSlice),
                                         protectedBytes: UInt32(slice.count - clearOfSlice))])
    }

    @Test func aClearRunLongerThanSixteenBitsIsSplit() {
        let sei = Self.nalUnit(header: 0x06, payload: 70_000)
        let slice = Self.nalUnit(header: 0x41, payload: 100)
        let subsamples = SampleEncryption.subsamples(of: sei + slice, nalLengthSize: 4, isHEVC: false)
        #expect(subsamples.count == 2)
        #expect(subsamples[0] == Subsample(clearBytes: UInt16.max, protectedBytes: 0))
        #expect(Int(subsamples[1].clearBytes) == sei.count - Int(UInt16.max) + 4 + 1 + SampleEncryption.clearSliceBytes)
    }

    @Test func videoEncryptsOneBlockInTenFromTheConstantIVAndLeavesThePartialBlockClear() {
        let clearOfSlice = 4 + 1 + SampleEncryption.clearSliceBytes
        // 21 whole blocks and 5 bytes past the clear part: blocks 0, 10 and 20 are encrypted.
        var sample = Self.nalUnit(header: 0x65, payload: clearOfSlice - 5 + 21 * 16 + 5)
        let original = sample
        let iv = [UInt8](repeating: 0x80, count: 16)
        let subsamples = SampleEncryption.encrypt(&sample, kind: .video(nalLengthSize: 4, isHEVC: false), iv: iv,
                                                  cipher: Self.markingCipher)
        #expect(subsamples == [Subsample(clearBytes: UInt16(clearOfSlice), protectedBytes: UInt32(21 * 16 + 5))])
        var changedBlocks: [Int] = []
        for block in 0..<22 {
            let range = (clearOfSlice + block * 16)..<min(clearOfSlice + (block + 1) * 16, sample.count)
            if sample[range] != original[range] { changedBlocks.append(block) }
        }
        #expect(changedBlocks == [0, 10, 20])
        #expect(sample[..<clearOfSlice] == original[..<clearOfSlice])
        // The first block from the constant IV, the next from the ciphertext before it (the chain).
        #expect(sample[clearOfSlice] == UInt8(clearOfSlice / 16) ^ 0x80)
        let secondBlock = clearOfSlice + 10 * 16
        #expect(sample[secondBlock] == UInt8(secondBlock / 16) ^ sample[clearOfSlice])
    }

    @Test func audioEncryptsEveryWholeBlock() {
        var sample = [UInt8](repeating: 0x11, count: 16 * 3 + 7)
        let subsamples = SampleEncryption.encrypt(&sample, kind: .audio, iv: [UInt8](repeating: 0, count: 16),
                                                  cipher: Self.markingCipher)
        #expect(subsamples.isEmpty)
        #expect(sample[..<48] == ArraySlice((0..<48).map { UInt8($0 / 16) }))
        #expect(sample[48...].allSatisfy { $0 == 0x11 })
    }

    @Test func theInitSectionNamesTheSchemeKeyAndOriginalFormat() throws {
        let key = SampleEncryption.TrackKey(keyID: Array(1...16), constantIV: Array(101...116))
        let bytes = InitSegment.make(tracks: [try MP4MediaFragmentTests.video(), MP4Fixtures.audioTrack()], key: key)
        let boxes = try MP4Box.parse(bytes)
        let moov = try #require(boxes.first { $0.type == "moov" })
        let entries = moov.all("trak/mdia/minf/stbl/stsd").compactMap(\.children.first)
        #expect(entries.map(\.type) == ["encv", "enca"])
        for (entry, original) in zip(entries, ["avc1", "mp4a"]) {
            #expect(try InitSectionInfo.originalFormat(of: entry) == original)
            let schm = try #require(entry.first("sinf/schm"))
            #expect(Array(schm.payload.dropFirst(4).prefix(4)) == Array("cbcs".utf8))
            let tenc = try #require(entry.first("sinf/schi/tenc"))
            #expect(tenc.version == 1)
            let fields = Array(tenc.payload.dropFirst(4))
            #expect(fields[1] == (entry.type == "encv" ? 0x19 : 0x00), "pattern 1:9 for video, none for audio")
            #expect(fields[2] == 1 && fields[3] == 0, "protected, no per-sample IV")
            #expect(Array(fields[4..<20]) == key.keyID)
            #expect(fields[20] == 16 && Array(fields[21..<37]) == key.constantIV)
        }
        #expect(try InitSectionInfo.codecString(entries[0]) == InitSectionInfo.codecString(
            try #require(MP4Box.parse(InitSegment.make(tracks: [try MP4MediaFragmentTests.video()])).first { $0.type == "moov" }?
                .first("trak/mdia/minf/stbl/stsd")?.children.first)))
    }

    @Test func sencHoldsTheSubsamplesAndSaioPointsAtThem() throws {
        var tracks = [MP4MediaFragmentTests.audioFragmentTrack()]
        var video = MP4MediaFragmentTests.videoFragmentTrack()
        video.samples[0].data = Self.nalUnit(header: 0x67, payload: 8) + Self.nalUnit(header: 0x65, payload: 100)
        tracks.insert(video, at: 0)
        let descriptions = [try MP4MediaFragmentTests.video(), MP4Fixtures.audioTrack()]
        let encrypted = SampleEncryption.encrypt(&tracks, descriptions: descriptions, iv: [UInt8](repeating: 7, count: 16),
                                                 cipher: Self.markingCipher)
        let bytes = MediaFragment.make(sequenceNumber: 1, tracks: tracks, descriptions: descriptions, encrypted: encrypted)
        let boxes = try MP4Box.parse(bytes)
        let moof = try #require(boxes.first { $0.type == "moof" })
        let trafs = moof.all("traf")
        #expect(trafs.count == 2)
        for (traf, track) in zip(trafs, tracks) {
            #expect(traf.children.map(\.type) == ["tfhd", "tfdt", "trun", "senc", "saiz", "saio"])
            let senc = try #require(traf.first("senc"))
            var reader = MP4Reader(senc.payload, box: "senc")
            let flags = try reader.uint32() & 0xFF_FFFF
            #expect(try reader.uint32() == UInt32(track.samples.count))
            let saio = try #require(traf.first("saio"))
            var offsets = MP4Reader(saio.payload, box: "saio")
            try offsets.skip(4)
            #expect(try offsets.uint32() == 1)
            // saio counts from the moof's first byte to senc's first entry.
            #expect(Int(try offsets.uint32()) == senc.offset + 16 - moof.offset)
            let saiz = try #require(traf.first("saiz"))
            if track.trackID == 1 {
                #expect(flags == 2)
                #expect(try reader.uint16() == 1, "SPS and slice header clear, then the slice data")
                // Every entry is one subsample, 2 + 6 bytes: a default size and no table.
                #expect(Array(saiz.payload) == [0, 0, 0, 0, 8, 0, 0, 0, 3])
            } else {
                #expect(flags == 0 && reader.remaining == 0, "audio: whole blocks, no entries")
                #expect(Array(saiz.payload) == [0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0])
            }
        }
        // The samples are where trun says: mdat holds the encrypted samples, video first.
        let mdat = try #require(boxes.first { $0.type == "mdat" })
        #expect(Array(mdat.payload) == tracks.flatMap { $0.samples.flatMap(\.data) })
    }
}
