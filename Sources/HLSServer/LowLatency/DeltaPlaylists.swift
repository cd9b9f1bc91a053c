import Foundation
import HLSBase
import HLSKit

/// The live playlists of a stream served with delta updates (`live --serve --dvr`), by their path in the
/// stream: the engine hands each update over, requests are answered from memory, whole or as a delta
/// (`_HLS_skip=YES`), each form rendered and gzipped once per update rather than once per request.
public final class DeltaPlaylists: Sendable {
    /// A playlist in the form a request asks for.
    private struct Form: Hashable {
        var path: String
        var skip: Bool
        var gzip: Bool
    }

    private struct State {
        var directories: [String] = []
        var playlists: [String: DeltaPlaylist] = [:]
        /// Counts the updates: an answer made from one is kept until the next.
        var version = 0
        var answers: [Form: HTTPResponse] = [:]
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
            state.version += 1
            state.answers = [:]
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
        let skip: Bool
        switch query["_HLS_skip"] {
        case nil: skip = false
        case "YES", "v2": skip = true
        case let other?:
            guard state.withLock({ $0.playlists[path] }) != nil else { return nil }
            return .text(400, "_HLS_skip takes YES or v2, not \(other)", headers: ServerHeaders.noStore)
        }
        let form = Form(path: path, skip: skip, gzip: acceptsGzip)
        let found: (playlist: DeltaPlaylist, version: Int, answer: HTTPResponse?)? = state.withLock { state in
            state.playlists[path].map { ($0, state.version, state.answers[form]) }
        }
        guard let (playlist, version, kept) = found else { return nil }
        if let kept { return kept }
        // Rendered outside the lock; kept only if no update came meanwhile.
        let answer = ServerHeaders.playlist(Array(playlist.render(skip: skip).utf8), cacheControl: "no-cache", gzip: acceptsGzip)
        state.withLock { state in
            if state.version == version { state.answers[form] = answer }
        }
        return answer
    }
}
