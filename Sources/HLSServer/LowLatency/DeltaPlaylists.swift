import Foundation
import HLSBase
import HLSKit

/// The live playlists of a stream served with delta updates (`live --serve --dvr`), by their path in the
/// stream: the engine hands each update over, requests are answered from memory, whole or as a delta
/// (`_HLS_skip=YES`), without reading or rendering the window again.
public final class DeltaPlaylists: Sendable {
    private struct State {
        var directories: [String] = []
        var playlists: [String: DeltaPlaylist] = [:]
    }

    private let state = Locked(State())

    public init() {}

    /// The renditions' directories, in the order their playlists are handed over.
    public func begin(directories: [String]) {
        state.withLock { $0.directories = directories }
    }

    /// Every rendition's playlist after a segment was listed, in the order of `begin`.
    public func update(_ playlists: [MediaPlaylist]) {
        state.withLock { state in
            for (directory, playlist) in zip(state.directories, playlists) {
                let path = directory.isEmpty ? StreamLayout.playlistName : directory + "/" + StreamLayout.playlistName
                if state.playlists[path] != nil {
                    state.playlists[path]!.update(playlist)
                } else {
                    state.playlists[path] = DeltaPlaylist(playlist)
                }
            }
        }
    }

    /// The playlist at `path`, or nil when it is not one of these; a `_HLS_skip` other than YES or v2 is
    /// answered 400. v2 asks to skip date ranges too, and this stream has none.
    func reply(path: String, query: [String: String], acceptsGzip: Bool) -> HTTPResponse? {
        guard let playlist = state.withLock({ $0.playlists[path] }) else { return nil }
        let skip: Bool
        switch query["_HLS_skip"] {
        case nil: skip = false
        case "YES", "v2": skip = true
        case let other?: return .text(400, "_HLS_skip takes YES or v2, not \(other)", headers: ServerHeaders.noStore)
        }
        return ServerHeaders.playlist(Array(playlist.render(skip: skip).utf8), cacheControl: "no-cache", gzip: acceptsGzip)
    }
}
