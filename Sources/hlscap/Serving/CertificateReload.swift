import Foundation
import HLSBase
import HLSServer

/// `--tls-cert`, `--tls-key` and `--tls-ocsp` read again while the server runs (SIGHUP): a renewal by certbot
/// or acme.sh takes effect at the next handshake, and viewers already connected keep theirs. A pair or OCSP
/// response that cannot be read or used is refused with one line, and the ones in use stay; but a response
/// that has only expired is left out, as nginx staples only a valid one: the pair goes out without a staple.
final class CertificateReload: Sendable {
    let certificatePath: String
    let keyPath: String
    let ocspPath: String?
    private let server = Locked<HTTPSServer?>(nil)

    init(certificatePath: String, keyPath: String, ocspPath: String? = nil) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
        self.ocspPath = ocspPath
    }

    /// The server whose certificate a reload swaps; the last one given.
    func serve(_ https: HTTPSServer) {
        server.withLock { $0 = https }
    }

    func reload() {
        guard let https = server.withLock({ $0 }) else { return }
        guard let certificateData = FileManager.default.contents(atPath: certificatePath),
              let key = FileManager.default.contents(atPath: keyPath) else {
            return printError("--tls-cert \(certificatePath) or --tls-key \(keyPath) cannot be read; "
                + "the certificate in use stays")
        }
        let certificate = String(decoding: certificateData, as: UTF8.self)
        var ocspResponse: [UInt8]?
        if let ocspPath {
            guard let data = FileManager.default.contents(atPath: ocspPath) else {
                return printError("--tls-ocsp \(ocspPath) cannot be read; the certificate in use stays")
            }
            ocspResponse = Array(data)
        }
        var withoutStaple = ""
        let context: TLSContext
        do throws(TLSContext.Invalid) {
            do throws(TLSContext.Invalid) {
                context = try TLSContext(key: String(decoding: key, as: UTF8.self), certificate: certificate,
                                         ocspResponse: ocspResponse)
            } catch {
                guard let ocsp = error.ocsp, let ocspPath else { throw error }
                guard ocsp.hasExpired else {
                    return printError("--tls-ocsp \(ocspPath) \(ocsp); \(ocsp.advice); the certificate in use stays")
                }
                withoutStaple = ", without a staple: --tls-ocsp \(ocspPath) \(ocsp); \(ocsp.advice), then reload"
                ocspResponse = nil
                context = try TLSContext(key: String(decoding: key, as: UTF8.self), certificate: certificate)
            }
        } catch {
            return printError("--tls-cert \(certificatePath), --tls-key \(keyPath): cannot use the new certificate: \(error); "
                + "the certificate in use stays")
        }
        https.use(context)
        let staple = ocspResponse == nil ? "" : " and the OCSP response \(ocspPath ?? "")"
        printError("reloaded the certificate \(certificatePath)\(staple) for new connections\(withoutStaple)")
    }
}
