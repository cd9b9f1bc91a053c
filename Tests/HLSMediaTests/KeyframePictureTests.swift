import Foundation
import HLSKit
import HLSTestSupport
import Testing
@testable import HLSMedia

/// `KeyframePicture`: a fragmented MP4's first picture as a JPEG, at its size or scaled to a width.
@Suite struct KeyframePictureTests {
    /// A fragmented MP4 made by ffmpeg, split into its init section (ftyp, moov) and the rest.
    static func fragmented(_ fixtures: MediaFixtures, extra: [String] = []) throws -> (initSection: [UInt8], segment: [UInt8]) {
        let path = try fixtures.makeAudioVideo("fragmented.mp4", extra: ["-movflags", "frag_keyframe+empty_moov+default_base_moof"] + extra)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let boxes = try MP4Box.parse(bytes)
        let initByteCount = boxes.prefix { $0.type == "ftyp" || $0.type == "moov" }.reduce(0) { $0 + $1.size }
        return (Array(bytes[..<initByteCount]), Array(bytes[initByteCount...]))
    }

    static func probe(_ jpeg: [UInt8], in fixtures: MediaFixtures) throws -> String {
        let path = fixtures.path("picture-\(UUID().uuidString).jpg")
        try Data(jpeg).write(to: URL(fileURLWithPath: path))
        let probed = try ExternalTools.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,width,height,pix_fmt",
                                                       "-of", "csv=p=0", path])
        return probed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func theFirstPictureAtItsSizeOrScaledToAWidth() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let (initSection, segment) = try Self.fragmented(fixtures)
        let full = try KeyframePicture.jpeg(initSection: initSection, segment: segment)
        #expect(Array(full.prefix(3)) == [0xFF, 0xD8, 0xFF], "a JPEG's start of image")
        #expect(try Self.probe(full, in: fixtures) == "mjpeg,160,120,yuvj420p")
        let small = try KeyframePicture.jpeg(initSection: initSection, segment: segment, width: 80)
        #expect(try Self.probe(small, in: fixtures) == "mjpeg,80,60,yuvj420p")
    }

    @Test func whatIsNotASegmentIsSaidSo() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let unreadable = #expect(throws: KeyframePictureError.self) {
            try KeyframePicture.jpeg(initSection: Array("not an mp4".utf8), segment: [])
        }
        #expect(unreadable?.description.hasPrefix("the init section and segment cannot be read as MP4: ") == true,
                "\(String(describing: unreadable))")
        let (initSection, _) = try Self.fragmented(fixtures)
        #expect(throws: KeyframePictureError.noPicture) {
            try KeyframePicture.jpeg(initSection: initSection, segment: [])
        }
        let audio = try fixtures.makeAudioOnly("audio.mp4")
        let audioBytes = Array(try Data(contentsOf: URL(fileURLWithPath: audio)))
        #expect(throws: KeyframePictureError.noVideo) {
            try KeyframePicture.jpeg(initSection: audioBytes, segment: [])
        }
    }
}
