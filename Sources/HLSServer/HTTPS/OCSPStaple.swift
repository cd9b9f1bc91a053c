import CSSL
import Foundation

/// An OCSP response (RFC 6960, DER, as `openssl ocsp … -respout` writes it) that the HTTPS server staples to
/// the handshakes whose client asks for the certificate's status, as nginx's `ssl_stapling_file` and
/// HAProxy's `.ocsp` file do; fetching it is the renewal job's business. A response is used only when it
/// vouches for the certificate served: successful, one of its answers for the certificate and its issuer,
/// that answer "good", current.
public enum OCSPStaple {
    /// How far ahead of this machine's clock the responder's may run.
    static let clockSkewSeconds = 300

    public struct Invalid: Error, CustomStringConvertible {
        /// What is wrong, as the rest of a sentence that starts with the file: "is for another certificate …".
        public var description: String
        /// What to do about it.
        public var advice = fetch
        /// The response was right once; only a newer one will do.
        public var hasExpired = false

        static let fetch = "fetch a current one for the certificate served (openssl ocsp -issuer … -cert … -url … -respout …)"
        static let askItsResponder = "fetch one from the certificate's own responder (openssl x509 -noout -ocsp_uri)"
    }

    /// Checks `der` against the certificate file's first certificate, its issuer being one of the file's
    /// others (or itself, self-signed), at `now`.
    public static func check(_ der: [UInt8], certificate: String, at now: Date = Date()) throws(Invalid) {
        let chain = TLSContext.certificates(in: certificate)
        defer { chain.forEach { X509_free($0) } }
        guard let leaf = chain.first else { throw Invalid(description: "cannot be checked: the certificate file holds no PEM certificate",
                                                      advice: "give the certificate in PEM") }
        _ = try check(der, leaf: leaf, chain: Array(chain.dropFirst()), at: time_t(now.timeIntervalSince1970))
    }

    /// The same check with the certificates as OpenSSL holds them; the response's nextUpdate (nil: none).
    static func check(_ der: [UInt8], leaf: OpaquePointer, chain: [OpaquePointer], at now: time_t) throws(Invalid) -> time_t? {
        let response = der.withUnsafeBufferPointer { buffer in
            var start = buffer.baseAddress
            return d2i_OCSP_RESPONSE(nil, &start, buffer.count)
        }
        guard let response else {
            ERR_clear_error()
            throw Invalid(description: "is not an OCSP response in DER")
        }
        defer { OCSP_RESPONSE_free(response) }
        let status = OCSP_response_status(response)
        guard status == OCSP_RESPONSE_STATUS_SUCCESSFUL else {
            throw Invalid(description: "is the responder's refusal (\(String(cString: OCSP_response_status_str(Int(status))))), "
                + "not a status", advice: Invalid.askItsResponder)
        }
        guard let basic = OCSP_response_get1_basic(response) else {
            ERR_clear_error()
            throw Invalid(description: "holds no basic OCSP response")
        }
        defer { OCSP_BASICRESP_free(basic) }
        let issuer = chain.first { X509_check_issued($0, leaf) == X509_V_OK } ?? (X509_check_issued(leaf, leaf) == X509_V_OK ? leaf : nil)
        guard let issuer else {
            throw Invalid(description: "cannot be matched: the certificate file holds no issuer of its certificate",
                          advice: "give the whole chain, as fullchain.pem holds it")
        }
        let single = (0..<OCSP_resp_count(basic)).lazy.compactMap { OCSP_resp_get0(basic, $0) }
            .first { answers($0, for: leaf, issuer: issuer) }
        guard let single else { throw Invalid(description: "is for another certificate than the one served") }
        var reason: Int32 = 0
        var revokedAt, thisUpdate, nextUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?
        let certificateStatus = OCSP_single_get0_status(single, &reason, &revokedAt, &thisUpdate, &nextUpdate)
        guard certificateStatus == V_OCSP_CERTSTATUS_GOOD else {
            let revoked = certificateStatus == V_OCSP_CERTSTATUS_REVOKED
            throw Invalid(description: "says the certificate is \(String(cString: OCSP_cert_status_str(Int(certificateStatus))))",
                          advice: revoked ? "serve a new certificate" : Invalid.askItsResponder)
        }
        if let thisUpdate, ASN1_TIME_cmp_time_t(thisUpdate, now + clockSkewSeconds) > 0 {
            throw Invalid(description: "is not valid before \(text(thisUpdate))", advice: "is this machine's clock right?")
        }
        guard let nextUpdate else { return nil }
        guard ASN1_TIME_cmp_time_t(nextUpdate, now) > 0 else {
            throw Invalid(description: "expired at \(text(nextUpdate))", hasExpired: true)
        }
        return seconds(nextUpdate)
    }

    /// Whether an answer of the response is about `leaf` from `issuer`, by the digest the responder chose.
    private static func answers(_ single: OpaquePointer, for leaf: OpaquePointer, issuer: OpaquePointer) -> Bool {
        guard let answered = OCSP_SINGLERESP_get0_id(single) else { return false }
        var digestName: OpaquePointer?
        guard OCSP_id_get0_info(nil, &digestName, nil, nil, answered) == 1,
              let digestName, let digest = EVP_get_digestbyname(OBJ_nid2sn(OBJ_obj2nid(digestName))),
              let ours = OCSP_cert_to_id(digest, leaf, issuer) else {
            ERR_clear_error()
            return false
        }
        defer { OCSP_CERTID_free(ours) }
        return OCSP_id_cmp(ours, answered) == 0
    }

    private static func seconds(_ time: UnsafePointer<ASN1_TIME>) -> time_t? {
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return timegm(&parts)
    }

    /// 2026-12-06T13:35:56Z.
    private static func text(_ time: UnsafePointer<ASN1_TIME>) -> String {
        guard let seconds = seconds(time) else { return "an unreadable time" }
        return ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}
