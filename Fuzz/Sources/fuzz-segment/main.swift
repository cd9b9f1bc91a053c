import CFuzzerDriver
import Foundation
import HLSKit

/// The validator on a one-segment stream whose init section and segment come from the input:
/// a big-endian 16-bit length, that many bytes of `init.mp4`, and the rest as the segment.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    guard bytes.count >= 2 else { return 0 }
    let initLength = min(Int(bytes[0]) << 8 | Int(bytes[1]), bytes.count - 2)
    let loader = MemoryLoader(files: [
        "/stream/playlist.m3u8": Array(playlist.utf8),
        "/stream/init.mp4": Array(bytes[2..<(2 + initLength)]),
        "/stream/seg/1.m4s": Array(bytes[(2 + initLength)...]),
    ])
    _ = try? StreamValidator(loader: loader).validate(URL(fileURLWithPath: "/stream/playlist.m3u8"))
    return 0
}

private let playlist = """
    #EXTM3U
    #EXT-X-VERSION:6
    #EXT-X-TARGETDURATION:1
    #EXT-X-PLAYLIST-TYPE:VOD
    #EXT-X-INDEPENDENT-SEGMENTS
    #EXT-X-MAP:URI="init.mp4"
    #EXTINF:1.000,
    seg/1.m4s
    #EXT-X-ENDLIST

    """

private struct MemoryLoader: ResourceLoader {
    let files: [String: [UInt8]]

    func load(_ url: URL) throws(LoadError) -> [UInt8] {
        guard let bytes = files[url.path] else { throw .notFound("\(url.path) does not exist") }
        return bytes
    }
}

// Last, after the globals above are initialised: top-level code runs in order.
exit(hlscap_fuzz_run(CommandLine.argc, CommandLine.unsafeArgv, fuzz))
