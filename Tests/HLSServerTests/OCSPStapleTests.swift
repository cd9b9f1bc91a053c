import CSSL
import Foundation
import Glibc
import HLSBase
import HLSTestSupport
import Testing
@testable import HLSServer

/// OCSP stapling: responses made by openssl's own responder for certificates of a test authority, and a
/// libssl client that asks for the certificate's status or does not.
@Suite(.serialized) struct OCSPStapleTests {
    /// A certificate the authority signed, its key, and the authority's OCSP response about it.
    struct Served {
        let pem: PEMPair
        let response: [UInt8]

        init(_ authority: TestAuthority, name: String) throws {
            let made = try authority.issue(name: name)
            pem = try PEMPair(files: made)
            response = try Self.read(try authority.ocspResponse(for: made.certificate, name: name))
        }

        static func read(_ path: String) throws -> [UInt8] {
            Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
    }

    let directory: URL
    let authority: TestAuthority
    let served: Served

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ocsp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        authority = try TestAuthority(in: directory)
        served = try Served(authority, name: "served")
    }

    func start(_ served: Served) throws -> HTTPSServer {
        var configuration = HTTPServer.Configuration(address: try ListenAddress("127.0.0.1:0"))
        configuration.tls = (served.pem.key, served.pem.certificate)
        configuration.ocspResponse = served.response
        return try HTTPSServer(configuration: configuration) { _ in .now(.text(200, "ok")) }
    }

    /// One handshake with the server: the OCSP response it stapled, nil when none.
    static func stapledResponse(port: Int, askingForStatus: Bool) throws -> [UInt8]? {
        let socket = try TestSocket(port: port)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let context = try #require(SSL_CTX_new(TLS_client_method()))
        defer { SSL_CTX_free(context) }
        let ssl = try #require(SSL_new(context))
        defer { SSL_free(ssl) }
        SSL_set_fd(ssl, socket.descriptor)
        if askingForStatus { SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_STATUS_REQ_TYPE, Int(TLSEXT_STATUSTYPE_ocsp), nil) }
        try #require(SSL_connect(ssl) == 1, "the handshake failed")
        var response: UnsafeMutablePointer<UInt8>?
        let length = SSL_ctrl(ssl, SSL_CTRL_GET_TLSEXT_STATUS_REQ_OCSP_RESP, 0, &response)
        guard let response, length > 0 else { return nil }
        return Array(UnsafeBufferPointer(start: response, count: length))
    }

    @Test func aClientThatAsksGetsTheResponseAndOneThatDoesNotGetsNone() throws {
        let server = try start(served)
        defer { server.stop() }
        // OpenSSL frees the staple after each handshake: every one gets a copy.
        for _ in 0..<3 {
            #expect(try Self.stapledResponse(port: server.port, askingForStatus: true) == served.response)
        }
        #expect(try Self.stapledResponse(port: server.port, askingForStatus: false) == nil)
    }

    @Test func aResponseThatCannotBeStapledIsRefusedWithWhy() throws {
        let other = try Served(authority, name: "other")
        let revoked = try Served.read(try authority.ocspResponse(for: served.pem.certificatePath, name: "revoked", revoked: true))
        let end = "-----END CERTIFICATE-----\n"
        let leafAlone = served.pem.certificate.components(separatedBy: end)[0] + end
        let now = Date()
        let refusals: [(response: [UInt8], certificate: String, at: Date, reason: String, expired: Bool)] = [
            (other.response, served.pem.certificate, now, "is for another certificate than the one served", false),
            (served.response, served.pem.certificate, now.addingTimeInterval(2 * 86_400), "expired at ", true),
            (served.response, served.pem.certificate, now.addingTimeInterval(-86_400), "is not valid before ", false),
            (revoked, served.pem.certificate, now, "says the certificate is revoked", false),
            (served.response, leafAlone, now, "the certificate file holds no issuer of its certificate", false),
            (Array("not DER".utf8), served.pem.certificate, now, "is not an OCSP response in DER", false),
        ]
        for refusal in refusals {
            do {
                try OCSPStaple.check(refusal.response, certificate: refusal.certificate, at: refusal.at)
                Issue.record("accepted; expected \"\(refusal.reason)\"")
            } catch {
                #expect(error.description.contains(refusal.reason), "\(error)")
                #expect(error.hasExpired == refusal.expired, "\(error)")
            }
        }
        try OCSPStaple.check(served.response, certificate: served.pem.certificate, at: now)
        var configuration = HTTPServer.Configuration(address: try ListenAddress("127.0.0.1:0"))
        configuration.tls = (served.pem.key, served.pem.certificate)
        configuration.ocspResponse = other.response
        #expect {
            _ = try HTTPSServer(configuration: configuration) { _ in .now(.text(200, "ok")) }
        } throws: { error in
            "\(error)" == "cannot serve HTTPS: the OCSP response is for another certificate than the one served"
        }
    }

    @Test func aReloadSwapsTheResponseAndABadOneLeavesTheOldInPlace() throws {
        let server = try start(served)
        defer { server.stop() }
        let renewed = try Served(authority, name: "renewed")
        try server.reloadCertificate(key: renewed.pem.key, certificate: renewed.pem.certificate, ocspResponse: renewed.response)
        #expect(try Self.stapledResponse(port: server.port, askingForStatus: true) == renewed.response)
        #expect(throws: HTTPServer.StartError.self) {
            try server.reloadCertificate(key: served.pem.key, certificate: served.pem.certificate, ocspResponse: renewed.response)
        }
        #expect(try Self.stapledResponse(port: server.port, askingForStatus: true) == renewed.response)
        try server.reloadCertificate(key: served.pem.key, certificate: served.pem.certificate)
        #expect(try Self.stapledResponse(port: server.port, askingForStatus: true) == nil, "a pair reloaded alone staples nothing")
    }
}
