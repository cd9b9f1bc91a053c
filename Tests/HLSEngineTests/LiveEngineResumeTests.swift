import Foundation
import HLSKit
import HLSMedia
import HLSOutput
import HLSTestSupport
import Testing
@testable import HLSEngine

/// A store that already holds a stream: refused unless resumed or replaced; a resumed stream goes on
/// numbering after a discontinuity. Two engines, one after the other, on the same folder, out of real time.
@Suite(.serialized) struct LiveEngineResumeTests {
    /// Three segments of 2, 2 and 1 s.
    static let shortRunSeconds: Int64 = 5

    @Test func aStoreHoldingAStreamIsRefusedUnlessResumedOrReplaced() throws {
        let folder = try StreamFolder()
        let first = EngineRun(store: folder.store, seconds: Self.shortRunSeconds, width: 640, height: 360)
        #expect(try first.makeEngine().run().failure == nil)
        let before = folder.files
        let playlistBefore = try folder.store.read(StreamLayout.playlistName)

        let refused = EngineRun(store: folder.store, seconds: Self.shortRunSeconds, width: 640, height: 360)
        #expect {
            try refused.makeEngine().run()
        } throws: { error in
            guard case LiveError.holdsStream = error else { return false }
            return true
        }
        #expect(folder.files == before)
        #expect(try folder.store.read(StreamLayout.playlistName) == playlistBefore)

        var overwritten = EngineRun(store: folder.store, seconds: Self.shortRunSeconds, width: 640, height: 360)
        overwritten.configuration.overwrite = true
        #expect(try overwritten.makeEngine().run().failure == nil)
        let playlist = try overwritten.playlist()
        #expect(try overwritten.validationErrors(StreamLayout.masterPlaylistName) == [])
        #expect(overwritten.numbers(playlist) == [1, 2, 3], "a new stream: \(playlist.render())")
        #expect(playlist.segments.allSatisfy { !$0.discontinuity })
    }

    @Test func resumeContinuesTheNumbersAfterADiscontinuityThatIsCountedWhenItLeaves() throws {
        let folder = try StreamFolder()
        var first = EngineRun(store: folder.store, seconds: Self.shortRunSeconds, width: 640, height: 360)
        first.configuration.windowSize = 3
        #expect(try first.makeEngine().run().failure == nil)
        // Four more segments (2, 2, 2 and 1 s): the first, after the discontinuity, leaves the window.
        var resumed = EngineRun(store: folder.store, seconds: 7, width: 640, height: 360)
        resumed.configuration.windowSize = 3
        resumed.configuration.resume = true
        #expect(try resumed.makeEngine().run().failure == nil)

        let playlist = try resumed.playlist()
        #expect(try resumed.validationErrors(StreamLayout.masterPlaylistName) == [])
        #expect(resumed.numbers(playlist) == [5, 6, 7], "\(playlist.render())")
        #expect(playlist.mediaSequence == 5)
        #expect(playlist.discontinuitySequence == 1, "the discontinuity before segment 4 left the window")
        #expect(playlist.segments.allSatisfy { !$0.discontinuity && $0.mapURI == "init.mp4" })
        #expect(playlist.endList)
        #expect(try !folder.store.exists("init-2.mp4"), "the same parameters keep the init section")
        let errors = try ExternalTools.ffmpegDecodeErrors(path: folder.path(StreamLayout.playlistName))
        #expect(errors.isEmpty, "\(errors)")
    }

    @Test func resumeWithAnotherSizeWritesASecondInitSection() throws {
        let folder = try StreamFolder()
        let first = EngineRun(store: folder.store, seconds: Self.shortRunSeconds, width: 640, height: 360)
        #expect(try first.makeEngine().run().failure == nil)
        var resumed = EngineRun(store: folder.store, seconds: Self.shortRunSeconds, width: 320, height: 180)
        resumed.configuration.resume = true
        #expect(try resumed.makeEngine().run().failure == nil)

        let playlist = try resumed.playlist()
        // The master playlist is written again, its CODECS listing the formats from before and after.
        #expect(try resumed.validationErrors(StreamLayout.masterPlaylistName) == [])
        let master = try resumed.text(StreamLayout.masterPlaylistName)
        #expect(master.components(separatedBy: "avc1.").count - 1 >= 4, "two formats in the variant and I-frame stream: \(master)")
        #expect(resumed.numbers(playlist) == [1, 2, 3, 4, 5, 6], "\(playlist.render())")
        #expect(playlist.segments.map(\.mapURI) == Array(repeating: "init.mp4", count: 3) + Array(repeating: "init-2.mp4", count: 3))
        #expect(playlist.segments.map(\.discontinuity) == [false, false, false, true, false, false])
        // Each part decodes at its own size from its own init section.
        for (initName, uri, width) in [("init.mp4", "seg/000003.m4s", 640), ("init-2.mp4", "seg/000004.m4s", 320)] {
            let joined = folder.url.appendingPathComponent("\(initName)-\(width).mp4")
            try Data(try folder.store.read(initName) + folder.store.read(uri)).write(to: joined)
            let probe = try ExternalTools.run("ffprobe", ["-v", "error", "-select_streams", "v:0",
                                                          "-show_entries", "stream=width", "-of", "csv=p=0", joined.path])
            #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == String(width), "\(uri): \(probe.stderr)")
        }
    }
}
