import Foundation
import HLSTestSupport
import Synchronization
import Testing
@testable import HLSKit
@testable import HLSOutput

/// The blocking reload of a Low-Latency playlist: the monitor asks for the part after the last one
/// (`_HLS_msn` and `_HLS_part`) and expects it in the answer.
@Suite struct ValidateLiveMonitorPartTests {
    /// Answers `playlist.m3u8` with one playlist and any blocking request with another; records the requests.
    final class BlockingLoader: ResourceLoader {
        let plain: String
        let blocking: String
        private let state = Mutex((clock: 0.0, requested: [String]()))

        init(plain: String, blocking: String) {
            self.plain = plain
            self.blocking = blocking
        }

        var now: Double { state.withLock { $0.clock } }
        var requested: [String] { state.withLock { $0.requested } }
        func sleep(_ seconds: Double) { state.withLock { $0.clock += seconds } }

        func load(_ url: URL) throws(LoadError) -> [UInt8] {
            state.withLock { $0.requested.append(url.query ?? "") }
            return Array((url.query?.contains("_HLS_msn") == true ? blocking : plain).utf8)
        }
    }

    /// Segments 1 and 2 of 1 s, and `open` parts of 0.5 s of segment 3.
    static func playlist(open: Int) -> String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:6", "#EXT-X-TARGETDURATION:1", "#EXT-X-MEDIA-SEQUENCE:1",
                     "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.5", "#EXT-X-PART-INF:PART-TARGET=0.5",
                     "#EXTINF:1.000,", "seg/000001.m4s", "#EXTINF:1.000,", "seg/000002.m4s"]
        lines += (0..<open).map { "#EXT-X-PART:DURATION=0.500,URI=\"part/000003.\($0).m4s\"" }
        lines.append("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"part/000003.\(open).m4s\"")
        return lines.joined(separator: "\n") + "\n"
    }

    func monitor(_ loader: BlockingLoader) -> [Finding] {
        let url = URL(string: "http://origin.invalid/live/playlist.m3u8")!
        return LiveMonitor(loader: loader, url: url, durationSeconds: 0.5, file: "playlist.m3u8",
                           now: { loader.now }, sleep: { loader.sleep($0) }).run().findings
    }

    @Test func theNextPartIsAskedForAndAnAnswerHoldingItPasses() {
        let loader = BlockingLoader(plain: Self.playlist(open: 1), blocking: Self.playlist(open: 2))
        let findings = monitor(loader)
        #expect(loader.requested.contains("_HLS_msn=3&_HLS_part=1"), "\(loader.requested)")
        #expect(!findings.contains { $0.rule == "live-blocking-reload" }, "\(findings.map(\.message))")
    }

    @Test func anAnswerWithoutThePartBreaksTheRule() {
        let loader = BlockingLoader(plain: Self.playlist(open: 1), blocking: Self.playlist(open: 1))
        let findings = monitor(loader).filter { $0.rule == "live-blocking-reload" }
        #expect(findings.map(\.message) == [
            "a request for _HLS_msn=3&_HLS_part=1 was answered after 0.0 s with a playlist ending at 2 and 1 part(s) after it"])
    }
}
