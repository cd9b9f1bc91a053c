import Foundation
import HLSTestSupport
import Testing

/// Seeded mutations of every media fixture (bit flips, truncation, zeroed ranges, corrupted box sizes,
/// damaged avcC/hvcC/SPS and esds, sample table entries, picture sizes, moved chunks) through `hlscap file` in automatic, copy and transcode
/// mode: no crash, no run past 30 s, exit 0 or 65 only, every exit-0 stream passes `hlscap validate`,
/// and a refused input leaves no playlist.
@Suite(.serialized) struct HostileFileTests {
    /// `make fuzz` sets 2,000 cases; the test suite runs the first 78 (each fixture in each mode twice).
    static let cases = Int(ProcessInfo.processInfo.environment["HLSCAP_FUZZ_CASES"] ?? "") ?? 78
    static let seed = UInt64(ProcessInfo.processInfo.environment["HLSCAP_FUZZ_SEED"] ?? "") ?? 1
    /// Replays one case by its number (the mutations before it are still drawn, so it gets the same bytes).
    static let onlyCase = Int(ProcessInfo.processInfo.environment["HLSCAP_FUZZ_CASE"] ?? "")
    static let timeoutSeconds = 30.0
    static let fixtures = ["h264-aac.mp4", "h264-bframes-aac.mp4", "aac-priming-editlist.mp4", "h264-aac.mkv",
                           "h264-aac.ts", "video-only.mp4", "audio-only.m4a", "long-gop.mp4", "mpeg4-mp3.avi",
                           "flash-beep.mp4", "hevc-portrait.mov", "hevc-hlg.ts", "hevc-pq.mp4"]
    static let modes: [[String]] = [[], ["--copy"], ["--transcode"]]

    enum Mutation: String, CaseIterable {
        case bitFlips, truncation, zeroedRange, boxSize, codecConfiguration, audioConfiguration, sampleTable,
             pictureSize, movedChunk
    }

