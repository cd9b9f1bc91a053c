import Foundation
import HLSKit

/// Where `--publish s3://BUCKET/PREFIX/` puts a stream: a bucket, a key prefix and the store that
/// holds them.
public struct S3Target: Sendable, Equatable {
    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case notS3(String)
        case badBucket(String)
        case badPrefix(String)
        case badEndpoint(String)

        public var description: String {
            switch self {
            case .notS3(let text): "\"\(text)\" is not an s3://BUCKET/PREFIX/ URL"
            case .badBucket(let name):
                "\"\(name)\" is not a bucket name: 3 to 63 lower-case letters, digits, dots and hyphens"
            case .badPrefix(let prefix):
                "the key prefix \"\(prefix)\" has an empty part (//) or a . or .. part; object keys must not"
            case .badEndpoint(let text): "\"\(text)\" is not an http:// or https:// endpoint URL"
            }
        }
    }

    public var bucket: String
    /// "" or a prefix ending in `/`, never starting with one and never holding `//`.
    public var prefix: String
    /// `scheme://host[:port]` of the store.
    public var endpoint: URL
    public var region: String
    /// `endpoint/BUCKET/KEY` rather than `BUCKET.endpoint/KEY`.
    public var pathStyle: Bool

    public static let defaultRegion = "us-east-1"

    /// `s3://BUCKET/PREFIX/`, at `endpoint` (AWS in `region` when nil; path-style addressing is then
    /// the default for an endpoint of one's own and virtual-hosted for AWS, unless `pathStyle` says).
    public init(url text: String, endpoint: String?, region: String?, pathStyle: Bool?) throws(ParseError) {
        guard text.lowercased().hasPrefix("s3://") else { throw .notS3(text) }
        let rest = text.dropFirst("s3://".count)
        let bucket = String(rest.prefix { $0 != "/" })
        guard Self.isBucketName(bucket) else { throw .badBucket(bucket) }
        var prefix = String(rest.dropFirst(bucket.count))
        if prefix.hasPrefix("/") { prefix.removeFirst() }
        if !prefix.isEmpty, !prefix.hasSuffix("/") { prefix += "/" }
        let parts = prefix.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        guard !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else { throw .badPrefix(prefix) }
        self.bucket = bucket
        self.prefix = prefix
        self.region = region ?? Self.defaultRegion
        if let endpoint {
            guard let url = URL(string: endpoint), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                  url.host != nil, url.path.isEmpty || url.path == "/" else { throw .badEndpoint(endpoint) }
            self.endpoint = url
            self.pathStyle = pathStyle ?? true
        } else {
            self.endpoint = URL(string: "https://s3.\(self.region).amazonaws.com")!
            // Dotted bucket names break the wildcard certificate of virtual-hosted addressing.
            self.pathStyle = pathStyle ?? bucket.contains(".")
        }
    }

    /// `s3://BUCKET/PREFIX/`, for messages.
    public var displayName: String { "s3://\(bucket)/\(prefix)" }

    /// The URL of the object `key` (a key below the bucket, not the prefix).
    public func url(forKey key: String) -> URL {
        let encoded = PercentEncoding.encode(key, keepingSlashes: true)
        return URL(string: pathStyle ? "\(base)/\(PercentEncoding.encode(bucket))/\(encoded)" : "\(base)/\(encoded)")!
    }

    /// The URL the stream's files go below: the prefix's own URL, ending in `/`.
    public var originURL: URL { url(forKey: prefix) }

    /// The object key a URL below the bucket names, decoded; nil for a URL of another store.
    public func key(of url: URL) -> String? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let path = components.percentEncodedPath.removingPercentEncoding else { return nil }
        if pathStyle {
            let bucketPath = "/\(bucket)/"
            return path.hasPrefix(bucketPath) ? String(path.dropFirst(bucketPath.count)) : nil
        }
        return path.hasPrefix("/") ? String(path.dropFirst()) : nil
    }

    private var base: String {
        var text = "\(endpoint.scheme!)://\(pathStyle ? "" : bucket + ".")\(endpoint.host!)"
        if let port = endpoint.port { text += ":\(port)" }
        return text
    }

    /// Whether an object key is one a store and a CDN keep as written.
    public static func isSafeKey(_ key: String) -> Bool {
        !key.isEmpty && !key.hasPrefix("/") && !key.contains("//")
    }

    static func isBucketName(_ name: String) -> Bool {
        (3...63).contains(name.count)
            && name.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "." || $0 == "-") }
            && name.first.map { $0.isLetter || $0.isNumber } == true
            && name.last.map { $0.isLetter || $0.isNumber } == true
    }
}
