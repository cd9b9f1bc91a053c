/// A request target (`/path?query`) decoded as libmicrohttpd decodes it for `HTTPServer`, so a request
/// reads the same whichever server took it: the path percent-decoded (`+` kept), the query split on `&`
/// and `=` with `+` as a space and then percent-decoded, a name without `=` given an empty value, the
/// last of a repeated name kept. A `%` not followed by two hex digits stays as it is.
struct RequestTarget: Equatable {
    var path: String
    var query: [String: String]

    init(_ target: some Collection<UInt8>) {
        let bytes = Array(target)
        let mark = bytes.firstIndex(of: UInt8(ascii: "?"))
        path = Self.decoded(bytes[..<(mark ?? bytes.endIndex)], plusIsSpace: false)
        query = [:]
        guard let mark else { return }
        for argument in bytes[(mark + 1)...].split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = argument.firstIndex(of: UInt8(ascii: "="))
            let name = Self.decoded(argument[..<(equals ?? argument.endIndex)], plusIsSpace: true)
            let value = equals.map { Self.decoded(argument[($0 + 1)...], plusIsSpace: true) } ?? ""
            query[name] = value
        }
    }

    private static func decoded(_ bytes: ArraySlice<UInt8>, plusIsSpace: Bool) -> String {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.endIndex,
               let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                result.append(high << 4 | low)
                index += 3
                continue
            }
            result.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index += 1
        }
        return String(decoding: result, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
