import Foundation
import Glibc
import HLSKit
import HLSOutput

/// Answers requests for one stream directory: its own files (playlists, init sections, segments), the
/// parts and LL-HLS playlists of a live stream held in memory, the preview page and the metrics.
/// Anything else — other files, hidden or temporary files, symbolic links, paths that climb out — is 404.
public struct StreamServer: Sendable {
    public let root: String
    public let lowLatency: LowLatencyStream?
    public let metrics: ServerMetrics
    /// Who may watch; nil lets anyone.
    public let access: AccessControl?
    /// Where an encrypted stream's keys are: answered at `/keys/NAME.key`, to those who may watch.
    public let keyDirectory: String?
    /// A live stream's playlists in memory, served whole or as delta updates (`--dvr`).
    public let deltaPlaylists: DeltaPlaylists?
    /// A folder of recordings, served by time range below `/recordings/`.
    public let recordings: RecordingRanges?
    /// Makes `/snapshot.jpg` and the recordings' thumbnails; nil answers both with 404.
    public let pictures: StreamPictures?
    /// The playlist files read and gzipped last.
    private let playlistFiles = PlaylistFileCache()
    /// Where the stream's paths begin: empty at the root, `/cam1` when a `SiteServer` serves it below `/cam1/`.
    public private(set) var mount = ""
    /// The whole server's credentials, which open a mounted stream as its own do.
    private(set) var siteAccess: AccessControl?

    /// Directory levels below the root a stream file may sit at (`audio/en/seg/000001.m4s`).
    static let maximumDepth = 4

    public init(root: String, lowLatency: LowLatencyStream? = nil, metrics: ServerMetrics, access: AccessControl? = nil,
                keyDirectory: String? = nil, deltaPlaylists: DeltaPlaylists? = nil, recordings: RecordingRanges? = nil,
                pictures: StreamPictures? = nil) {
        self.deltaPlaylists = deltaPlaylists
        self.pictures = pictures
        self.recordings = recordings
        self.root = root.hasSuffix("/") && root.count > 1 ? String(root.dropLast()) : root
        self.lowLatency = lowLatency
        self.metrics = metrics
        self.access = access
        self.keyDirectory = keyDirectory
    }

    /// A key's name as the writer makes them: hexadecimal, a hyphen, digits, `.key`.
    static func keyName(_ requestPath: String) -> String? {
        let prefix = "/" + SegmentEncryption.serverFolder + "/"
        guard requestPath.hasPrefix(prefix) else { return nil }
        let name = requestPath.dropFirst(prefix.count)
        guard name.hasSuffix(".key"), name.count <= 64 else { return nil }
        let stem = name.dropLast(4).split(separator: "-", omittingEmptySubsequences: false)
        guard stem.count == 2, !stem[0].isEmpty, !stem[1].isEmpty, stem[0].allSatisfy(\.isHexDigit),
              stem[1].allSatisfy(\.isNumber), stem.allSatisfy({ $0.allSatisfy(\.isASCII) }) else { return nil }
        return String(name)
    }

