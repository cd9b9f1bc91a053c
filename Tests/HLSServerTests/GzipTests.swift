import Foundation
import Testing
@testable import HLSServer

@Suite struct GzipTests {
    @Test func compressedPlaylistsUnpackWithGzipItself() throws {
        let text = Array(String(repeating: "#EXTINF:2.000,\nseg/000001.m4s\n", count: 50).utf8)
        let packed = try #require(Gzip.compress(text))
        #expect(packed.count < text.count / 5)
        #expect(Array(packed.prefix(2)) == [0x1f, 0x8b])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("gzip-\(UUID().uuidString).gz")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(packed).write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-dc", file.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let unpacked = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(Array(unpacked) == text)
    }
}
