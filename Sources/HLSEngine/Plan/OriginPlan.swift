import Foundation
import HLSKit
import HLSOutput

/// Where the user asked the stream to be uploaded, option by option: nil is "not given".
public struct OriginRequest: Sendable {
    /// An http://, https:// or s3:// URL.
    public var url: String?
    /// Headers sent with every upload, as written ('Name: value').
    public var headerLines: [String] = []
    public var backlogMilliseconds: Int64?
    public var drainTimeoutMilliseconds: Int64?
    public var requestTimeoutMilliseconds: Int64?
    public var playlistCacheControl: String?
    public var s3Endpoint: String?
    public var s3Region: String?
    public var s3ACL: String?
    public var s3PathStyle = false
    public var s3VirtualHosted = false
    public var s3PartSizeBytes: Int?

    public init() {}

    /// Whether any option that only an S3 store takes is given.
    var hasS3Options: Bool {
        s3Endpoint != nil || s3Region != nil || s3ACL != nil || s3PathStyle || s3VirtualHosted || s3PartSizeBytes != nil
    }
}

/// The origin the stream goes to, decided from an `OriginRequest`: an HTTP server taking PUT, or an
/// S3-compatible store, with what every upload carries.
public struct OriginPlan: Sendable {
    public static let defaultBacklogMilliseconds: Int64 = 300_000
    public static let defaultDrainTimeoutMilliseconds: Int64 = 30_000
    public static let defaultRequestTimeoutMilliseconds: Int64 = 10_000
    /// S3's canned ACLs that make sense for objects.
    public static let cannedACLs = ["private", "public-read", "public-read-write", "authenticated-read",
                                    "aws-exec-read", "bucket-owner-read", "bucket-owner-full-control"]

    public enum Target: Sendable, Equatable {
        case http(URL)
        case s3(S3Target)
    }

    public var target: Target
    public var headers: [HTTPHeader]
    public var playlistCacheControl: String
    /// Each object's canned ACL; nil keeps the bucket's.
    public var s3ACL: String?
    /// The part size of a finished recording's multipart upload.
    public var s3PartSize: Int
    public var backlogSeconds: Double
    public var drainTimeoutSeconds: Double
    public var requestTimeoutSeconds: Double

    /// nil without a URL; its companions are then refused. `defaultRegion` is the signing region when none
    /// is given (the environment's or the profile's).
    public init?(_ request: OriginRequest, defaultRegion: @autoclosure () -> String? = S3CredentialSource.region())
        throws(PlanError) {
        guard let url = request.url else {
            if !request.headerLines.isEmpty || request.backlogMilliseconds != nil || request.drainTimeoutMilliseconds != nil
                || request.requestTimeoutMilliseconds != nil || request.playlistCacheControl != nil || request.hasS3Options {
                throw .needsPublishing
            }
            return nil
        }
        requestTimeoutSeconds = Double(request.requestTimeoutMilliseconds ?? Self.defaultRequestTimeoutMilliseconds) / 1000
        guard requestTimeoutSeconds > 0 else { throw .publishTimeout }
        s3PartSize = S3MultipartUpload.defaultPartSize
        if url.lowercased().hasPrefix("s3://") {
            guard !(request.s3PathStyle && request.s3VirtualHosted) else { throw .s3AddressingTwice }
            do {
                target = .s3(try S3Target(url: url, endpoint: request.s3Endpoint, region: request.s3Region ?? defaultRegion(),
                                          pathStyle: request.s3PathStyle ? true : request.s3VirtualHosted ? false : nil))
            } catch {
                throw .s3Target(error)
            }
            if let acl = request.s3ACL, !Self.cannedACLs.contains(acl) { throw .s3ACL(acl) }
            if let bytes = request.s3PartSizeBytes {
                guard bytes >= S3MultipartUpload.minimumPartSize, bytes <= 5 * 1024 * 1024 * 1024 else { throw .s3PartSize }
                s3PartSize = bytes
            }
        } else {
            guard !request.hasS3Options else { throw .s3OptionsWithoutS3 }
            guard let origin = URL(string: url), ["http", "https"].contains(origin.scheme?.lowercased()),
                  origin.host != nil else {
                throw .publishURL(url)
            }
            target = .http(origin)
        }
        s3ACL = request.s3ACL
        playlistCacheControl = request.playlistCacheControl ?? StreamPublisher.defaultPlaylistCacheControl
        guard !playlistCacheControl.isEmpty, !playlistCacheControl.contains(where: \.isNewline) else {
            throw .playlistCacheControl
        }
        headers = try request.headerLines.map { line throws(PlanError) in
            guard let header = HTTPHeader(line: line) else { throw .header(line) }
            return header
        }
        backlogSeconds = Double(request.backlogMilliseconds ?? Self.defaultBacklogMilliseconds) / 1000
        drainTimeoutSeconds = Double(request.drainTimeoutMilliseconds ?? Self.defaultDrainTimeoutMilliseconds) / 1000
    }
}