    @Test func mutatedFixturesExitCleanlyAndEveryStreamValidates() throws {
        let directory = try PackagedStream.temporaryDirectory()
        let originals = try Self.fixtures.map {
            [UInt8](try Data(contentsOf: ExternalTools.fixturesDirectory.appendingPathComponent($0)))
        }
        var random = SeededGenerator(state: Self.seed)
        var exits: [Int32: Int] = [:]
        var failures: [String] = []
        var slowest = 0.0
        for index in 0..<Self.cases {
            let fixture = index % Self.fixtures.count
            let mode = Self.modes[(index / Self.fixtures.count) % Self.modes.count]
            let mutation = Mutation.allCases.randomElement(using: &random)!
            let mutated = Self.mutate(originals[fixture], mutation, using: &random)
            let name = Self.fixtures[fixture]
            if let only = Self.onlyCase, only != index { continue }
            let input = directory.appendingPathComponent("case-\(index)-\(name)")
            try Data(mutated).write(to: input)
            let output = directory.appendingPathComponent("out-\(index)")
            let started = Date()
            let result = try ExternalTools.runHlscap(["file", input.path, "--out", output.path, "--quiet"] + mode,
                                                     timeoutSeconds: Self.timeoutSeconds)
            slowest = max(slowest, Date().timeIntervalSince(started))
            exits[result.exitStatus, default: 0] += 1
            let label = "case \(index) (\(name), \(mutation.rawValue), \(mode.first ?? "automatic"))"
            var problems: [String] = []
            if result.timedOut {
                problems.append("ran past \(Int(Self.timeoutSeconds)) s")
            } else if result.exitStatus == 0 {
                let validation = try ExternalTools.runHlscap(["validate", output.path])
                if !validation.succeeded { problems.append("hlscap validate: \(validation.stdout)\(validation.stderr)") }
            } else if result.exitStatus == 65 {
                if !result.stderr.contains(input.path) { problems.append("the message does not name the file: \(result.stderr)") }
                if FileManager.default.fileExists(atPath: output.appendingPathComponent("playlist.m3u8").path) {
                    problems.append("a refused input left a playlist")
                }
            } else {
                problems.append("exit \(result.exitStatus): \(result.stderr)")
            }
            if problems.isEmpty {
                try? FileManager.default.removeItem(at: input)
            } else {
                failures.append("\(label), kept as \(input.path): " + problems.joined(separator: "; "))
            }
            try? FileManager.default.removeItem(at: output)
        }
        let counts = exits.sorted { $0.key < $1.key }.map { "exit \($0.key): \($0.value)" }.joined(separator: ", ")
        let ran = Self.onlyCase == nil ? Self.cases : 1
        print("hostile files: \(ran - failures.count) of \(ran) cases clean (\(counts)); "
              + "slowest run \(String(format: "%.1f", slowest)) s")
        if failures.isEmpty { try? FileManager.default.removeItem(at: directory) }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    // MARK: mutations

    static func mutate(_ original: [UInt8], _ mutation: Mutation, using random: inout SeededGenerator) -> [UInt8] {
        var bytes = original
        let count = bytes.count
        switch mutation {
        case .bitFlips:
            for _ in 0..<Int.random(in: 1...16, using: &random) {
                bytes[Int.random(in: 0..<count, using: &random)] ^= 1 << UInt8.random(in: 0...7, using: &random)
            }
        case .truncation:
            bytes.removeLast(Int.random(in: 1..<count, using: &random))
        case .zeroedRange:
            let length = Int.random(in: 1...4096, using: &random)
            let start = Int.random(in: 0..<count, using: &random)
            bytes.replaceSubrange(start..<min(count, start + length), with: repeatElement(0, count: min(count, start + length) - start))
        case .boxSize:
            let boxes = boxOffsets(bytes)
            guard let box = boxes.randomElement(using: &random) else { return mutate(original, .bitFlips, using: &random) }
            let size = bytes[box..<box + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let damaged: UInt32 = switch Int.random(in: 0..<5, using: &random) {
            case 0: 0
            case 1: 1
            case 2: UInt32.random(in: 0...15, using: &random)
            case 3: size &+ UInt32.random(in: 1...64, using: &random)
            default: UInt32.random(in: 0...UInt32.max, using: &random)
            }
            bytes.replaceSubrange(box..<box + 4, with: withUnsafeBytes(of: damaged.bigEndian, Array.init))
        case .codecConfiguration:
            // The avcC/hvcC box of an MP4, or an in-band SPS (NAL type 7, HEVC 33) after a start code.
            let places = find(Array("avcC".utf8), in: bytes) + find(Array("hvcC".utf8), in: bytes)
                + find([0, 0, 1, 0x67], in: bytes) + find([0, 0, 1, 0x42], in: bytes)
            damage(&bytes, after: places, using: &random)
        case .audioConfiguration:
            // The esds box of an MP4 (its AudioSpecificConfig), or an ADTS header.
            let places = find(Array("esds".utf8), in: bytes) + find([0xFF, 0xF1], in: bytes)
            damage(&bytes, after: places, using: &random)
        case .sampleTable:
            // One entry of a timing, size or offset table: zero, the largest value, a negative
            // composition offset, or anything.
            let tables = ["stts", "ctts", "stsz", "stco", "stss", "stsc", "elst"].flatMap { find(Array($0.utf8), in: bytes) }
            guard let table = tables.randomElement(using: &random) else { return mutate(original, .bitFlips, using: &random) }
            let entry = table + 12 + 4 * Int.random(in: 0..<16, using: &random)
            guard entry + 4 <= count else { return mutate(original, .bitFlips, using: &random) }
            let value: UInt32 = [0, UInt32.max, 0xFFFF_C000, 0x8000_0000, UInt32.random(in: 0...UInt32.max, using: &random)]
                .randomElement(using: &random)!
            bytes.replaceSubrange(entry..<entry + 4, with: withUnsafeBytes(of: value.bigEndian, Array.init))
        case .pictureSize:
            // The width or height of a visual sample entry or a track header: zero, one, or huge.
            // Offsets from the FourCC: 16-bit width and height of a sample entry, integer parts of a
            // version 0 tkhd's 16.16 width and height.
            let sampleEntries: [Int] = ["avc1", "hvc1", "hev1"].flatMap { find(Array($0.utf8), in: bytes) }
            let trackHeaders: [Int] = find(Array("tkhd".utf8), in: bytes)
            let fields: [Int] = sampleEntries.flatMap { [$0 + 28, $0 + 30] } + trackHeaders.flatMap { [$0 + 80, $0 + 84] }
            guard let field = fields.randomElement(using: &random), field + 2 <= count else {
                return mutate(original, .codecConfiguration, using: &random)
            }
            let values: [UInt16] = [0, 1, 0xFFFF, UInt16.random(in: 0...UInt16.max, using: &random)]
            let value = values.randomElement(using: &random)!
            bytes.replaceSubrange(field..<field + 2, with: withUnsafeBytes(of: value.bigEndian, Array.init))
        case .movedChunk:
            let length = Int.random(in: 16...min(8192, count / 2), using: &random)
            let from = Int.random(in: 0...(count - length), using: &random)
            let chunk = Array(bytes[from..<from + length])
            bytes.removeSubrange(from..<from + length)
            bytes.insert(contentsOf: chunk, at: Int.random(in: 0...bytes.count, using: &random))
        }
        return bytes
    }

    /// Overwrites 1 to 4 bytes within the 40 after one of `places`; bit flips when there is none.
    static func damage(_ bytes: inout [UInt8], after places: [Int], using random: inout SeededGenerator) {
        guard let place = places.randomElement(using: &random) else {
            bytes = mutate(bytes, .bitFlips, using: &random)
            return
        }
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let offset = place + 4 + Int.random(in: 0..<40, using: &random)
            if offset < bytes.count { bytes[offset] = UInt8.random(in: 0...255, using: &random) }
        }
    }

    static func find(_ pattern: [UInt8], in bytes: [UInt8]) -> [Int] {
        guard bytes.count >= pattern.count else { return [] }
        return (0...(bytes.count - pattern.count)).filter { start in
            bytes[start] == pattern[0] && bytes[start..<start + pattern.count].elementsEqual(pattern)
        }
    }

    /// Offsets of the size fields of the ISO BMFF boxes, walking into the containers that hold the
    /// sample tables and codec configurations; empty for other formats.
    static func boxOffsets(_ bytes: [UInt8]) -> [Int] {
        let containers: Set<String> = ["moov", "trak", "mdia", "minf", "stbl", "edts", "dinf", "udta", "mvex"]
        // Visual and audio sample entries hold their configuration boxes after fixed fields.
        let sampleEntryHeaderBytes = ["avc1": 78, "hvc1": 78, "hev1": 78, "mp4a": 28]
        var offsets: [Int] = []
        func walk(_ range: Range<Int>) {
            var offset = range.lowerBound
            while offset + 8 <= range.upperBound {
                let size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
                let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
                guard size >= 8, offset + size <= range.upperBound,
                      type.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else { return }
                offsets.append(offset)
                if containers.contains(type) { walk(offset + 8..<offset + size) }
                if type == "stsd" { walk(offset + 16..<offset + size) }
                if let header = sampleEntryHeaderBytes[type], offset + 8 + header < offset + size {
                    walk(offset + 8 + header..<offset + size)
                }
                offset += size
            }
        }
        walk(0..<bytes.count)
        return offsets
    }
}
