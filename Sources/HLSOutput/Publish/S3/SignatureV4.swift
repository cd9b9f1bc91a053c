import Foundation
import HLSCrypto
import HLSKit

/// An access key, as AWS's tools find it (`S3CredentialSource`).
public struct S3Credentials: Sendable, Equatable {
    public var accessKeyID: String
    public var secretAccessKey: String
    /// Temporary credentials carry a session token, sent as `x-amz-security-token`.
    public var sessionToken: String?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }
}

/// AWS Signature Version 4 in the `Authorization` header, for S3
/// (docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html).
public struct SignatureV4: Sendable {
    public static let algorithm = "AWS4-HMAC-SHA256"
    /// The payload hash sent over HTTPS, where TLS already protects the body.
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"
    public static let emptyPayloadHash = Digest.hex(Digest.sha256(Data()))

    public var region: String
    public var service: String

    public init(region: String, service: String = "s3") {
        self.region = region
        self.service = service
    }

    /// The headers to add to a request: `x-amz-date`, `x-amz-content-sha256`, the session token if
    /// any, and `Authorization`. `url`'s path and query must already be encoded as `PercentEncoding.encode`
    /// does, since the signature covers them as sent; `headers` are the others the request carries,
    /// all of which are signed, with `Host`.
    public func signingHeaders(method: String, url: URL, headers: [HTTPHeader], payloadHash: String,
                               credentials: S3Credentials, date: Date) -> [HTTPHeader] {
        let (amzDate, day) = Self.timestamps(date)
        var added = [HTTPHeader(name: "x-amz-date", value: amzDate),
                     HTTPHeader(name: "x-amz-content-sha256", value: payloadHash)]
        if let token = credentials.sessionToken {
            added.append(HTTPHeader(name: "x-amz-security-token", value: token))
        }
        let signed = headers + added + [HTTPHeader(name: "host", value: Self.hostHeader(url))]
        let request = canonicalRequest(method: method, url: url, headers: signed, payloadHash: payloadHash)
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = [Self.algorithm, amzDate, scope,
                            Digest.hex(Digest.sha256(Data(request.text.utf8)))].joined(separator: "\n")
        let signature = Digest.hex(Digest.hmacSHA256(key: signingKey(secret: credentials.secretAccessKey, day: day),
                                                     message: Data(stringToSign.utf8)))
        added.append(HTTPHeader(name: "Authorization", value:
            "\(Self.algorithm) Credential=\(credentials.accessKeyID)/\(scope), "
            + "SignedHeaders=\(request.signedHeaders), Signature=\(signature)"))
        return added
    }

    /// The canonical request and its list of signed header names.
    func canonicalRequest(method: String, url: URL, headers: [HTTPHeader], payloadHash: String)
        -> (text: String, signedHeaders: String) {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let path = components?.percentEncodedPath ?? ""
        let query = (components?.percentEncodedQuery ?? "").split(separator: "&").map { pair -> (String, String) in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
        var byName: [String: [String]] = [:]
        for header in headers {
            let value = header.value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            byName[header.name.lowercased(), default: []].append(value)
        }
        let names = byName.keys.sorted()
        let canonicalHeaders = names.map { "\($0):\(byName[$0]!.joined(separator: ","))\n" }.joined()
        let signedHeaders = names.joined(separator: ";")
        let text = [method, path.isEmpty ? "/" : path, query.map { "\($0.0)=\($0.1)" }.joined(separator: "&"),
                    canonicalHeaders, signedHeaders, payloadHash].joined(separator: "\n")
        return (text, signedHeaders)
    }

    private func signingKey(secret: String, day: String) -> [UInt8] {
        var key = Array("AWS4\(secret)".utf8)
        for part in [day, region, service, "aws4_request"] {
            key = Digest.hmacSHA256(key: key, message: Array(part.utf8))
        }
        return key
    }

    /// `Host` as the client sends it: the port only when it is not the scheme's own.
    static func hostHeader(_ url: URL) -> String {
        let host = url.host ?? ""
        guard let port = url.port else { return host }
        let isDefault = (url.scheme == "http" && port == 80) || (url.scheme == "https" && port == 443)
        return isDefault ? host : "\(host):\(port)"
    }

    /// `20130524T000000Z` and `20130524`, in UTC.
    static func timestamps(_ date: Date) -> (amzDate: String, day: String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let day = String(format: "%04d%02d%02d", parts.year!, parts.month!, parts.day!)
        return (day + String(format: "T%02d%02d%02dZ", parts.hour!, parts.minute!, parts.second!), day)
    }
}
