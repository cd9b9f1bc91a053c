import Foundation
import Glibc
import HLSBase
import HLSKit
import HLSMedia
import HLSOutput
import HLSTestSupport
import Testing
@testable import HLSEngine

/// `hlscap file`'s engine in process: fixtures packaged into a store in memory.
@Suite struct FilePackagerTests {
    func packager(_ fixture: String, into store: any StreamStore, mode: FilePackager.Mode) -> FilePackager {
        let input = ExternalTools.fixturesDirectory.appendingPathComponent(fixture).path
        var settings = TranscodeSettings()
        settings.preset = "ultrafast"
        return FilePackager(inputs: [input], store: store, mode: mode, transcodeSettings: settings, overwrite: false)
    }

    @Test(arguments: [FilePackager.Mode.copy, .transcode])
    func aRecordingBecomesAValidStream(mode: FilePackager.Mode) throws {
        let store = MemoryStore()
        let outcome = try packager("h264-aac.mp4", into: store, mode: mode).run()
        #expect(outcome.copied == (mode == .copy))
        #expect(outcome.summary.segmentCount == 2)
        let playlist = try MediaPlaylist.parse(store.text(StreamLayout.playlistName) ?? "")
        #expect(playlist.playlistType == .vod && playlist.endList)
        #expect(Set(store.durableFiles.keys) == Set(store.files.keys), "everything was synced")
        let report = try StreamValidator(loader: StoreLoader(store: store))
            .validate(StoreLoader.url(StreamLayout.masterPlaylistName))
        #expect(report.findings.filter { $0.severity == .error } == [])
    }

    /// A store that fails mid-way: nothing that looks like a stream is left, and a file that cannot be
    /// taken back is reported rather than forgotten.
    @Test func aFailedRunTakesBackItsFilesAndReportsThoseItCannot() throws {
        let store = MemoryStore()
        store.inject(.init(.write, errno: ENOSPC) { $0 == StreamLayout.playlistName })
        store.inject(.init(.remove, errno: EACCES) { $0 == StreamLayout.segmentPath(1) })
        var packager = packager("h264-aac.mp4", into: store, mode: .copy)
        let reported = Locked<[EngineMessage]>([])
        packager.onMessage = { message in reported.withLock { $0.append(message) } }
        #expect(throws: StoreError(operation: .write, path: "memory/playlist.m3u8", errno: ENOSPC)) {
            try packager.run()
        }
        #expect(Array(store.files.keys) == [StreamLayout.segmentPath(1)])
        let messages = reported.withLock { $0 }
        guard messages.count == 1, case .takeBackFailed(let error) = messages[0] else {
            Issue.record("\(messages)")
            return
        }
        #expect(error == StoreError(operation: .remove, path: "memory/seg/000001.m4s", errno: EACCES))
    }
}
