import Foundation
import Glibc
import HLSBase
import HLSKit

/// The headers every kind of answer carries: content type, caching, CORS.
///
/// Caching is what makes a CDN in front safe: playlists are revalidated every time (`no-cache`),
/// media files never change once published and are cached for a year (`immutable`), and an error
/// is never stored.
enum ServerHeaders {
    static let immutable = "public, max-age=31536000, immutable"

    /// Web players on other origins may read the stream, and see its Resource Timing (the protocol,
    /// h2 or http/1.1, and the timings a player's own statistics report).
    static let cors: [(name: String, value: String)] = [
        ("Access-Control-Allow-Origin", "*"),
        ("Access-Control-Expose-Headers", "Content-Length, Content-Range, ETag, Age"),
        ("Timing-Allow-Origin", "*"),
    ]

    static let noStore: [(name: String, value: String)] = [("Cache-Control", "no-store")] + cors

    static func media(contentType: String) -> [(name: String, value: String)] {
        [("Content-Type", contentType), ("Cache-Control", immutable)] + cors
    }

    /// A playlist's bytes, gzipped when the client takes it, with an ETag of its content.
    static func playlist(_ bytes: [UInt8], cacheControl: String, gzip: Bool) -> HTTPResponse {
        var headers: [(name: String, value: String)] = [("Content-Type", StreamFileKind.playlistContentType), ("Cache-Control", cacheControl),
                                                         ("Vary", "Accept-Encoding")] + cors
        var body = bytes
        var tag = entityTag(of: bytes)
        if gzip, let packed = Gzip.compress(bytes) {
            body = packed
            headers.append(("Content-Encoding", "gzip"))
            tag = String(tag.dropLast()) + "-gz\""
        }
        headers.append(("ETag", tag))
        return HTTPResponse(status: 200, headers: headers, body: .bytes(body))
    }

    /// FNV-1a of the bytes: a strong tag for content held in memory.
    static func entityTag(of bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return "\"" + String(hash, radix: 16) + "\""
    }

    /// `text` without the spaces and tabs around it: what trimming `.whitespaces` does to ASCII.
    private static func trimmedSpacesAndTabs(_ text: Substring) -> String {
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        let bytes = text.utf8
        guard let first = bytes.firstIndex(where: { !blank($0) }), let last = bytes.lastIndex(where: { !blank($0) }) else {
            return ""
        }
        return String(text[first...last])
    }

    /// Whether the client asked for gzip (and did not refuse it with q=0).
    static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        // An ASCII header (every one a player sends) is trimmed without Foundation: this runs on
        // every playlist request. A list without parameters ("gzip, deflate, br") is read by bytes.
        let ascii = header.utf8.allSatisfy { $0 < 0x80 }
        if ascii && !header.utf8.contains(UInt8(ascii: ";")) {
            let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
            return header.utf8.split(separator: UInt8(ascii: ",")).contains { item in
                guard let first = item.firstIndex(where: { !blank($0) }), let last = item.lastIndex(where: { !blank($0) })
                else { return false }
                return gzipCodings.contains { $0.elementsEqual(item[first...last].lazy.map(HeaderBytes.lowercased)) }
            }
        }
        return header.split(separator: ",").contains { item in
            let fields = item.split(separator: ";").map { ascii ? trimmedSpacesAndTabs($0) : $0.trimmingCharacters(in: .whitespaces) }
            guard let coding = fields.first?.lowercased(), coding == "gzip" || coding == "x-gzip" else { return false }
            return !fields.dropFirst().contains { $0.replacingOccurrences(of: " ", with: "").hasPrefix("q=0")
                && Double($0.dropFirst(2)) == 0 }
        }
    }

    /// The content codings that name gzip (RFC 9110 8.4.1.3), lower case.
    private static let gzipCodings = [Array("gzip".utf8), Array("x-gzip".utf8)]

    /// An HTTP date (RFC 9110 5.6.7), "Sun, 06 Nov 1994 08:49:37 GMT".
    static func httpDate(secondsSince1970 seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The `Date` header every answer carries: now, made once a second rather than once an answer.
    static func currentHTTPDate() -> String {
        let now = Int(time(nil))
        return currentDate.withLock { cached in
            if cached.second != now { cached = (now, httpDate(secondsSince1970: now)) }
            return cached.text
        }
    }

    private static let currentDate = Locked((second: -1, text: ""))

    /// Seconds since 1970 of an HTTP date ("Sun, 06 Nov 1994 08:49:37 GMT"), or nil.
    static func parseHTTPDate(_ text: String) -> Int? {
        let fields = text.split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard fields.count == 6, fields[5] == "GMT", let day = Int(fields[1]), let year = Int(fields[3]),
              let month = months.firstIndex(of: String(fields[2])) else { return nil }
        let clock = fields[4].split(separator: ":").compactMap { Int($0) }
        // Four-digit years and the clock's own ranges: beyond, the fields of `tm` overflow.
        guard clock.count == 3, (1...31).contains(day), (0...9999).contains(year), (0...23).contains(clock[0]),
              (0...59).contains(clock[1]), (0...60).contains(clock[2]) else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(clock[0])
        parts.tm_min = Int32(clock[1])
        parts.tm_sec = Int32(clock[2])
        return Int(timegm(&parts))
    }
}
