import CFFmpeg
import Glibc

/// Which certificates an https input's servers must present: one that an authority in the system's
/// store (Debian's ca-certificates), or in `authorityFile`, signed for the URL's host name.
///
/// libavformat's TLS (GnuTLS in Debian's build) checks nothing unless `tls_verify` is set, and its
/// HLS demuxer hands only a few HTTP options (headers, cookies, user agent) to the playlist reloads
/// and segments it opens itself. So a verifying input opens every URL through `open`, which sets
/// `tls_verify` and `ca_file` on each https URL, the first and every one after.
public struct CertificateTrust: Sendable, Equatable {
    /// PEM certificates to trust instead of the system's store: a private authority, or a camera's own
    /// self-signed certificate.
    public var authorityFile: String?

    public init(authorityFile: String? = nil) {
        self.authorityFile = authorityFile
    }

    /// Whether an opener's failure was the server's certificate: GnuTLS says so in what it logs.
    static func isCertificateFailure(_ loggedMessage: String?) -> Bool {
        loggedMessage?.localizedCaseInsensitiveContains("certificate") == true
    }
}

extension CertificateTrust {
    /// Held by a format context (`opaque`) for as long as it lives, for `open` to read.
    final class Opener {
        /// For `ca_file`; nil: the system's store.
        let authorityFile: String?

        init(_ trust: CertificateTrust) {
            authorityFile = trust.authorityFile
        }

        /// Makes `context` open every URL through `open`.
        func install(on context: UnsafeMutablePointer<AVFormatContext>) -> Unmanaged<Opener> {
            let retained = Unmanaged.passRetained(self)
            context.pointee.opaque = retained.toOpaque()
            context.pointee.io_open = verifyingOpen
            return retained
        }
    }
}

/// `AVFormatContext.io_open` for a verifying input: libavformat's own opening (its interrupt callback,
/// no protocol list), with the TLS options added for an https URL. Errors its protocols log while it
/// opens count as the context's, so that a refused certificate is said as such.
private func verifyingOpen(
    _ context: UnsafeMutablePointer<AVFormatContext>?, _ pb: UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>?,
    _ url: UnsafePointer<CChar>?, _ flags: Int32, _ options: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    guard let context, let pb, let url, let opaque = context.pointee.opaque else { return hlscap_averror(EINVAL) }
    let opener = Unmanaged<CertificateTrust.Opener>.fromOpaque(opaque).takeUnretainedValue()
    if let options { return open(url, into: pb, flags: flags, options: options, for: context, opener) }
    var own: OpaquePointer?
    defer { av_dict_free(&own) }
    return withUnsafeMutablePointer(to: &own) { open(url, into: pb, flags: flags, options: $0, for: context, opener) }
}

private func open(_ url: UnsafePointer<CChar>, into pb: UnsafeMutablePointer<UnsafeMutablePointer<AVIOContext>?>,
                  flags: Int32, options: UnsafeMutablePointer<OpaquePointer?>,
                  for context: UnsafeMutablePointer<AVFormatContext>, _ opener: CertificateTrust.Opener) -> Int32 {
    let isSecure = strncasecmp(url, "https:", 6) == 0
    if isSecure {
        av_dict_set(options, "tls_verify", "1", 0)
        if let file = opener.authorityFile { av_dict_set(options, "ca_file", file, 0) }
    }
    var interrupt = context.pointee.interrupt_callback
    let result = FFmpegLog.attributingErrors(to: UnsafeMutableRawPointer(context)) {
        avio_open2(pb, url, flags, &interrupt, options)
    }
    // Left over when a redirect led away from TLS: the caller reports options that nothing took.
    if isSecure {
        av_dict_set(options, "tls_verify", nil, 0)
        av_dict_set(options, "ca_file", nil, 0)
    }
    return result
}
