import Foundation

/// How the user asked the built-in server to listen and whom it lets watch, option by option: nil is
/// "not given".
public struct ServerRequest: Sendable {
    /// `ADDR:PORT`, resolved by the server when it binds.
    public var address: String?
    public var certificatePath: String?
    public var keyPath: String?
    /// A DER OCSP response for the certificate, to staple.
    public var ocspPath: String?
    public var connectionLimit: Int?
    public var idleTimeoutSeconds: Int?
    public var headerTimeoutSeconds: Int?
    public var token: String?
    /// A file holding the token.
    public var tokenFile: String?
    /// A file holding the key signed URLs are checked with.
    public var signingKeyFile: String?
    public var metricsToken: String?

    public init() {}

    /// Whether any option that only a server takes is given.
    var hasCompanions: Bool {
        certificatePath != nil || keyPath != nil || ocspPath != nil || connectionLimit != nil || idleTimeoutSeconds != nil
            || headerTimeoutSeconds != nil || token != nil || tokenFile != nil || signingKeyFile != nil
            || metricsToken != nil
    }
}

/// The built-in server, decided from a `ServerRequest`: where it listens, its certificate, how many
/// connections it holds and for how long, and the secrets a viewer presents.
public struct ServerPlan: Sendable, Equatable {
    public static let connectionLimits = 1...100_000
    public static let timeoutSeconds = 1...86_400
    /// The fewest bytes a signing key may have.
    public static let minimumSigningKeyBytes = 16

    public var address: String
    /// The private key and certificate as PEM text, and the OCSP response to staple (DER), unchecked.
    public struct TLS: Sendable, Equatable {
        public var key: String
        public var certificate: String
        public var ocspResponse: [UInt8]?
    }

    /// nil serves plain HTTP.
    public var tls: TLS?
    public var connectionLimit = 1024
    public var idleTimeoutSeconds = 30
    public var headerTimeoutSeconds = 30
    public var streamToken: String?
    public var signingKey: [UInt8]?
    public var metricsToken: String?

    /// Whether viewers must present a token or a signed URL.
    public var isProtected: Bool { streamToken != nil || signingKey != nil || metricsToken != nil }

    /// nil without an address; its companions are then refused. `readFile` gives a file's bytes, nil when
    /// it cannot be read.
    public init?(_ request: ServerRequest,
                 readFile: (String) -> Data? = { FileManager.default.contents(atPath: $0) }) throws(PlanError) {
        guard let address = request.address else {
            if request.hasCompanions { throw .needsServing }
            return nil
        }
        self.address = address
        guard request.token == nil || request.tokenFile == nil else { throw .authTokenTwice }
        if let path = request.tokenFile {
            guard let data = readFile(path) else { throw .secretUnreadable(option: "auth-token-file", path: path) }
            let secret = Self.trimmed(data)
            guard !secret.isEmpty else { throw .tokenFileEmpty(path) }
            streamToken = secret
        } else {
            streamToken = request.token
        }
        if let path = request.signingKeyFile {
            guard let data = readFile(path) else { throw .secretUnreadable(option: "auth-key", path: path) }
            let key = Array(Self.trimmed(data).utf8)
            guard key.count >= Self.minimumSigningKeyBytes else { throw .signingKeyShort(path) }
            signingKey = key
        }
        metricsToken = request.metricsToken
        if streamToken?.isEmpty == true || metricsToken?.isEmpty == true { throw .emptySecret }
        switch (request.certificatePath, request.keyPath) {
        case (nil, nil):
            if request.ocspPath != nil { throw .ocspWithoutCertificate }
        case (let certificate?, let key?):
            tls = TLS(key: try Self.pem(key, option: "tls-key", readFile: readFile),
                      certificate: try Self.pem(certificate, option: "tls-cert", readFile: readFile))
            if let path = request.ocspPath {
                guard let data = readFile(path) else { throw .ocspUnreadable(path) }
                tls?.ocspResponse = Array(data)
            }
        default:
            throw .tlsPairing
        }
        connectionLimit = try Self.number(request.connectionLimit, option: "max-clients", in: Self.connectionLimits)
            ?? connectionLimit
        idleTimeoutSeconds = try Self.number(request.idleTimeoutSeconds, option: "idle-timeout", in: Self.timeoutSeconds)
            ?? idleTimeoutSeconds
        headerTimeoutSeconds = try Self.number(request.headerTimeoutSeconds, option: "header-timeout",
                                               in: Self.timeoutSeconds) ?? headerTimeoutSeconds
    }

    /// A secret file's text without the line end an editor or `openssl rand -hex 32 >` leaves.
    private static func trimmed(_ data: Data) -> String {
        String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func pem(_ path: String, option: String, readFile: (String) -> Data?) throws(PlanError) -> String {
        guard let data = readFile(path) else { throw .pemUnreadable(option: option, path: path) }
        let text = String(decoding: data, as: UTF8.self)
        guard text.contains("-----BEGIN ") else { throw .notPEM(option: option, path: path) }
        return text
    }

    private static func number(_ value: Int?, option: String, in range: ClosedRange<Int>) throws(PlanError) -> Int? {
        guard let value else { return nil }
        guard range.contains(value) else { throw .serverNumber(option: option, range) }
        return value
    }
}
