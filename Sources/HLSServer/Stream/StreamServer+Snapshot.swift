import Foundation
import Glibc
import HLSKit

extension StreamServer {
    /// `/snapshot.jpg`: the first picture (an IDR) of the newest segment the first media playlist
    /// lists, made once per segment.
    func snapshotReply(_ request: HTTPRequest, pictures: StreamPictures) -> HTTPResponse {
        do {
            let (segment, map) = try newestSegment()
            var status = stat()
            // lstat, as for the files served: a symbolic link in the directory is not the stream's own file.
            guard lstat(root + "/" + segment.path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
                throw PictureProblem(status: 404, "no segment yet: \(segment.path) is listed but not on disk")
            }
            var mapStatus = stat()
            guard lstat(root + "/" + map.path, &mapStatus) == 0, (mapStatus.st_mode & S_IFMT) == S_IFREG else {
                throw PictureProblem(status: 404, "no picture: the init section \(map.path) is not on disk")
            }
            let key = "\(segment.path)@\(segment.range?.offset ?? 0) \(status.st_size) \(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)"
            let picture = try pictures.snapshot(key: key) {
                (try StreamPictures.read(root + "/" + map.path, offset: map.range?.offset ?? 0, length: map.range?.length),
                 try StreamPictures.read(root + "/" + segment.path, offset: segment.range?.offset ?? 0,
                                         length: segment.range?.length))
            }
            if picture.made { metrics.countPictureMade() }
            return StreamPictures.response(picture, request: request)
        } catch let problem as PictureProblem {
            return problem.response
        } catch {
            return .text(500, "the stream's latest picture cannot be made: \(error)", headers: ServerHeaders.noStore)
        }
    }

    /// A file below the root, or a byte range of it.
    struct Located {
        var path: String
        var range: (offset: Int, length: Int)?
    }

    /// The newest listed segment of the first media playlist (the master playlist's first variant, or
    /// `playlist.m3u8`) and its init section.
    func newestSegment() throws -> (segment: Located, map: Located) {
        var playlistPath = StreamLayout.playlistName
        if let master = FileManager.default.contents(atPath: root + "/" + StreamLayout.masterPlaylistName) {
            guard let first = MasterPlaylistDocument(text: String(decoding: master, as: UTF8.self)).variants.first,
                  let path = Self.resolve(first.uri, against: "") else {
                throw PictureProblem(status: 404, "no picture: \(StreamLayout.masterPlaylistName) lists no variant served here")
            }
            playlistPath = path
        }
        guard let text = FileManager.default.contents(atPath: root + "/" + playlistPath) else {
            throw PictureProblem(status: 404, "no segment yet: \(playlistPath) has not been written")
        }
        let playlist = MediaPlaylistDocument(text: String(decoding: text, as: UTF8.self))
        guard let last = playlist.segments.last else {
            throw PictureProblem(status: 404, "no segment yet: \(playlistPath) lists none")
        }
        guard !last.encrypted else { throw PictureProblem(status: 404, "no picture: the stream's segments are encrypted") }
        let folder = playlistPath.contains("/") ? String(playlistPath[..<playlistPath.lastIndex(of: "/")!]) : ""
        guard let segmentPath = Self.resolve(last.uri, against: folder) else {
            throw PictureProblem(status: 404, "no picture: the segment \(last.uri) is not a file served here")
        }
        guard let map = last.map, let mapPath = Self.resolve(map.uri, against: folder) else {
            throw PictureProblem(status: 404, "no picture: \(playlistPath) names no init section served here (EXT-X-MAP)")
        }
        let range = { (byteRange: MediaPlaylistDocument.ByteRange?) in byteRange.map { ($0.offset ?? 0, $0.length) } }
        return (Located(path: segmentPath, range: range(last.byteRange)), Located(path: mapPath, range: range(map.byteRange)))
    }

    /// A playlist's relative URI as a path below the root, or nil for anything the server would not
    /// serve (other hosts, queries, `..`).
    static func resolve(_ uri: String, against folder: String) -> String? {
        let path = folder.isEmpty ? uri : folder + "/" + uri
        return streamPath("/" + path)
    }
}
