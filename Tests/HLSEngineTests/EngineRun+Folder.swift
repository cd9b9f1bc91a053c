import Foundation
import HLSKit
import HLSMedia
import HLSOutput
import HLSTestSupport
import Testing
@testable import HLSEngine

/// A folder for a run whose stream other readers check too (ffmpeg, ffprobe), removed with the value.
final class StreamFolder {
    let url: URL
    let store: DirectoryStore

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("hlscap-engine-\(UUID().uuidString)")
        store = try DirectoryStore(root: url.path)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Every file below the folder, by path relative to it.
    var files: Set<String> {
        let names = FileManager.default.enumerator(atPath: url.path)?.compactMap { $0 as? String } ?? []
        return Set(names.filter { name in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: path(name), isDirectory: &isDirectory) && !isDirectory.boolValue
        })
    }
}

extension EngineRun {
    /// 2 s segments, as `hlscap live` cuts by default, at `width`×`height`.
    init(store: any StreamStore, seconds: Int64, width: Int, height: Int) {
        self.init(store: store, seconds: seconds)
        configuration.segmentMilliseconds = 2000
        configuration.size = OutputSize(width: width, height: height)
        test.width = width
        test.height = height
    }

    /// The sequence numbers of the segments a playlist lists.
    func numbers(_ playlist: MediaPlaylist) -> [Int] {
        playlist.segments.compactMap { StreamLayout.sequenceNumber(ofPath: $0.uri) }
    }
}
