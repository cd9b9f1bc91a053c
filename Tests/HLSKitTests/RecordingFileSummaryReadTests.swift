import Testing
@testable import HLSKit

/// A recording file read box by box: a file cut short or damaged gives what could be read and why the
/// rest could not, never a trap.
@Suite struct RecordingFileSummaryReadTests {
    static func read(_ bytes: [UInt8]) -> (RecordingFileSummary, String?) {
        RecordingFileSummary.read(byteCount: bytes.count) { offset, count in
            Array(bytes[offset..<min(bytes.count, offset + count)])
        }
    }

    static let fileType: [UInt8] = [0, 0, 0, 16] + Array("ftypisom".utf8) + [0, 0, 0, 0]

    @Test func aWholeFileIsReadToItsEnd() {
        let (summary, problem) = Self.read(Self.fileType + [0, 0, 0, 8] + Array("free".utf8))
        #expect(problem == nil)
        #expect(summary.byteCount == 24)
    }

    /// A 64-bit box size beyond Int.max, and one that reaches Int.max from past the first box: both
    /// trapped, converting or adding (found by fuzz-recording-summary).
    @Test(arguments: [[UInt8](repeating: 0xFF, count: 8), [0x7F] + [UInt8](repeating: 0xFF, count: 7)])
    func aBoxSizeBeyondTheFileIsACutShortFile(largeSize: [UInt8]) {
        let (summary, problem) = Self.read(Self.fileType + [0, 0, 0, 1] + Array("mdat".utf8) + largeSize)
        #expect(problem == "its box at byte 16 runs past the end (a write cut short)")
        #expect(summary.byteCount == 16)
    }
}
