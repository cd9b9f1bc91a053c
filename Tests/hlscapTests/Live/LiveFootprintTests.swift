import Foundation
import HLSTestSupport
import Testing

/// Memory the process itself decides about, checked on a running live stream.
@Suite struct LiveFootprintTests {
    @Test func transparentHugePagesAreOff() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let hlscap = try ExternalTools.startHlscap(["live"] + LiveStream.testSource + ["--out", stream.path, "--quiet"])
        try #require(LiveStream.waitForSegments(1, in: stream, of: hlscap), "\(hlscap.stderr)")
        // x264 asks for 2 MB pages for its frame buffers; with the process opted out it gets 4 KB pages.
        let status = try String(contentsOfFile: "/proc/\(hlscap.processIdentifier)/status", encoding: .utf8)
        hlscap.send(SIGINT)
        let result = hlscap.finish(timeoutSeconds: LiveStream.stopSeconds)
        #expect(result.exitStatus == 0, "\(result.stderr)")
        try ExternalTools.validateStream(stream)
        let line = status.split(separator: "\n").first { $0.hasPrefix("THP_enabled:") }
        #expect(line.map { $0.hasSuffix("0") } == true, "\(line.map(String.init) ?? "no THP_enabled line")")
    }
}
