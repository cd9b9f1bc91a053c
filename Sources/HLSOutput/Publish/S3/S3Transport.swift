import Foundation
import HLSBase
import HLSCrypto
import HLSKit

/// Sends the publisher's requests to an S3-compatible store, each signed with Signature V4.
///
/// Requests arrive with URLs below `target.originURL`, as the publisher builds them for any
/// origin; each is re-addressed to its object key (encoded as SigV4 requires), given the canned
/// ACL when there is one, and signed with the credentials of the moment. Over HTTPS the body is
/// sent as `UNSIGNED-PAYLOAD` (TLS protects it); over HTTP its SHA-256 is signed.
public final class S3Transport: PublishTransport {
    public let target: S3Target
    public let credentials: S3CredentialSource
    /// `x-amz-acl` on every object written, such as `public-read`; nil leaves the bucket's default.
    public let acl: String?
    private let signer: SignatureV4
    private let http: URLSessionTransport
    private let clock: @Sendable () -> Date

    public init(target: S3Target, credentials: S3CredentialSource, acl: String? = nil,
                requestTimeoutSeconds: Double, maxConnections: Int, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.target = target
        self.credentials = credentials
        self.acl = acl
        signer = SignatureV4(region: target.region)
        http = URLSessionTransport(requestTimeoutSeconds: requestTimeoutSeconds, maxConnections: maxConnections)
        self.clock = clock
    }

    public func send(_ request: PublishRequest, completion: @escaping @Sendable (PublishResponse) -> Void) {
        exchange(request) { completion($0.publishResponse) }
    }

    /// Signs and sends `request`, whose URL lies in the bucket, and hands over the whole answer.
    public func exchange(_ request: PublishRequest, completion: @escaping @Sendable (HTTPExchange) -> Void) {
        guard let key = target.key(of: request.url) else {
            return completion(.noAnswer("\(request.url.absoluteString) is not in the bucket \(target.bucket)", permanent: true))
        }
        guard key.isEmpty || S3Target.isSafeKey(key) else {
            return completion(.noAnswer("the object key \"\(key)\" begins with / or holds //", permanent: true))
        }
        let keys: S3Credentials
        do {
            keys = try credentials.credentials()
        } catch {
            return completion(.noAnswer(error.description, permanent: true))
        }
        var url = target.url(forKey: key)
        if let query = Self.canonicalQuery(of: request.url) {
            url = URL(string: url.absoluteString + "?" + query)!
        }
        var headers = request.headers
        // The ACL goes with what creates an object: a PUT, or the start of a multipart upload.
        let query = request.url.query ?? ""
        let createsObject = (request.method == .put && !query.contains("uploadId="))
            || (request.method == .post && query == "uploads")
        if let acl, createsObject {
            headers.append(HTTPHeader(name: "x-amz-acl", value: acl))
        }
        let payloadHash = url.scheme == "https" ? SignatureV4.unsignedPayload : Digest.hex(Digest.sha256(request.body))
        headers += signer.signingHeaders(method: request.method.rawValue, url: url, headers: headers,
                                         payloadHash: payloadHash, credentials: keys, date: clock())
        http.exchange(PublishRequest(method: request.method, url: url, headers: headers, body: request.body),
                      completion: completion)
    }

    /// The query with every name and value encoded as SigV4 signs it (`uploads` becomes `uploads=`).
    static func canonicalQuery(of url: URL) -> String? {
        guard let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems, !items.isEmpty else {
            return nil
        }
        return items.map { "\(PercentEncoding.encode($0.name))=\(PercentEncoding.encode($0.value ?? ""))" }.joined(separator: "&")
    }

    /// Sends `request` and waits for the answer.
    public func exchange(_ request: PublishRequest) -> HTTPExchange {
        let done = DispatchSemaphore(value: 0)
        let answer = Locked<HTTPExchange?>(nil)
        exchange(request) { result in
            answer.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return answer.withLock { $0! }
    }
}

/// Why the store will not take the stream, found before it starts.
public enum S3AccessProblem: Error, Equatable {
    /// The credentials were not found, or the store refused them (`SignatureDoesNotMatch`,
    /// `InvalidAccessKeyId`, an expired token).
    case credentials(String)
    case noSuchBucket
    /// The store refuses requests signed at this machine's time (`RequestTimeTooSkewed`).
    case clockSkew(String)
    /// Nothing answered.
    case unreachable(String)
    /// Another error, with the store's code when it gave one.
    case refused(status: Int, code: String?)
}

extension S3Transport {
    static let accessCheckName = ".hlscap-access-check"

    /// Asks the store for an object that is not there, below the prefix: an answer of "no such key"
    /// (or "access denied" to a writer that may not read) shows the bucket exists and the signature is
    /// accepted; anything else says what stops the stream, before it starts.
    public func checkAccess() -> S3AccessProblem? {
        do {
            _ = try credentials.credentials()
        } catch {
            return .credentials(error.description)
        }
        let url = target.url(forKey: target.prefix + Self.accessCheckName)
        switch exchange(PublishRequest(method: .get, url: url, headers: [])) {
        case .noAnswer(let reason, _):
            return .unreachable(reason)
        case .answered(let status, _, let body):
            let code = PublishResponse.errorCode(inBody: body)
            switch (status, code) {
            case (200..<300, _), (404, "NoSuchKey"), (403, "AccessDenied"):
                return nil
            case (404, "NoSuchBucket"):
                return .noSuchBucket
            case (_, "RequestTimeTooSkewed"):
                return .clockSkew(code!)
            case (_, "SignatureDoesNotMatch"), (_, "InvalidAccessKeyId"), (_, "InvalidToken"), (_, "ExpiredToken"),
                 (_, "InvalidClientTokenId"):
                return .credentials(code!)
            default:
                return .refused(status: status, code: code)
            }
        }
    }
}
