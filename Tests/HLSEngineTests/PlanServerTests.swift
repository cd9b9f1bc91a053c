import Foundation
import HLSEngine
import Testing

typealias ServerCase = PlanCase<ServerRequest>

/// `--serve`/`--listen ADDR:PORT` and their companions: the certificate, the connection limit and
/// timeouts, and the secrets a viewer presents.
@Suite struct PlanServerTests {
    /// Files the plan may read, by path; any other path cannot be read.
    static let files: [String: String] = [
        "cert.pem": "-----BEGIN CERTIFICATE-----\nMII…\n-----END CERTIFICATE-----\n",
        "key.pem": "-----BEGIN PRIVATE KEY-----\nMII…\n-----END PRIVATE KEY-----\n",
        "plain.txt": "not a certificate\n",
        "token.txt": "  s3cret\n",
        "blank.txt": " \n\n",
        "signing.key": "0123456789abcdef0123456789abcdef\n",
        "short.key": "0123456789abcde\n",
        "response.der": "0\u{03}\n\u{01}\u{00}",
    ]

    static func plan(_ item: ServerCase, address: String? = "127.0.0.1:8080") throws(PlanError) -> ServerPlan? {
        var request = ServerRequest()
        request.address = address
        item.edit(&request)
        return try ServerPlan(request, readFile: { files[$0].map { Data($0.utf8) } })
    }

    static let companions: [ServerCase] = [
        ServerCase("--tls-cert") { $0.certificatePath = "cert.pem" },
        ServerCase("--tls-key") { $0.keyPath = "key.pem" },
        ServerCase("--tls-ocsp") { $0.ocspPath = "response.der" },
        ServerCase("--max-clients") { $0.connectionLimit = 10 },
        ServerCase("--idle-timeout") { $0.idleTimeoutSeconds = 10 },
        ServerCase("--header-timeout") { $0.headerTimeoutSeconds = 10 },
        ServerCase("--auth-token") { $0.token = "s3cret" },
        ServerCase("--auth-token-file") { $0.tokenFile = "token.txt" },
        ServerCase("--auth-key") { $0.signingKeyFile = "signing.key" },
        ServerCase("--metrics-token") { $0.metricsToken = "m3trics" },
    ]

    @Test(arguments: companions)
    func aCompanionNeedsAnAddress(_ item: ServerCase) {
        #expect(throws: PlanError.needsServing) { try Self.plan(item, address: nil) }
    }

    @Test func withoutAnythingThereIsNoServer() throws {
        #expect(try Self.plan(ServerCase("") { _ in }, address: nil) == nil)
    }

    static let refusals: [(ServerCase, PlanError)] = [
        (ServerCase("--auth-token and --auth-token-file") { $0.token = "a"; $0.tokenFile = "token.txt" }, .authTokenTwice),
        (ServerCase("an unreadable token file") { $0.tokenFile = "none.txt" },
         .secretUnreadable(option: "auth-token-file", path: "none.txt")),
        (ServerCase("a blank token file") { $0.tokenFile = "blank.txt" }, .tokenFileEmpty("blank.txt")),
        (ServerCase("an unreadable signing key") { $0.signingKeyFile = "none.key" },
         .secretUnreadable(option: "auth-key", path: "none.key")),
        (ServerCase("a 15-byte signing key") { $0.signingKeyFile = "short.key" }, .signingKeyShort("short.key")),
        (ServerCase("an empty token") { $0.token = "" }, .emptySecret),
        (ServerCase("an empty metrics token") { $0.metricsToken = "" }, .emptySecret),
        (ServerCase("a certificate alone") { $0.certificatePath = "cert.pem" }, .tlsPairing),
        (ServerCase("a key alone") { $0.keyPath = "key.pem" }, .tlsPairing),
        (ServerCase("an unreadable key") { $0.certificatePath = "cert.pem"; $0.keyPath = "none.pem" },
         .pemUnreadable(option: "tls-key", path: "none.pem")),
        (ServerCase("an unreadable certificate") { $0.certificatePath = "none.pem"; $0.keyPath = "key.pem" },
         .pemUnreadable(option: "tls-cert", path: "none.pem")),
        (ServerCase("a key that is not PEM") { $0.certificatePath = "cert.pem"; $0.keyPath = "plain.txt" },
         .notPEM(option: "tls-key", path: "plain.txt")),
        (ServerCase("a certificate that is not PEM") { $0.certificatePath = "plain.txt"; $0.keyPath = "key.pem" },
         .notPEM(option: "tls-cert", path: "plain.txt")),
        (ServerCase("an OCSP response without a certificate") { $0.ocspPath = "response.der" }, .ocspWithoutCertificate),
        (ServerCase("an unreadable OCSP response") { $0.certificatePath = "cert.pem"; $0.keyPath = "key.pem"; $0.ocspPath = "none.der" },
         .ocspUnreadable("none.der")),
        (ServerCase("--max-clients 0") { $0.connectionLimit = 0 }, .serverNumber(option: "max-clients", 1...100_000)),
        (ServerCase("--max-clients 100001") { $0.connectionLimit = 100_001 },
         .serverNumber(option: "max-clients", 1...100_000)),
        (ServerCase("--idle-timeout 0") { $0.idleTimeoutSeconds = 0 }, .serverNumber(option: "idle-timeout", 1...86_400)),
        (ServerCase("--idle-timeout 86401") { $0.idleTimeoutSeconds = 86_401 },
         .serverNumber(option: "idle-timeout", 1...86_400)),
        (ServerCase("--header-timeout 0") { $0.headerTimeoutSeconds = 0 },
         .serverNumber(option: "header-timeout", 1...86_400)),
        (ServerCase("--header-timeout 86401") { $0.headerTimeoutSeconds = 86_401 },
         .serverNumber(option: "header-timeout", 1...86_400)),
    ]

