import Foundation
import HLSKit

extension StreamValidator {
    /// The playlist a target names: a playlist file or URL as is; for a directory, its
    /// `master.m3u8`, else its `playlist.m3u8`, else its only `.m3u8`.
    public static func playlistURL(forTarget target: String) throws(LoadError) -> URL {
        if let url = URL(string: target), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme) {
            return url
        }
        let path = target.hasPrefix("file://") ? (URL(string: target)?.path ?? target) : target
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .notFound("\(path) does not exist")
        }
        let url = URL(fileURLWithPath: path).standardizedFileURL
        guard isDirectory.boolValue else { return url }
        for name in ["master.m3u8", "playlist.m3u8"] where FileManager.default.fileExists(atPath: url.appendingPathComponent(name).path) {
            return url.appendingPathComponent(name)
        }
        let contents: [String]
        do {
            contents = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            throw .unreadable("\(path) cannot be listed: \(error.localizedDescription)")
        }
        let playlists = contents.filter { $0.hasSuffix(".m3u8") }.sorted()
        guard playlists.count == 1 else {
            throw .notFound(playlists.isEmpty ? "\(path) holds no .m3u8 playlist"
                : "\(path) holds several playlists (\(playlists.joined(separator: ", "))) and no master.m3u8")
        }
        return url.appendingPathComponent(playlists[0])
    }
}
