import Foundation

/// Why a playlist or media file could not be read.
public enum LoadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No such file, or HTTP 404/410.
    case notFound(String)
    /// It exists but cannot be read: permissions, a directory, another HTTP 4xx.
    case unreadable(String)
    /// No answer: connection refused, unknown host, timeout.
    case unreachable(String)
    /// Reading started and failed: an I/O error, an HTTP 5xx.
    case readFailed(String)
    /// The server's TLS certificate is signed by no authority the loader trusts.
    case untrusted(String)

    public var description: String {
        switch self {
        case .notFound(let reason), .unreadable(let reason), .unreachable(let reason), .readFailed(let reason),
             .untrusted(let reason):
            reason
        }
    }
}

/// Reads playlists and media: files, HTTP or a store (HLSOutput has those loaders); tests give their own.
public protocol ResourceLoader: Sendable {
    func load(_ url: URL) throws(LoadError) -> [UInt8]
    /// Whether `url` can be read, without reading it where the loader can tell so more cheaply.
    func exists(_ url: URL) throws(LoadError) -> Bool
}

extension ResourceLoader {
    public func exists(_ url: URL) throws(LoadError) -> Bool {
        do {
            _ = try load(url)
            return true
        } catch .notFound {
            return false
        }
    }
}