    @Test(arguments: refusals)
    func refusal(_ item: ServerCase, _ error: PlanError) {
        #expect(throws: error) { try Self.plan(item) }
    }

    @Test func anOpenServerWithItsDefaults() throws {
        let plan = try #require(try Self.plan(ServerCase("") { _ in }))
        #expect(plan.address == "127.0.0.1:8080" && plan.tls == nil)
        #expect(plan.connectionLimit == 1024 && plan.idleTimeoutSeconds == 30 && plan.headerTimeoutSeconds == 30)
        #expect(!plan.isProtected && plan.streamToken == nil && plan.signingKey == nil && plan.metricsToken == nil)
    }

    @Test func whatIsToldIsKept() throws {
        let plan = try #require(try Self.plan(ServerCase("") {
            $0.certificatePath = "cert.pem"
            $0.keyPath = "key.pem"
            $0.ocspPath = "response.der"
            $0.connectionLimit = 100_000
            $0.idleTimeoutSeconds = 1
            $0.headerTimeoutSeconds = 86_400
        }))
        #expect(plan.tls?.key == Self.files["key.pem"] && plan.tls?.certificate == Self.files["cert.pem"])
        #expect(plan.tls?.ocspResponse == [0x30, 0x03, 0x0a, 0x01, 0x00], "the response's bytes as they are, checked by the server")
        #expect(plan.connectionLimit == 100_000 && plan.idleTimeoutSeconds == 1 && plan.headerTimeoutSeconds == 86_400)
    }

    /// Secret files lose the blanks and line end around them; the token given on the line is kept as is.
    @Test func secretsFromFilesAreTrimmed() throws {
        let fromFiles = try #require(try Self.plan(ServerCase("") {
            $0.tokenFile = "token.txt"
            $0.signingKeyFile = "signing.key"
        }))
        #expect(fromFiles.streamToken == "s3cret" && fromFiles.signingKey == Array("0123456789abcdef0123456789abcdef".utf8))
        #expect(fromFiles.isProtected && fromFiles.metricsToken == nil)
        let given = try #require(try Self.plan(ServerCase("") { $0.token = " a b "; $0.metricsToken = "m" }))
        #expect(given.streamToken == " a b " && given.metricsToken == "m" && given.signingKey == nil && given.isProtected)
        let metricsOnly = try #require(try Self.plan(ServerCase("") { $0.metricsToken = "m" }))
        #expect(metricsOnly.isProtected && metricsOnly.streamToken == nil)
    }

    static let rtmpRefusals: [(String, PlanError)] = [
        ("rtmp://[::1/live/cam1", .rtmpListenAddress("rtmp://[::1/live/cam1")),
        ("http://0.0.0.0:1935/live/cam1", .rtmpListenAddress("http://0.0.0.0:1935/live/cam1")),
        ("rtmp://0.0.0.0:1935/live", .rtmpListenPath("rtmp://0.0.0.0:1935/live")),
        ("rtmp://0.0.0.0:1935/live/cam1/more", .rtmpListenPath("rtmp://0.0.0.0:1935/live/cam1/more")),
        ("rtmp://0.0.0.0:1935", .rtmpListenPath("rtmp://0.0.0.0:1935")),
    ]

    /// `--listen rtmp://ADDR:PORT/APP/KEY`: a host, and a path of an application and a stream key.
    @Test(arguments: rtmpRefusals)
    func anRTMPListenAddressRefused(_ url: String, _ error: PlanError) {
        #expect(throws: error) { try RTMPListenAddress(url) }
    }

    @Test func anRTMPListenAddressNamesItsParts() throws {
        let address = try RTMPListenAddress("rtmp://127.0.0.1/live/cam1?user=a")
        #expect(address.host == "127.0.0.1" && address.port == 1935 && address.app == "live" && address.key == "cam1?user=a")
        let told = try RTMPListenAddress("rtmp://0.0.0.0:1936//studio/cam2")
        #expect(told.port == 1936 && told.app == "studio" && told.key == "cam2")
    }
}
