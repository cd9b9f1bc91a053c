import CNGHTTP2

/// The header fields of one HTTP/2 answer as nghttp2 takes them (`nghttp2_nv`s pointing into one byte
/// buffer), made without a string per field. An `HTTP2Session` keeps one and empties it for each
/// answer, so that its buffers are allocated once.
struct HTTP2HeaderBlock {
    /// Headers HTTP/2 forbids (RFC 9113 8.2.2).
    private static let connectionHeaders = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"]
        .map { Array($0.utf8) }
    private static let contentLength = Array("content-length".utf8)

    /// Names and values end to end, and where each is.
    private var bytes: [UInt8] = []
    private var ranges: [(name: Range<Int>, value: Range<Int>)] = []
    private var list: [nghttp2_nv] = []
    /// Whether one of the fields is a content-length.
    private(set) var hasContentLength = false

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ranges.removeAll(keepingCapacity: true)
        hasContentLength = false
    }

    /// Adds a field whose name is lower case already; `value` appends its value.
    mutating func add(_ name: StaticString, value: (inout [UInt8]) -> Void) {
        let nameStart = bytes.count
        bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        let valueStart = bytes.count
        value(&bytes)
        ranges.append((nameStart..<valueStart, valueStart..<bytes.count))
    }

    /// Adds a handler's field, its name in lower case, unless HTTP/2 forbids it.
    mutating func add(name: String, value: String) {
        let nameStart = bytes.count
        HeaderBytes.appendLowercased(name, to: &bytes)
        guard !Self.connectionHeaders.contains(where: { bytes[nameStart...].elementsEqual($0) }) else {
            bytes.removeSubrange(nameStart...)
            return
        }
        hasContentLength = hasContentLength || bytes[nameStart...].elementsEqual(Self.contentLength)
        let valueStart = bytes.count
        bytes.append(contentsOf: value.utf8)
        ranges.append((nameStart..<valueStart, valueStart..<bytes.count))
    }

    /// `body` with the fields as nghttp2 takes them (it copies them before `nghttp2_submit_response`
    /// returns).
    mutating func withList(_ body: (UnsafeBufferPointer<nghttp2_nv>) -> Int32) -> Int32 {
        list.removeAll(keepingCapacity: true)
        let ranges = ranges
        return bytes.withUnsafeMutableBufferPointer { bytes in
            guard let base = bytes.baseAddress else { return body(UnsafeBufferPointer(start: nil, count: 0)) }
            for range in ranges {
                list.append(nghttp2_nv(name: base + range.name.lowerBound, value: base + range.value.lowerBound,
                                       namelen: range.name.count, valuelen: range.value.count,
                                       flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
            }
            return list.withUnsafeBufferPointer(body)
        }
    }
}
