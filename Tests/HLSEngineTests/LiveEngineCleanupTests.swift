import Foundation
import HLSBase
import HLSKit
import HLSMedia
import HLSOutput
import Testing
@testable import HLSEngine

/// What a live stream leaves in its folder: after a clean stop and after a resume, only the files the
/// final playlist lists (segments that left the window wait out their retention time first). The test
/// source on a virtual clock: the retention times pass as the stream does.
@Suite(.serialized) struct LiveEngineCleanupTests {
    /// The files the playlist needs, the playlists (media, I-frame, master) included.
    func listedFiles(_ run: EngineRun) throws -> Set<String> {
        let playlist = try run.playlist()
        return Set(playlist.segments.flatMap { [$0.uri] + ($0.mapURI.map { [$0] } ?? []) }
                   + [StreamLayout.playlistName, StreamLayout.iFramePlaylistName, StreamLayout.masterPlaylistName])
    }

    @Test func aStoppedOrResumedStreamKeepsOnlyWhatItsPlaylistLists() throws {
        let folder = try StreamFolder()
        let store = folder.store
        // 12 s in 2 s segments through a window of 3: segments 1 to 3 leave it.
        var first = EngineRun(store: store, seconds: 12, width: 320, height: 180)
        first.configuration.windowSize = 3
        let source = try ClockedSource(first.test)
        #expect(try first.makeEngine(clocked: source).runInVirtualTime(source.clock, messages: first.messages).failure == nil)
        #expect(folder.files == (try listedFiles(first)))
        #expect(try first.validationErrors(StreamLayout.masterPlaylistName) == [])
        let seconds = Double(source.clock.monotonicMicroseconds() - source.clock.startMicroseconds) / 1_000_000
        #expect(seconds < 12 + 8 + 10, "the wait is the retention time, no longer: \(seconds) s")

        // A crash leaves what left the window in the folder; a resume deletes it, and a new init section
        // (another size) makes the old one go once no listed segment needs it.
        try store.write([0], to: StreamLayout.segmentPath(99))
        var resumed = EngineRun(store: store, seconds: 10, width: 640, height: 360)
        resumed.configuration.windowSize = 3
        resumed.configuration.resume = true
        let resumedSource = try ClockedSource(resumed.test, wallStart: TestClock.start.addingTimeInterval(60))
        #expect(try resumed.makeEngine(clocked: resumedSource)
            .runInVirtualTime(resumedSource.clock, messages: resumed.messages).failure == nil)
        let files = folder.files
        #expect(files == (try listedFiles(resumed)))
        #expect(try resumed.validationErrors(StreamLayout.masterPlaylistName) == [])
        #expect(!files.contains(StreamLayout.initName), "the first init section left with the last segment using it")
        #expect(!files.contains(StreamLayout.segmentPath(99)))
    }
}
