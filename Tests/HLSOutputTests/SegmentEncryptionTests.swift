import Foundation
import Glibc
import HLSCrypto
import Testing
@testable import HLSKit
@testable import HLSOutput

/// AES-128 whole-segment encryption: the writer stores ciphertext that decrypts, with the segment's
/// sequence number as IV, to exactly what a clear writer stores; keys rotate, are listed where they
/// change, stay clear of init sections, and are kept private.
@Suite struct SegmentEncryptionTests {
    let writers = StreamWriterTests()

    @Test func cbcWithPKCS7PaddingAndTheSequenceNumberAsIV() throws {
        // NIST SP 800-38A F.2.1, CBC-AES128.Encrypt, first block (PKCS#7 then adds a block of padding).
        let key: [UInt8] = [0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c]
        let iv = Array(0..<16).map { UInt8($0) }
        let plain: [UInt8] = [0x6b, 0xc1, 0xbe, 0xe2, 0x2e, 0x40, 0x9f, 0x96, 0xe9, 0x3d, 0x7e, 0x11, 0x73, 0x93, 0x17, 0x2a]
        let sealed = SegmentEncryption.encrypt(plain, key: key, iv: iv)
        #expect(sealed.count == 32)
        #expect(Digest.hex(Array(sealed.prefix(16))) == "7649abac8119b246cee98e9b12e9197d")
        #expect(SegmentEncryption.decrypt(sealed, key: key, iv: iv) == plain)
        #expect(SegmentEncryption.decrypt(sealed, key: Array(key.reversed()), iv: iv) != plain)
        #expect(SegmentEncryption.iv(sequenceNumber: 0x0102) == Array(repeating: 0, count: 14) + [1, 2])
    }

    /// `--encrypt cbcs` through the writer: the init section names the key's ID and IV, the key is
    /// stored once, samples are encrypted with subsamples in senc, and the playlist says SAMPLE-AES
    /// with the IV and the identity key format, without a METHOD=NONE before the map.
    @Test func sampleAESEncryptsSamplesAndNamesTheKeyInTheInitSection() throws {
        let clearStore = MemoryStore(), store = MemoryStore(), keys = MemoryStore()
        let policy = StreamWriter.PlaylistPolicy.live(targetDurationSeconds: 2, windowSize: 0)
        var clear = StreamWriter(store: clearStore, layout: .single(trackCount: 1), policy: policy)
        var writer = StreamWriter(store: store, layout: .single(trackCount: 1), policy: policy)
        let encryption = SegmentEncryption(keyStore: keys, rotation: 0, method: .sampleAES)
        writer.encryption = encryption
        _ = try clear.beginSection(tracks: [writers.audioTrack()])
        _ = try writer.beginSection(tracks: [writers.audioTrack()])
        for number in 1...3 {
            // 41-byte frames: two whole blocks encrypted, nine bytes clear.
            var segment = writers.segment(number)
            segment.tracks[0].samples = segment.tracks[0].samples.map { sample in
                var sample = sample
                sample.data = [0x21] + [UInt8](repeating: sample.data[1], count: 40)
                return sample
            }
            _ = try clear.write(segment)
            _ = try writer.write(segment)
        }
        let trackKey = try encryption.sampleKey()
        #expect(try keys.list("").count == 1)
        let initBytes = try store.read(StreamLayout.initName)
        #expect(initBytes != (try clearStore.read(StreamLayout.initName)))
        let entry = try #require(MP4Box.parse(initBytes).first { $0.type == "moov" }?.first("trak/mdia/minf/stbl/stsd")?.children.first)
        let tenc = try #require(entry.first("sinf/schi/tenc"))
        #expect(Array(tenc.payload.suffix(16)) == trackKey.constantIV)
        let segment = try store.read(StreamLayout.segmentPath(1)), clearSegment = try clearStore.read(StreamLayout.segmentPath(1))
        #expect(try MP4Box.parse(segment).first { $0.type == "moof" }?.first("traf/senc") != nil)
        let mdat = try #require(MP4Box.parse(segment).first { $0.type == "mdat" }).payload
        let clearMdat = try #require(MP4Box.parse(clearSegment).first { $0.type == "mdat" }).payload
        #expect(mdat.count == clearMdat.count)
        #expect(Array(mdat.prefix(32)) != Array(clearMdat.prefix(32)))
        #expect(Array(mdat.prefix(41).suffix(9)) == Array(clearMdat.prefix(41).suffix(9)))
        let text = String(decoding: try store.read(StreamLayout.playlistName), as: UTF8.self)
        #expect(text.contains("#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"keys/\(encryption.keyName(for: 1))\",IV=0x\(Digest.hex(trackKey.constantIV)),KEYFORMAT=\"identity\""))
        #expect(!text.contains("METHOD=NONE"))
        #expect(try MediaPlaylist.parse(text).segments.allSatisfy { $0.key?.method == .sampleAES })
    }

