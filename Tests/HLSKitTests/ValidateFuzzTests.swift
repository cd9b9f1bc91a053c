import Foundation
import HLSTestSupport
import Testing
@testable import HLSKit

/// The validator on many seeded mutations of a valid stream (Fixtures/validate/base): it must
/// finish every one without crashing, and report damaged segments as errors.
@Suite struct ValidateFuzzTests {
    /// The base stream in memory, one file replaceable.
    struct MemoryLoader: ResourceLoader {
        var files: [String: [UInt8]]

        func load(_ url: URL) throws(LoadError) -> [UInt8] {
            guard let bytes = files[url.path] else { throw .notFound("\(url.path) does not exist") }
            return bytes
        }
    }

    static let base = ExternalTools.fixturesDirectory.appendingPathComponent("validate/base")

    static func baseFiles() throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in ["master.m3u8", "playlist.m3u8", "iframes.m3u8", "init.mp4", "seg/000001.m4s", "seg/000002.m4s",
                     "seg/000003.m4s"] {
            files["/stream/" + name] = [UInt8](try Data(contentsOf: base.appendingPathComponent(name)))
        }
        return files
    }

    static func mutate(_ bytes: [UInt8], using random: inout SeededGenerator) -> [UInt8] {
        var bytes = bytes
        switch Int.random(in: 0..<6, using: &random) {
        case 0:  // flip bytes, mostly in the box headers near the start
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                let index = Int.random(in: 0..<min(bytes.count, 400), using: &random)
                bytes[index] = UInt8.random(in: 0...255, using: &random)
            }
        case 1:  // truncate
            bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
        case 2:  // insert garbage
            let index = Int.random(in: 0...bytes.count, using: &random)
            bytes.insert(contentsOf: (0..<Int.random(in: 1...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) },
                         at: index)
        case 3:  // a size field to an extreme
            let index = Int.random(in: 0..<max(1, min(bytes.count, 400) - 4), using: &random)
            let extreme: [[UInt8]] = [[0xFF, 0xFF, 0xFF, 0xFF], [0, 0, 0, 1], [0, 0, 0, 0], [0x7F, 0xFF, 0xFF, 0xF0]]
            bytes.replaceSubrange(index..<min(bytes.count, index + 4), with: extreme.randomElement(using: &random)!)
        case 4:  // delete a span
            let start = Int.random(in: 0..<bytes.count, using: &random)
            bytes.removeSubrange(start..<min(bytes.count, start + Int.random(in: 1...200, using: &random)))
        default:  // duplicate a span
            let start = Int.random(in: 0..<bytes.count, using: &random)
            bytes.insert(contentsOf: bytes[start..<min(bytes.count, start + Int.random(in: 1...200, using: &random))], at: start)
        }
        return bytes
    }

    func validate(_ files: [String: [UInt8]], target: String = "/stream/master.m3u8") -> ValidationReport? {
        try? StreamValidator(loader: MemoryLoader(files: files)).validate(URL(fileURLWithPath: target))
    }

    @Test func theUnmutatedStreamIsValid() throws {
        let report = try #require(validate(try Self.baseFiles()))
        #expect(report.findings.isEmpty, "\(report.text)")
    }

    @Test(.timeLimit(.minutes(2)), arguments: 0..<8)
    func mutatedPlaylistsNeverCrashTheValidator(seed: UInt64) throws {
        let files = try Self.baseFiles()
        var random = SeededGenerator(state: seed)
        var reportsWithErrors = 0
        for _ in 0..<60 {
            var mutated = files
            let name = ["/stream/master.m3u8", "/stream/playlist.m3u8", "/stream/iframes.m3u8"].randomElement(using: &random)!
            mutated[name] = Self.mutate(files[name]!, using: &random)
            let report = try #require(validate(mutated))
            reportsWithErrors += report.errors.isEmpty ? 0 : 1
        }
        #expect(reportsWithErrors > 20)
    }

    @Test(.timeLimit(.minutes(2)), arguments: 0..<8)
    func mutatedSegmentsAndInitSectionsNeverCrashTheValidator(seed: UInt64) throws {
        let files = try Self.baseFiles()
        var random = SeededGenerator(state: 1000 + seed)
        for _ in 0..<60 {
            var mutated = files
            let name = ["/stream/init.mp4", "/stream/seg/000001.m4s", "/stream/seg/000002.m4s",
                        "/stream/seg/000003.m4s"].randomElement(using: &random)!
            mutated[name] = Self.mutate(files[name]!, using: &random)
            _ = try #require(validate(mutated))
        }
    }

    @Test func segmentsEncryptedWholeAreOnlyCheckedToExist() throws {
        var files = try Self.baseFiles()
        let playlist = String(decoding: files["/stream/playlist.m3u8"]!, as: UTF8.self)
        files["/stream/playlist.m3u8"] = Array(playlist.replacingOccurrences(
            of: "#EXT-X-MAP", with: "#EXT-X-KEY:METHOD=AES-128,URI=\"key.bin\"\n#EXT-X-MAP").utf8)
        files["/stream/seg/000002.m4s"] = [UInt8](repeating: 0xA5, count: 4096)
        let report = try #require(validate(files, target: "/stream/playlist.m3u8"))
        #expect(report.errors.isEmpty, "\(report.text)")
        files["/stream/seg/000003.m4s"] = nil
        let missing = try #require(validate(files, target: "/stream/playlist.m3u8"))
        #expect(missing.errors.map(\.rule) == ["uri"])
    }

    @Test func anIFrameRangeMustHoldItsWholePicture() throws {
        var files = try Self.baseFiles()
        let playlist = String(decoding: files["/stream/iframes.m3u8"]!, as: UTF8.self)
        let line = try #require(playlist.split(separator: "\n").first { $0.hasPrefix("#EXT-X-BYTERANGE:") })
        let range = line.dropFirst("#EXT-X-BYTERANGE:".count).split(separator: "@").compactMap { Int($0) }
        files["/stream/iframes.m3u8"] = Array(playlist.replacingOccurrences(
            of: String(line), with: "#EXT-X-BYTERANGE:\(range[0] - 10)@\(range[1])").utf8)
        let report = try #require(validate(files))
        #expect(report.errors.map(\.rule) == ["byterange"], "\(report.text)")
        #expect(report.errors.first?.message.hasPrefix("the I-frame range ends at byte \(range[0] - 10 + range[1]), before") == true)
    }

    /// An I-frame entry decodes to one picture: a range that runs on into the next picture is an error.
    @Test func anIFrameRangeMustHoldOnlyItsPicture() throws {
        var files = try Self.baseFiles()
        let playlist = String(decoding: files["/stream/iframes.m3u8"]!, as: UTF8.self)
        let line = try #require(playlist.split(separator: "\n").first { $0.hasPrefix("#EXT-X-BYTERANGE:") })
        let range = line.dropFirst("#EXT-X-BYTERANGE:".count).split(separator: "@").compactMap { Int($0) }
        let report = try #require(validate(files))
        #expect(report.errors.isEmpty, "\(report.text)")
        files["/stream/iframes.m3u8"] = Array(playlist.replacingOccurrences(
            of: String(line), with: "#EXT-X-BYTERANGE:\(range[0] + 10)@\(range[1])").utf8)
        let longer = try #require(validate(files))
        #expect(longer.errors.map(\.rule) == ["byterange"], "\(longer.text)")
        #expect(longer.errors.first?.message.hasPrefix("the I-frame range runs to byte \(range[0] + 10 + range[1]), "
                                                        + "through more pictures") == true)
    }

    @Test(arguments: 0..<40)
    func aTruncatedSegmentIsAlwaysAnError(seed: UInt64) throws {
        var files = try Self.baseFiles()
        var random = SeededGenerator(state: 5000 + seed)
        let name = "/stream/seg/00000\(Int.random(in: 1...3, using: &random)).m4s"
        files[name] = Array(files[name]!.prefix(Int.random(in: 0..<files[name]!.count, using: &random)))
        let report = try #require(validate(files, target: "/stream/playlist.m3u8"))
        #expect(report.errors.contains { $0.rule == "segment-boxes" || $0.rule == "extinf-duration" }, "\(report.text)")
    }
}
