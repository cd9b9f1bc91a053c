import CFuzzerDriver
import Foundation
import HLSKit

/// Any text through every playlist reader: the line document, the media and multivariant
/// readers, variable substitution, and the strict parser of hlscap's own playlists.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: count), as: UTF8.self)
    let document = PlaylistDocument(text: text)
    let (substituted, _) = document.substitutingVariables(imports: ["a": "b"], query: "x=1&y=2")
    if substituted.isMultivariant {
        _ = MasterPlaylistDocument(substituted)
    } else {
        _ = MediaPlaylistDocument(substituted)
    }
    _ = MediaPlaylistDocument(text: text)
    _ = MasterPlaylistDocument(text: text)
    if let playlist = try? MediaPlaylist.parse(text) {
        _ = playlist.render()
    }
    return 0
}

// Last, after the globals above are initialised: top-level code runs in order.
exit(hlscap_fuzz_run(CommandLine.argc, CommandLine.unsafeArgv, fuzz))
