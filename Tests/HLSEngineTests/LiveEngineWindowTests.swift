import Foundation
import HLSBase
import HLSKit
import HLSMedia
import HLSOutput
import Testing
@testable import HLSEngine

/// A sliding window on the engine's clock: what leaves it is deleted after its retention time.
@Suite(.serialized) struct LiveEngineWindowTests {
    /// The window holds the duration asked for, in segments: 8 s of 2 s segments is four, and 20 s of
    /// stream leave segments 7 to 10 in it.
    @Test func theWindowHoldsTheDurationAsked() throws {
        let plan = try LiveCase("--dvr 8s") { $0.dvrSeconds = 8; $0.segmentMilliseconds = 2000 }.request.plan()
        #expect(plan.configuration.windowSize == 4)
        var run = EngineRun(store: MemoryStore(), seconds: 20, width: 320, height: 180)
        run.configuration.windowSize = plan.configuration.windowSize
        let source = try ClockedSource(run.test)
        let outcome = try run.makeEngine(clocked: source).runInVirtualTime(source.clock, messages: run.messages)
        #expect(outcome.failure == nil)
        let playlist = try run.playlist()
        #expect(playlist.segments.count == 4 && playlist.mediaSequence == 7, "\(playlist.render())")
    }
}
