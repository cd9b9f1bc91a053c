import CCurl
import Foundation
import HLSKit

/// Reads `http(s)://` URLs with libcurl, trusting the certificate authorities of a PEM file (a private
/// authority, or a server's own self-signed certificate) instead of the system's; `file://` URLs from disk.
/// URLSession on Linux offers no way to name the authorities, hence libcurl itself.
public final class CurlLoader: ResourceLoader {
    /// The PEM file of trusted authorities.
    public let authorityFile: String
    private let timeoutSeconds: Double

    public init(authorityFile: String, timeoutSeconds: Double = 15) {
        self.authorityFile = authorityFile
        self.timeoutSeconds = timeoutSeconds
    }

    /// The body as it arrives; libcurl calls `append` through an opaque pointer to it.
    private final class Body {
        var bytes: [UInt8] = []
    }

    public func load(_ url: URL) throws(LoadError) -> [UInt8] {
        if url.isFileURL {
            return try FileLoader().load(url)
        }
        let name = url.absoluteString
        guard let handle = curl_easy_init() else { throw .readFailed("\(name): libcurl cannot start a transfer") }
        defer { curl_easy_cleanup(handle) }
        let body = Body()
        var errorText = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let code = errorText.withUnsafeMutableBufferPointer { errorBuffer in
            withExtendedLifetime(body) {
                hlscap_curl_set_string(handle, CURLOPT_URL, name)
                hlscap_curl_set_string(handle, CURLOPT_CAINFO, authorityFile)
                hlscap_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
                hlscap_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 1)
                hlscap_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
                hlscap_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(timeoutSeconds * 1000))
                hlscap_curl_set_long(handle, CURLOPT_TIMEOUT_MS, Int(timeoutSeconds * 4000))
                hlscap_curl_set_string(handle, CURLOPT_ACCEPT_ENCODING, "")
                hlscap_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer.baseAddress)
                hlscap_curl_set_pointer(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(body).toOpaque())
                hlscap_curl_set_write_function(handle) { data, size, count, context in
                    guard let data, let context else { return 0 }
                    let body = Unmanaged<Body>.fromOpaque(context).takeUnretainedValue()
                    body.bytes += UnsafeRawBufferPointer(start: data, count: size * count)
                    return size * count
                }
                return curl_easy_perform(handle)
            }
        }
        guard code == CURLE_OK else {
            let written = errorText.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            let detail = written.isEmpty ? String(cString: curl_easy_strerror(code)) : String(decoding: written, as: UTF8.self)
            let unreachable: Set<CURLcode> = [CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_OPERATION_TIMEDOUT]
            if unreachable.contains(code) { throw .unreachable("\(name): \(detail)") }
            throw code == CURLE_PEER_FAILED_VERIFICATION ? .untrusted("\(name): \(detail)") : .readFailed("\(name): \(detail)")
        }
        var status = 0
        hlscap_curl_response_code(handle, &status)
        return try URLSessionLoader.httpResult(name: name, status: status, body: body.bytes).get()
    }
}
