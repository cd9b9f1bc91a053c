import Foundation
import HLSCrypto
import HLSKit

/// Who may watch: a bearer token (`Authorization: Bearer …` or `?token=…`), and URLs signed with an
/// HMAC-SHA256 key, whose signature covers a path prefix and an expiry time
/// (`?prefix=/live/&expires=1767225600&signature=…`), so one signature opens everything below the
/// prefix until it expires. `/metrics` may have a token of its own.
public struct AccessControl: Sendable {
    public enum Decision: Equatable, Sendable {
        /// Allowed; `carry` is the query to add to every URI of a playlist served to this client
        /// (empty when the client authenticated with a header, which it sends again by itself).
        case allowed(carry: String)
        /// No credentials: 401.
        case missing
        /// Wrong, expired or for another path: 403.
        case refused
    }

    public var token: String?
    public var signingKey: [UInt8]?
    /// `/metrics` asks for this token when set, else for what the stream asks.
    public var metricsToken: String?
    public var clock: @Sendable () -> Date

    public init(token: String? = nil, signingKey: [UInt8]? = nil, metricsToken: String? = nil,
                clock: @escaping @Sendable () -> Date = { Date() }) {
        self.token = token
        self.signingKey = signingKey
        self.metricsToken = metricsToken
        self.clock = clock
    }

    /// Whether anything is protected.
    public var protectsStream: Bool { token != nil || signingKey != nil }

    /// Whether a request for `path` asks for credentials: the stream's, or `/metrics`'s own token.
    /// `mount` is where the stream's paths begin (`/cam1` for `/cam1/playlist.m3u8`), empty at the root.
    public func protects(_ path: String, mount: String = "") -> Bool {
        protectsStream || (metricsToken != nil && path == mount + "/metrics")
    }

    public func decide(_ request: HTTPRequest, mount: String = "") -> Decision {
        if request.path == mount + "/metrics", let metricsToken {
            guard let presented = Self.presentedToken(request) else { return .missing }
            return Digest.constantTimeEqual(Array(presented.utf8), Array(metricsToken.utf8)) ? .allowed(carry: "") : .refused
        }
        guard protectsStream else { return .allowed(carry: "") }
        var presentedSomething = false
        if let token, let presented = Self.presentedToken(request) {
            presentedSomething = true
            if Digest.constantTimeEqual(Array(presented.utf8), Array(token.utf8)) {
                let fromQuery = request.query["token"] != nil && request.header("Authorization") == nil
                return .allowed(carry: fromQuery ? "token=" + PercentEncoding.encode(presented) : "")
            }
        }
        if let signingKey, let prefix = request.query["prefix"], let expires = request.query["expires"],
           let signature = request.query["signature"] {
            presentedSomething = true
            guard let expiry = Int(expires), Double(expiry) >= clock().timeIntervalSince1970,
                  // Byte for byte, as paths name files: String's prefix compares characters, so "/" was no
                  // prefix of "/" and a combining mark, and "/café/" opened "/cafe\u{301}/", another folder.
                  prefix.utf8.first == UInt8(ascii: "/"),
                  request.path.utf8.starts(with: prefix.utf8) || request.path == mount + "/"
                      || request.path == mount + "/index.html",
                  Digest.constantTimeEqual(Array(signature.lowercased().utf8),
                                           Array(Self.signature(prefix: prefix, expires: expiry, key: signingKey).utf8))
            else { return .refused }
            return .allowed(carry: Self.signedQuery(prefix: prefix, expires: expiry, signature: signature.lowercased()))
        }
        if !presentedSomething, request.query["token"] == nil, request.query["signature"] == nil { return .missing }
        return .refused
    }

    /// The signature of a prefix and an expiry time (seconds since 1970): hex HMAC-SHA256 of
    /// `prefix` LF `expires`.
    public static func signature(prefix: String, expires: Int, key: [UInt8]) -> String {
        Digest.hex(Digest.hmacSHA256(key: key, message: Array("\(prefix)\n\(expires)".utf8)))
    }

    /// The query of a signed URL.
    public static func signedQuery(prefix: String, expires: Int, key: [UInt8]) -> String {
        signedQuery(prefix: prefix, expires: expires, signature: signature(prefix: prefix, expires: expires, key: key))
    }

    static func signedQuery(prefix: String, expires: Int, signature: String) -> String {
        "prefix=\(PercentEncoding.encode(prefix))&expires=\(expires)&signature=\(signature)"
    }

    /// A key file's bytes, without the line end an editor or `openssl rand -hex 32 >` leaves.
    public static func key(fileContents data: Data) -> [UInt8] {
        Array(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).utf8)
    }

    private static func presentedToken(_ request: HTTPRequest) -> String? {
        if let header = request.header("Authorization") {
            let parts = header.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { return String(parts[1]) }
        }
        return request.query["token"]
    }

}
