import CFuzzerDriver
import Foundation
import HLSServer

/// A request as a client sends it, `GET /path?query HTTP/1.1` and header lines, split into method,
/// path, query arguments and headers as libmicrohttpd hands them to the server, then answered by a
/// server of a small stream folder and a recordings folder: the paths it accepts, Range,
/// If-None-Match and If-Modified-Since, `_HLS_` and recording-range queries. A file answer never
/// reaches past the file.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: count), as: UTF8.self)
    guard let request = request(text) else { return 0 }
    guard case .now(let response) = server.handle(request) else { return 0 }
    if case .file(let path, let offset, let length) = response.body {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
        guard offset >= 0, length >= 0, offset <= size, length <= size - offset else {
            fatalError("\(request) answered with bytes \(offset)+\(length) of a \(size)-byte file")
        }
    }
    return 0
}

/// The request line and headers, as libmicrohttpd splits them; nil when the line has no three parts.
private func request(_ text: String) -> HTTPRequest? {
    let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
    let parts = lines.first?.split(separator: " ", omittingEmptySubsequences: false) ?? []
    guard parts.count == 3 else { return nil }
    let target = parts[1].split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
    var query: [String: String] = [:]
    for argument in target.count == 2 ? target[1].split(separator: "&") : [] {
        let pair = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        query[unescape(pair[0])] = pair.count == 2 ? unescape(pair[1]) : ""
    }
    var headers: [String: String] = [:]
    for line in lines.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return HTTPRequest(method: String(parts[0]), path: unescape(target[0]), query: query, headers: headers)
}

/// `%XX` decoded, as libmicrohttpd decodes paths and arguments.
private func unescape(_ text: Substring) -> String {
    var bytes: [UInt8] = []
    var rest = Array(text.utf8)[...]
    while let byte = rest.popFirst() {
        if byte == UInt8(ascii: "%"), rest.count >= 2,
           let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16) {
            bytes.append(value)
            rest = rest.dropFirst(2)
        } else {
            bytes.append(byte)
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}

nonisolated(unsafe) private var root = ""

/// A stream folder with a playlist, an init section, a segment and a rendition's playlist, and an
/// empty folder of recordings, made once and removed at exit.
private let server: StreamServer = {
    root = FileManager.default.temporaryDirectory.appendingPathComponent("hlscap-fuzz-http-\(getpid())").path
    let files = [
        "playlist.m3u8": "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MAP:URI=\"init.mp4\"\n#EXTINF:2.000,\nseg/000001.m4s\n",
        "init.mp4": String(repeating: "i", count: 600),
        "seg/000001.m4s": String(repeating: "s", count: 4000),
        "720p/playlist.m3u8": "#EXTM3U\n",
    ]
    for (path, content) in files {
        let url = URL(fileURLWithPath: root + "/" + path)
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? Data(content.utf8).write(to: url)
    }
    try? FileManager.default.createDirectory(atPath: root + "/recordings", withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: root) }
    return StreamServer(root: root, metrics: ServerMetrics(), deltaPlaylists: DeltaPlaylists(),
                        recordings: RecordingRanges(root: root + "/recordings"))
}()

// Last, after the globals above are initialised: top-level code runs in order.
exit(hlscap_fuzz_run(CommandLine.argc, CommandLine.unsafeArgv, fuzz))