    @Test func theWriterEncryptsEverySegmentAndListsEachKeyWhereItChanges() throws {
        let clearStore = MemoryStore(), store = MemoryStore(), keys = MemoryStore()
        var clear = try writers.liveWriter(clearStore, windowSize: 0)
        var writer = try writers.liveWriter(store, windowSize: 0)
        let encryption = SegmentEncryption(keyStore: keys, rotation: 2)
        writer.encryption = encryption
        for number in 1...5 {
            _ = try clear.write(writers.segment(number))
            _ = try writer.write(writers.segment(number))
        }
        try clear.finish()
        try writer.finish()
        let text = String(decoding: try store.read("playlist.m3u8"), as: UTF8.self)
        let names = (1...5).map { encryption.keyName(for: $0) }
        #expect(Set(names).count == 3, "a new key every two segments: \(names)")
        let keyLines = text.split(separator: "\n").filter { $0.hasPrefix("#EXT-X-KEY") }.map(String.init)
        #expect(keyLines == [names[0], names[2], names[4]].map { "#EXT-X-KEY:METHOD=AES-128,URI=\"keys/\($0)\"" })
        // The init section comes before any key: it is stored clear.
        let lines = text.split(separator: "\n")
        #expect(try #require(lines.firstIndex { $0.hasPrefix("#EXT-X-MAP") }) < (try #require(lines.firstIndex { $0.hasPrefix("#EXT-X-KEY") })))
        #expect(try store.read("init.mp4") == (try clearStore.read("init.mp4")))
        for number in 1...5 {
            let path = StreamLayout.segmentPath(number)
            let key = try keys.read(names[number - 1])
            #expect(key.count == 16)
            #expect(try store.read(path) != (try clearStore.read(path)))
            #expect(SegmentEncryption.decrypt(try store.read(path), key: key, iv: SegmentEncryption.iv(sequenceNumber: number))
                    == (try clearStore.read(path)))
        }
        // The playlist reads back with its keys, and renders as it was written.
        let parsed = try MediaPlaylist.parse(text)
        #expect(parsed.segments.map { $0.key?.uri } == names.map { "keys/\($0)" })
        #expect(parsed.render() == text)
        // No I-frame playlist: its byte ranges cannot be decrypted apart from their segment.
        #expect(try !store.exists("iframes.m3u8"))
    }

    @Test func aNewInitSectionIsListedWithNoKeyInForce() {
        var first = MediaPlaylist.Segment(uri: "seg/000001.m4s", durationSeconds: 2, mapURI: "init.mp4")
        first.key = .init(uri: "keys/a-0.key")
        var second = MediaPlaylist.Segment(uri: "seg/000002.m4s", durationSeconds: 2, mapURI: "init-2.mp4", discontinuity: true)
        second.key = .init(uri: "keys/a-0.key")
        let text = MediaPlaylist(targetDurationSeconds: 2, mediaSequence: 1, segments: [first, second], endList: true).render()
        #expect(text.contains("""
            #EXT-X-DISCONTINUITY
            #EXT-X-KEY:METHOD=NONE
            #EXT-X-MAP:URI="init-2.mp4"
            #EXT-X-KEY:METHOD=AES-128,URI="keys/a-0.key"
            #EXTINF:2.000,
            seg/000002.m4s
            """), "\(text)")
    }

    @Test func keysAreNamedRelativeToEachRenditionOrByTheGivenPrefix() throws {
        let relative = SegmentEncryption(keyStore: MemoryStore(), rotation: 0)
        #expect(try relative.encrypt([1], sequenceNumber: 7, directory: "720p").key.uri == "../keys/" + relative.keyName(for: 7))
        #expect(try relative.encrypt([1], sequenceNumber: 8, directory: "audio/en").key.uri == "../../keys/" + relative.keyName(for: 8))
        #expect(relative.keyName(for: 1) == relative.keyName(for: 1000), "one key for the run")
        let prefixed = SegmentEncryption(keyStore: MemoryStore(), rotation: 0, keyURIPrefix: "https://keys.example/cam/")
        #expect(try prefixed.encrypt([1], sequenceNumber: 1, directory: "720p").key.uri
                == "https://keys.example/cam/" + prefixed.keyName(for: 1))
        #expect(SegmentEncryption(keyStore: MemoryStore(), rotation: 0).keyName(for: 1) != relative.keyName(for: 1),
                "another run (a resume) never reuses a key's name")
    }

    @Test func keysOnDiskAreTheOwnersAlone() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        let encryption = SegmentEncryption(keyStore: try DirectoryStore(root: root, isPrivate: true), rotation: 0)
        _ = try encryption.encrypt([1, 2, 3], sequenceNumber: 1, directory: "")
        var status = stat()
        #expect(stat(root, &status) == 0 && status.st_mode & 0o777 == 0o700)
        #expect(stat(root + "/" + encryption.keyName(for: 1), &status) == 0 && status.st_mode & 0o777 == 0o600)
    }
}
