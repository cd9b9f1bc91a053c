import CFuzzerDriver
import Foundation
import HLSKit
import HLSServer

/// Credentials as clients present them: the input's lines are a path, a query string and an
/// Authorization header. A server with a token and a signing key decides; only the token, or a
/// signature made with the key for a prefix of the path that has not expired, lets a client in.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: count), as: UTF8.self)
    let lines = text.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
    let path = lines.first ?? ""
    var query: [String: String] = [:]
    for argument in (lines.count > 1 ? lines[1] : "").split(separator: "&") {
        let pair = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        query[String(pair[0])] = pair.count == 2 ? String(pair[1]) : ""
    }
    var headers: [String: String] = [:]
    if lines.count > 2 { headers["authorization"] = lines[2] }
    let request = HTTPRequest(method: "GET", path: path, query: query, headers: headers)
    if case .allowed = access.decide(request) {
        let byToken = query["token"] == token || (headers["authorization"] ?? "").hasSuffix(token)
        let signed = query["signature"].map { _ in
            query["prefix"].map { path.utf8.starts(with: $0.utf8) || path == "/" || path == "/index.html" } ?? false
        } ?? false
        guard byToken || signed else { fatalError("\(request) was let in without the token or a signature") }
    }
    // A URL signed for a prefix opens what is below it.
    let prefix = path.utf8.first == UInt8(ascii: "/") ? path : "/" + path
    let signedURL = AccessControl.signedQuery(prefix: prefix, expires: expires, key: key)
    var signedArguments: [String: String] = [:]
    for argument in signedURL.split(separator: "&") {
        let pair = argument.split(separator: "=", maxSplits: 1)
        signedArguments[String(pair[0])] = String(pair[1]).removingPercentEncoding
    }
    guard access.decide(HTTPRequest(method: "GET", path: prefix + "x", query: signedArguments)) != .refused else {
        fatalError("a URL signed for \(prefix) is refused below it: \(signedURL)")
    }
    return 0
}

private let token = "viewer-token"
private let key = Array("0123456789abcdef0123456789abcdef".utf8)
private let now = Date(timeIntervalSince1970: 1_767_225_600)
private let expires = 1_767_229_200
private let access = AccessControl(token: token, signingKey: key, clock: { now })

// Last, after the globals above are initialised: top-level code runs in order.
exit(hlscap_fuzz_run(CommandLine.argc, CommandLine.unsafeArgv, fuzz))