    /// A key, to a client that passed the access control; never cached by anyone on the way.
    private func key(_ name: String) -> HTTPResponse {
        guard let keyDirectory, let bytes = FileManager.default.contents(atPath: keyDirectory + "/" + name),
              bytes.count == SegmentEncryption.keyByteCount else {
            return .text(404, "not found", headers: ServerHeaders.noStore)
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/octet-stream"),
                                                   ("Cache-Control", "private, no-store")] + ServerHeaders.cors,
                            body: .bytes(Array(bytes)))
    }

    /// The same stream, served below `/NAME/`, where the whole server's credentials open it too.
    func mounted(at name: String, siteAccess: AccessControl?) -> StreamServer {
        var mounted = self
        mounted.mount = "/" + name
        mounted.siteAccess = siteAccess
        return mounted
    }

    /// Checks the client's credentials first, when access is controlled: 401 without any, 403 with
    /// wrong ones (neither names a file); a playlist served to a client that brought them in the
    /// query carries them into every URI it names, so players need no configuration.
    public func handle(_ request: HTTPRequest) -> HTTPReply {
        var local = request
        if !mount.isEmpty {
            guard request.path.hasPrefix(mount + "/") else {
                return answer(.other, .text(404, "not found", headers: ServerHeaders.noStore))
            }
            local.path = String(request.path.dropFirst(mount.count))
        }
        guard access != nil || siteAccess != nil else { return serve(local) }
        // Credentials are checked on the whole path: a signed URL's prefix names it from the server's root.
        let guarding = [access, siteAccess].compactMap { $0 }.filter { $0.protects(request.path, mount: mount) }
        guard !guarding.isEmpty, request.method != "OPTIONS" else { return serve(local) }
        let decisions = guarding.map { $0.decide(request, mount: mount) }
        let decision = decisions.first { if case .allowed = $0 { true } else { false } }
            ?? (decisions.contains(.refused) ? .refused : .missing)
        switch decision {
        case .missing:
            return answer(.other, .text(401, "credentials required",
                                        headers: [("WWW-Authenticate", "Bearer")] + ServerHeaders.noStore))
        case .refused:
            return answer(.other, .text(403, "forbidden", headers: ServerHeaders.noStore))
        case .allowed(let carry) where carry.isEmpty:
            return serve(local)
        case .allowed(let carry):
            // Playlists are rewritten before they are compressed.
            var plain = local
            plain.headers["accept-encoding"] = nil
            let gzip = ServerHeaders.acceptsGzip(request.headers["accept-encoding"])
            let rewrite: @Sendable (HTTPResponse) -> HTTPResponse = { Self.carry(carry, in: $0, gzip: gzip) }
            switch serve(plain) {
            case .now(let response):
                return .now(rewrite(response))
            case .later(let register):
                return .later { respond in register { respond(rewrite($0)) } }
            }
        }
    }

    /// A playlist answer with `query` added to each URI it names, gzipped when the client takes it.
    /// The ETag stays the one of the playlist as stored, which is what If-None-Match is checked against.
    static func carry(_ query: String, in response: HTTPResponse, gzip: Bool) -> HTTPResponse {
        guard response.status == 200, response.header("Content-Type") == StreamFileKind.playlistContentType,
              response.header("Content-Encoding") == nil, case .bytes(let bytes) = response.body else { return response }
        var rewritten = response
        var body = Array(PlaylistQueryCarrier.carry(query, into: String(decoding: bytes, as: UTF8.self)).utf8)
        if gzip, let packed = Gzip.compress(body) {
            body = packed
            rewritten.headers.append(("Content-Encoding", "gzip"))
        }
        rewritten.body = .bytes(body)
        return rewritten
    }

    private func serve(_ request: HTTPRequest) -> HTTPReply {
        switch request.method {
        case "GET", "HEAD":
            break
        case "OPTIONS":
            // A CORS preflight: any origin may GET with a Range header.
            return answer(.page, HTTPResponse(status: 204, headers: ServerHeaders.cors + [
                ("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS"),
                ("Access-Control-Allow-Headers", "Range, If-None-Match, If-Modified-Since, Authorization"),
                ("Access-Control-Max-Age", "86400"),
            ]))
        default:
            return answer(.other, HTTPResponse.text(405, "only GET and HEAD",
                                                    headers: [("Allow", "GET, HEAD, OPTIONS")] + ServerHeaders.noStore))
        }
        if request.path == "/" || request.path == "/index.html" {
            return answer(.page, HTTPResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8"),
                                                                     ("Cache-Control", "no-cache")] + ServerHeaders.cors,
                                              body: .bytes(Array(PreviewPage.html.utf8))))
        }
        if request.path == "/metrics" {
            return answer(.metrics, HTTPResponse(status: 200, headers: [
                ("Content-Type", "text/plain; version=0.0.4; charset=utf-8"), ("Cache-Control", "no-store"),
            ], body: .bytes(Array(metrics.render().utf8))))
        }
        if request.path == StreamPictures.snapshotPath {
            guard let pictures else { return answer(.picture, .text(404, "this server makes no pictures", headers: ServerHeaders.noStore)) }
            return answer(.picture, snapshotReply(request, pictures: pictures))
        }
        if let name = Self.keyName(request.path) {
            return answer(.other, key(name))
        }
        if let recordings, request.path.hasPrefix(RecordingRanges.prefix) {
            if request.path == RecordingRanges.playlistPath { return answer(.playlist, recordings.playlistReply(request)) }
            if request.path == RecordingRanges.indexPath { return answer(.page, recordings.indexReply()) }
            if request.path == RecordingRanges.thumbnailsPath { return answer(.page, recordings.thumbnailsReply()) }
            if request.path == RecordingRanges.thumbnailPath {
                guard let pictures else { return answer(.picture, .text(404, "this server makes no pictures", headers: ServerHeaders.noStore)) }
                return answer(.picture, recordings.thumbnailReply(request, pictures: pictures, metrics: metrics))
            }
            if let path = RecordingRanges.filePath(request.path) {
                return answer(.segment, file(path, request: request, in: recordings.root))
            }
            return answer(.other, .text(404, "not found", headers: ServerHeaders.noStore))
        }
        guard let path = Self.streamPath(request.path) else {
            return answer(.other, .text(404, "not found", headers: ServerHeaders.noStore))
        }
        if let lowLatency {
            if let rendition = lowLatency.rendition(playlistPath: path) {
                let blocking = request.query["_HLS_msn"] != nil
                let reply = lowLatency.playlistReply(rendition: rendition, query: request.query,
                                                     acceptsGzip: ServerHeaders.acceptsGzip(request.headers["accept-encoding"]))
                return count(blocking ? .blockingPlaylist : .playlist, reply,
                             tags: request.headers["if-none-match"])
            }
            if let (rendition, position) = lowLatency.part(path: path) {
                return count(.part, lowLatency.partReply(rendition: rendition, position: position))
            }
        }
        if let deltaPlaylists, let reply = deltaPlaylists.reply(
            path: path, query: request.query, acceptsGzip: ServerHeaders.acceptsGzip(request.headers["accept-encoding"])) {
            return count(.playlist, .now(reply), tags: request.headers["if-none-match"])
        }
        let kind: ServerMetrics.RequestKind = path.hasSuffix(".m3u8") ? .playlist : path.hasSuffix(".m4s") ? .segment : .initSection
        return answer(kind, file(path, request: request))
    }

    private func answer(_ kind: ServerMetrics.RequestKind, _ response: HTTPResponse) -> HTTPReply {
        metrics.count(kind, status: response.status)
        return .now(response)
    }

    /// Counts the answer; with `tags` (If-None-Match), an answer with one of those ETags becomes 304.
    private func count(_ kind: ServerMetrics.RequestKind, _ reply: HTTPReply, tags: String? = nil) -> HTTPReply {
        let revalidated: @Sendable (HTTPResponse) -> HTTPResponse = { response in
            guard let tags, let tag = response.header("ETag"), response.status == 200,
                  tags.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == tag })
            else { return response }
            return HTTPResponse(status: 304, headers: response.headers.filter { $0.name != "Content-Encoding" })
        }
        switch reply {
        case .now(let response):
            return answer(kind, revalidated(response))
        case .later(let register):
            return .later { [metrics] respond in
                register { response in
                    let final = revalidated(response)
                    metrics.count(kind, status: final.status)
                    respond(final)
                }
            }
        }
    }

    /// A character a served path's components may hold: plain ASCII letters, digits, `-` and `_`.
    static func isPlain(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || character == "-" || character == "_")
    }

    /// An ASCII letter or digit, `-` or `_`: a byte of a plain path component.
    static func isPlainByte(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2D || byte == 0x5F
    }

    /// The stream-relative path of a request for a stream file, or nil: every component plain ASCII
    /// letters, digits, `-` and `_` (no dot files, no `..`, no temporaries), and a media or playlist name.
    static func streamPath(_ requestPath: String) -> String? {
        // By bytes, as `isPlain` by characters: every byte of a path served is ASCII, so no character
        // spans two of them. This runs on every request.
        let bytes = requestPath.utf8
        guard bytes.first == UInt8(ascii: "/") else { return nil }
        let components = bytes.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard (1...maximumDepth + 1).contains(components.count), let name = components.last else { return nil }
        let plain: (Substring.UTF8View) -> Bool = { $0.allSatisfy(Self.isPlainByte) }
        let digits: (Substring.UTF8View) -> Bool = { $0.allSatisfy { (0x30...0x39).contains($0) } }
        for directory in components.dropLast() where directory.isEmpty || !plain(directory) { return nil }
        let stem = name.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        // `name.m3u8`, `init-2.mp4`, or a part's `000042.3.m4s`.
        guard (2...3).contains(stem.count), stem.allSatisfy({ !$0.isEmpty && plain($0) }) else { return nil }
        if stem.count == 3, !(digits(stem[0]) && digits(stem[1])) { return nil }
        let path = String(requestPath.dropFirst())
        return StreamFileKind(path: path) == nil ? nil : path
    }

    /// A file of the stream from disk: ETag and Last-Modified with 304, one byte range with 206, gzip
    /// for playlists.
    private func file(_ path: String, request: HTTPRequest, in directory: String? = nil) -> HTTPResponse {
        let fullPath = (directory ?? root) + "/" + path
        var status = stat()
        // lstat: a symbolic link in the directory is not the stream's own file.
        guard lstat(fullPath, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            return .text(404, "not found", headers: ServerHeaders.noStore)
        }
        let size = Int(status.st_size)
        let modified = Int(status.st_mtim.tv_sec)
        let isPlaylist = path.hasSuffix(".m3u8")
        // Both made when used: a playlist's answer comes with its headers from the cache.
        let fileStatus = status
        let makeTag = { Self.entityTag(of: fileStatus) }
        let makeHeaders = { () -> [(name: String, value: String)] in
            [("Content-Type", StreamFileKind(path: path)!.contentType),
             ("Cache-Control", isPlaylist ? "no-cache" : ServerHeaders.immutable),
             ("Last-Modified", ServerHeaders.httpDate(secondsSince1970: modified))] + ServerHeaders.cors
        }
        if let match = request.headers["if-none-match"] {
            let tag = makeTag()
            let tags = match.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            if tags.contains("*") || tags.contains(tag) || tags.contains(String(tag.dropLast()) + "-gz\"")
                || tags.contains("W/" + tag) {
                return HTTPResponse(status: 304, headers: makeHeaders() + [("ETag", tag)])
            }
        } else if let since = request.headers["if-modified-since"].flatMap(ServerHeaders.parseHTTPDate), modified <= since {
            return HTTPResponse(status: 304, headers: makeHeaders() + [("ETag", makeTag())])
        }
        if isPlaylist {
            // Playlists are small: read and send whole, gzipped when the client takes it; both kept
            // with their headers until the file changes.
            let answer = playlistFiles.answer(path: fullPath, version: PlaylistFileCache.Version(fileStatus),
                                              gzip: ServerHeaders.acceptsGzip(request.headers["accept-encoding"])) { gzipped in
                var fields: [(name: String, value: String)] = [("Content-Type", StreamFileKind.playlistContentType),
                                                                ("Cache-Control", "no-cache"), ("Vary", "Accept-Encoding")]
                    + ServerHeaders.cors
                if gzipped { fields.append(("Content-Encoding", "gzip")) }
                let tag = makeTag()
                fields.append(("ETag", gzipped ? String(tag.dropLast()) + "-gz\"" : tag))
                fields.append(("Last-Modified", ServerHeaders.httpDate(secondsSince1970: modified)))
                return fields
            }
            guard let answer else { return .text(404, "not found", headers: ServerHeaders.noStore) }
            return HTTPResponse(status: 200, headers: answer.headers, body: .bytes(answer.bytes))
        }
        let tag = makeTag()
        let headers = makeHeaders() + [("ETag", tag), ("Accept-Ranges", "bytes")]
        if let range = request.headers["range"] {
            switch Self.byteRange(range, size: size) {
            case .whole:
                break
            case .unsatisfiable:
                return HTTPResponse(status: 416, headers: ServerHeaders.noStore + [("Content-Range", "bytes */\(size)")])
            case .part(let offset, let length):
                return HTTPResponse(status: 206, headers: headers + [
                    ("Content-Range", "bytes \(offset)-\(offset + length - 1)/\(size)"),
                ], body: .file(path: fullPath, offset: offset, length: length))
            }
        }
        return HTTPResponse(status: 200, headers: headers, body: .file(path: fullPath, offset: 0, length: size))
    }

    /// A file's ETag: its size and modification time, to the nanosecond.
    private static func entityTag(of status: stat) -> String {
        "\"" + String(status.st_size, radix: 16) + "-" + String(status.st_mtim.tv_sec, radix: 16) + "-"
            + String(status.st_mtim.tv_nsec, radix: 16) + "\""
    }

    enum ByteRange: Equatable {
        case whole
        case unsatisfiable
        case part(offset: Int, length: Int)
    }

    /// One `bytes=` range (RFC 9110 14.1.2); several ranges, or another unit, get the whole file.
    static func byteRange(_ header: String, size: Int) -> ByteRange {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return .whole }
        let bounds = header.dropFirst("bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2 else { return .whole }
        let first = Int(bounds[0].trimmingCharacters(in: .whitespaces))
        let last = Int(bounds[1].trimmingCharacters(in: .whitespaces))
        switch (first, last) {
        case (let first?, let last?) where first <= last:
            guard first < size else { return .unsatisfiable }
            return .part(offset: first, length: min(last, size - 1) - first + 1)
        case (let first?, nil) where bounds[1].isEmpty:
            guard first < size else { return .unsatisfiable }
            return .part(offset: first, length: size - first)
        case (nil, let suffix?) where bounds[0].isEmpty:
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            let length = min(suffix, size)
            return .part(offset: size - length, length: length)
        default:
            return .whole
        }
    }
}
