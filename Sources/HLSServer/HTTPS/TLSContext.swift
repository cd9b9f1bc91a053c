import CSSL

/// An OpenSSL server context made from PEM text: the certificate file (the server's certificate first,
/// then any intermediates of its chain) and the private key. TLS 1.2 at least, ALPN offering `h2` then
/// `http/1.1`, and an OCSP response stapled when one is given (`OCSPStaple`). The one owner of its
/// `SSL_CTX` and of the staple's bytes; each connection holds the context it began with, so a replaced
/// context lives on for them.
///
/// Making one is the one check of a pair and its response: a command makes it when it reads its
/// options (and can refuse them before anything starts), then hands it to the server.
public final class TLSContext: @unchecked Sendable {
    public struct Invalid: Error, CustomStringConvertible {
        public var description: String
        /// Set when what is wrong is the OCSP response: why, what to do, and whether it only expired.
        public var ocsp: OCSPStaple.Invalid?
    }

    let pointer: OpaquePointer
    private var staple: Staple?

    /// `ocspResponse`, DER, must pass `OCSPStaple`'s check for the certificate.
    public init(key: String, certificate: String, ocspResponse: [UInt8]? = nil) throws(Invalid) {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw Invalid(description: Self.failure("cannot make a TLS context")) }
        pointer = context
        guard hlscap_ssl_ctx_prepare(context) == 1 else { throw Invalid(description: Self.failure("cannot ask for TLS 1.2 or later")) }
        var chain = Self.certificates(in: certificate)
        guard !chain.isEmpty else { throw Invalid(description: "the certificate file holds no PEM certificate") }
        let leaf = chain.removeFirst()
        let used = SSL_CTX_use_certificate(context, leaf)
        X509_free(leaf)
        guard used == 1 else {
            chain.forEach { X509_free($0) }
            throw Invalid(description: Self.failure("the certificate cannot be used"))
        }
        for (index, intermediate) in chain.enumerated() where hlscap_ssl_ctx_add_chain_certificate(context, intermediate) != 1 {
            chain[index...].forEach { X509_free($0) }
            throw Invalid(description: Self.failure("an intermediate certificate cannot be used"))
        }
        let privateKey = Self.withMemoryBIO(key) { PEM_read_bio_PrivateKey($0, nil, nil, nil) }
        guard let privateKey else { throw Invalid(description: Self.failure("the key file holds no PEM private key")) }
        defer { EVP_PKEY_free(privateKey) }
        guard SSL_CTX_use_PrivateKey(context, privateKey) == 1, SSL_CTX_check_private_key(context) == 1 else {
            throw Invalid(description: Self.failure("the private key does not match the certificate"))
        }
        if let ocspResponse { try useStaple(ocspResponse) }
    }

    // The staple goes after the context that points at it.
    deinit { SSL_CTX_free(pointer) }

    /// The response's bytes and expiry where the handshake's C callback reads them.
    private struct Staple: ~Copyable {
        let pointer: UnsafeMutablePointer<hlscap_ocsp_staple>

        init(der: [UInt8], expires: time_t?) {
            let bytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: der.count)
            _ = bytes.initialize(from: der)
            pointer = .allocate(capacity: 1)
            pointer.initialize(to: hlscap_ocsp_staple(der: bytes.baseAddress, length: der.count, expires: expires ?? 0))
        }

        deinit {
            UnsafeMutableRawPointer(mutating: pointer.pointee.der)?.deallocate()
            pointer.deallocate()
        }
    }

    /// Staples `der` to the handshakes that ask, once it is checked against the context's certificates.
    private func useStaple(_ der: [UInt8]) throws(Invalid) {
        var chain: OpaquePointer?
        guard let leaf = SSL_CTX_get0_certificate(pointer), hlscap_ssl_ctx_get0_chain_certificates(pointer, &chain) == 1 else {
            throw Invalid(description: Self.failure("the certificate cannot be read back"))
        }
        let intermediates = (0..<max(0, OPENSSL_sk_num(chain))).compactMap { OpaquePointer(OPENSSL_sk_value(chain, $0)) }
        let expires: time_t?
        do {
            expires = try OCSPStaple.check(der, leaf: leaf, chain: intermediates, at: time(nil))
        } catch {
            throw Invalid(description: "the OCSP response \(error)", ocsp: error)
        }
        let staple = Staple(der: der, expires: expires)
        let callbackArgument = staple.pointer
        self.staple = consume staple
        guard hlscap_ssl_ctx_staple_ocsp(pointer, callbackArgument) == 1 else {
            throw Invalid(description: Self.failure("cannot staple the OCSP response"))
        }
    }

    /// Every certificate of a PEM text, in order; the caller owns them.
    static func certificates(in pem: String) -> [OpaquePointer] {
        let read = withMemoryBIO(pem) { bio -> [OpaquePointer] in
            var certificates: [OpaquePointer] = []
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) { certificates.append(certificate) }
            return certificates
        } ?? []
        // The loop ends on "no more PEM", which leaves an error queued that is no error.
        ERR_clear_error()
        return read
    }

    /// `body` with a BIO reading `text`; nil when OpenSSL cannot make one.
    private static func withMemoryBIO<T>(_ text: String, _ body: (OpaquePointer) -> T?) -> T? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            return body(bio)
        }
    }

    /// `what`, with OpenSSL's reason when it gave one; clears its queue.
    static func failure(_ what: String) -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return what }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return "\(what) (\(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))"
    }
}
