import Foundation
import HLSBase
import HLSServer

/// `--tls-cert` and `--tls-key` read again while the server runs (SIGHUP): a renewal by certbot or
/// acme.sh takes effect at the next handshake, and viewers already connected keep theirs. A pair that
/// cannot be read or used is refused with one line, and the one in use stays.
final class CertificateReload: Sendable {
    let certificatePath: String
    let keyPath: String
    private let server = Locked<HTTPSServer?>(nil)

    init(certificatePath: String, keyPath: String) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
    }

    /// The server whose certificate a reload swaps; the last one given.
    func serve(_ https: HTTPSServer) {
        server.withLock { $0 = https }
    }

    func reload() {
        guard let https = server.withLock({ $0 }) else { return }
        guard let certificate = FileManager.default.contents(atPath: certificatePath),
              let key = FileManager.default.contents(atPath: keyPath) else {
            return printError("--tls-cert \(certificatePath) or --tls-key \(keyPath) cannot be read; "
                + "the certificate in use stays")
        }
        do {
            try https.reloadCertificate(key: String(decoding: key, as: UTF8.self),
                                        certificate: String(decoding: certificate, as: UTF8.self))
            printError("reloaded the certificate \(certificatePath) for new connections")
        } catch {
            printError("--tls-cert \(certificatePath), --tls-key \(keyPath): \(error); the certificate in use stays")
        }
    }
}
