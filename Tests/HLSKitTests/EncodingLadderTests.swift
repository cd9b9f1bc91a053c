import Testing
@testable import HLSKit

@Suite struct EncodingLadderTests {
    /// `source` is the top rung whatever the heights given, and takes the source's height once known.
    @Test func theSourceRungLeadsAndTakesTheSourcesHeight() throws {
        let rungs = try Ladder.normalized([LadderRung(height: 360), .source, LadderRung(height: 480)], sourceHeight: nil)
        #expect(rungs.map(\.description) == ["source", "480p", "360p"])
        let resolved = try Ladder.resolvingSource(rungs, sourceHeight: 1080)
        #expect(resolved.map(\.name) == ["1080p", "480p", "360p"])
        #expect(resolved[0].isSource && !resolved[1].isSource)
    }

    @Test func aRungNotBelowTheSourceOrASecondSourceIsRefused() throws {
        #expect(throws: Ladder.Invalid.self) {
            try Ladder.resolvingSource([.source, LadderRung(height: 720)], sourceHeight: 720)
        }
        #expect(throws: Ladder.Invalid.self) { try Ladder.normalized([.source, .source], sourceHeight: nil) }
        // Without a source rung, nothing changes.
        let plain = [LadderRung(height: 720), LadderRung(height: 360)]
        #expect(try Ladder.resolvingSource(plain, sourceHeight: 480) == plain)
    }
}
