import CHTTPParser

/// HTTP/1.1 on one TLS connection (a client that chose `http/1.1` by ALPN or offered none), with
/// Node's http-parser: keep-alive, pipelining (one request answered at a time, in order), HEAD, 431 for
/// a request header over the limit, 505 for a version other than 1.x and 400 for one that does not parse.
/// A growing body goes out in chunks as it grows (to an HTTP/1.0 client: as it is, then the connection
/// closes).
///
/// Why not libmicrohttpd behind TLS, as over plain HTTP: it does its own TLS (GnuTLS) and reads its
/// own sockets, so it cannot take a connection whose handshake OpenSSL made and whose ALPN chose
/// HTTP/1.1. A parser fed by the same loop keeps one TLS stack, one certificate reload and one set of
/// bounds for both protocols.
///
/// Called on the loop's thread only; owns its parser.
final class HTTP1Session: ConnectionSession {
    private enum State {
        /// Reading a request.
        case reading
        /// The handler holds the request `ticket` for a later answer.
        case waiting(ticket: Int32)
        /// Sending an answer, its body in chunks when `chunked`; the connection closes after it when
        /// `closeAfter`.
        case writing(head: [UInt8]?, body: ResponseBody?, chunked: Bool, closeAfter: Bool)
        case closing
    }

    private let parser: UnsafeMutablePointer<http_parser>
    private let settings: UnsafeMutablePointer<http_parser_settings>
    private unowned let connection: TLSConnection
    private unowned let loop: TLSEventLoop
    private let headerLimitBytes: Int
    private let headerTimeoutSeconds: Double
    private var state = State.reading
    private var nextTicket: Int32 = 0
    /// Bytes after a whole request, parsed once it is answered (one read at most).
    private var unparsed: [UInt8] = []
    /// Where a growing body's next piece is read before it joins the output as a chunk.
    private var scratch = [UInt8](repeating: 0, count: 16 * 1024)

    // The request being read.
    private var target: [UInt8] = []
    private var field: [UInt8] = []
    private var value: [UInt8] = []
    private var readsValue = false
    private var headers: [String: String] = [:]
    private var headerBytes = 0
    private var tooLarge = false
    private var unsupportedVersion = false
    private var method = ""
    private var keepAlive = true
    /// The request is HTTP/1.0, which has no chunked coding.
    private var isHTTP10 = false

    init(connection: TLSConnection, loop: TLSEventLoop, headerLimitBytes: Int, headerTimeoutSeconds: Double) {
        self.connection = connection
        self.loop = loop
        self.headerLimitBytes = headerLimitBytes
        self.headerTimeoutSeconds = headerTimeoutSeconds
        parser = .allocate(capacity: 1)
        http_parser_init(parser, HTTP_REQUEST)
        settings = .allocate(capacity: 1)
        http_parser_settings_init(settings)
        settings.pointee.on_message_begin = { parser in session(parser)?.beginMessage() ?? 1 }
        settings.pointee.on_url = { parser, at, length in session(parser)?.take(.url, at, length) ?? 1 }
        settings.pointee.on_header_field = { parser, at, length in session(parser)?.take(.field, at, length) ?? 1 }
        settings.pointee.on_header_value = { parser, at, length in session(parser)?.take(.value, at, length) ?? 1 }
        settings.pointee.on_headers_complete = { parser in session(parser)?.headersComplete() ?? 1 }
        settings.pointee.on_message_complete = { parser in
            // Whole: parsing pauses here until the answer is sent.
            http_parser_pause(parser, 1)
            return 0
        }
        parser.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        parser.deallocate()
        settings.deallocate()
    }

    // MARK: ConnectionSession

    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        parse(bytes)
        return true
    }

    func produce(into output: OutputBuffer, limit: Int) -> Bool {
        while case .writing(let head, let body, let chunked, let closeAfter) = state {
            if let head {
                output.append(head)
                state = .writing(head: nil, body: body, chunked: chunked, closeAfter: closeAfter)
            }
            if let body {
                guard output.count < limit else { return true }
                switch chunked ? readChunk(of: body, into: output) : read(body, into: output, limit: limit) {
                case .bytes:
                    continue
                case .waiting:
                    // The body's wake-up brings the loop back here.
                    return true
                case .failed:
                    // The length was promised, or the last chunk never comes: the connection ends, once
                    // the bytes already given are out.
                    return output.count > 0
                case .end:
                    if chunked { output.append(Self.lastChunk) }
                }
            }
            if closeAfter {
                state = .closing
                return true
            }
            nextRequest()
        }
        return true
    }

    /// Reads the body's next bytes straight into the output, up to `limit` in all.
    private func read(_ body: ResponseBody, into output: OutputBuffer, limit: Int) -> ResponseBody.Piece {
        output.append(reading: limit - output.count) { free in
            let piece = body.read(into: free)
            guard case .bytes(let count) = piece else { return (0, piece) }
            return (count, piece)
        }
    }

    /// Reads the body's next bytes as one chunk: its size in hexadecimal, the bytes, a line end (RFC 9112 7.1).
    private func readChunk(of body: ResponseBody, into output: OutputBuffer) -> ResponseBody.Piece {
        scratch.withUnsafeMutableBytes { scratch in
            let piece = body.read(into: scratch)
            if case .bytes(let count) = piece {
                var size = String(count, radix: 16)
                size.withUTF8 { output.append(UnsafeRawBufferPointer($0)) }
                output.append(Self.lineEnd)
                output.append(UnsafeRawBufferPointer(rebasing: scratch.prefix(count)))
                output.append(Self.lineEnd)
            }
            return piece
        }
    }

    func deliver(_ response: HTTPResponse, ticket: Int32) {
        guard case .waiting(let waiting) = state, waiting == ticket else { return }
        answer(response, closeAfter: !keepAlive)
    }

    /// One answer is sent at a time: the loop's next write goes on with it.
    func resumeBody(ticket: Int32) {}

    func answerWaitingBeforeStop() {
        guard case .waiting = state else { return }
        answer(.text(503, "the server is stopping"), closeAfter: true)
    }

    var wantsInput: Bool {
        if case .reading = state { return true }
        return false
    }

    var isFinished: Bool {
        if case .closing = state { return true }
        return false
    }

    var isIdle: Bool {
        if case .waiting = state { return false }
        return true
    }

    // MARK: Parsing

    private func parse(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let consumed = http_parser_execute(parser, settings, base.assumingMemoryBound(to: CChar.self), bytes.count)
        let error = hlscap_http_parser_errno(parser)
        if error == HPE_PAUSED.rawValue {
            unparsed = Array(bytes[min(consumed, bytes.count)...])
            return requestComplete()
        }
        if error != HPE_OK.rawValue {
            let refusal: HTTPResponse = tooLarge ? .text(431, "request header fields too large")
                : unsupportedVersion ? .text(505, "HTTP version not supported") : .text(400, "bad request")
            answer(refusal, closeAfter: true)
        }
    }

    private enum Part {
        case url, field, value
    }

    private func beginMessage() -> Int32 {
        target = []
        field = []
        value = []
        readsValue = false
        headers = [:]
        headerBytes = 0
        tooLarge = false
        unsupportedVersion = false
        return 0
    }

    private func take(_ part: Part, _ at: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        headerBytes += length
        guard headerBytes <= headerLimitBytes else {
            tooLarge = true
            return 1
        }
        let bytes = UnsafeRawBufferPointer(start: at, count: at == nil ? 0 : length)
        switch part {
        case .url:
            target.append(contentsOf: bytes)
        case .field:
            if readsValue { storeHeader() }
            field.append(contentsOf: bytes)
        case .value:
            readsValue = true
            value.append(contentsOf: bytes)
        }
        return 0
    }

    private func storeHeader() {
        headers[String(decoding: field, as: UTF8.self).lowercased()] = String(decoding: value, as: UTF8.self)
        field = []
        value = []
        readsValue = false
    }

    private func headersComplete() -> Int32 {
        // http-parser takes any version up to 999.999; this is an HTTP/1.x server.
        guard parser.pointee.http_major == 1 else {
            unsupportedVersion = true
            return 1
        }
        if readsValue || !field.isEmpty { storeHeader() }
        method = String(cString: hlscap_http_parser_method(parser))
        keepAlive = http_should_keep_alive(parser) != 0
        isHTTP10 = parser.pointee.http_minor == 0
        connection.headerDeadlineSeconds = nil
        return 0
    }

    private func requestComplete() {
        let target = RequestTarget(self.target)
        let request = HTTPRequest(method: method, path: target.path, query: target.query, headers: headers,
                                  client: connection.client)
        nextTicket &+= 1
        state = .waiting(ticket: nextTicket)
        loop.dispatch(request, from: connection, ticket: nextTicket)
    }

    /// The answer is out: the next request's header is owed from now, and may already be here.
    private func nextRequest() {
        state = .reading
        connection.headerDeadlineSeconds = TLSEventLoop.nowSeconds() + headerTimeoutSeconds
        http_parser_pause(parser, 0)
        let leftover = unparsed
        unparsed = []
        leftover.withUnsafeBytes { parse($0) }
    }

    // MARK: Responses

    private func answer(_ response: HTTPResponse, closeAfter: Bool) {
        guard let body = ResponseBody(response.body) else { return answer(.text(404, "not found"), closeAfter: closeAfter) }
        let sendsBody = method != "HEAD" && response.statusAllowsBody && body.length != 0
        // A growing body has no length to promise: chunks, or to an HTTP/1.0 client the end of the connection.
        let chunked = sendsBody && body.isGrowing && !isHTTP10
        let closeAfter = closeAfter || sendsBody && body.isGrowing && isHTTP10
        // Written as bytes: this runs on every answer.
        var head: [UInt8] = []
        head.reserveCapacity(Self.headCapacity)
        head.append(contentsOf: "HTTP/1.1 ".utf8)
        HeaderBytes.appendDecimal(response.status, to: &head)
        head.append(UInt8(ascii: " "))
        head.append(contentsOf: Self.reason(response.status).utf8)
        head.append(contentsOf: Self.lineEnd)
        var hasLength = false
        for (name, value) in response.headers {
            guard !HeaderBytes.name(name, is: "connection"), !HeaderBytes.name(name, is: "transfer-encoding") else { continue }
            let isLength = HeaderBytes.name(name, is: "content-length")
            guard !(isLength && body.isGrowing) else { continue }
            hasLength = hasLength || isLength
            Self.appendField(name, value, to: &head)
        }
        if !hasLength && response.statusAllowsBody, let length = body.length {
            head.append(contentsOf: "Content-Length: ".utf8)
            HeaderBytes.appendDecimal(length, to: &head)
            head.append(contentsOf: Self.lineEnd)
        }
        if chunked { Self.appendField("Transfer-Encoding", "chunked", to: &head) }
        Self.appendField("Date", ServerHeaders.currentHTTPDate(), to: &head)
        if closeAfter { Self.appendField("Connection", "close", to: &head) }
        head.append(contentsOf: Self.lineEnd)
        // Only a growing body wakes the loop: other answers make no wake-up.
        if sendsBody, body.isGrowing { body.watch(loop.bodyWakeUp(for: connection, ticket: nextTicket)) }
        state = .writing(head: head, body: sendsBody ? body : nil, chunked: chunked, closeAfter: closeAfter)
        loop.countAnswer()
    }

    /// Room for a usual answer's head, so that writing one allocates once.
    private static let headCapacity = 512
    private static let lineEnd = Array("\r\n".utf8)
    private static let lastChunk = Array("0\r\n\r\n".utf8)

    private static func appendField(_ name: String, _ value: String, to head: inout [UInt8]) {
        head.append(contentsOf: name.utf8)
        head.append(contentsOf: ": ".utf8)
        head.append(contentsOf: value.utf8)
        head.append(contentsOf: lineEnd)
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 410: "Gone"
        case 416: "Range Not Satisfiable"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 505: "HTTP Version Not Supported"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}

private func session(_ parser: UnsafeMutablePointer<http_parser>?) -> HTTP1Session? {
    guard let data = parser?.pointee.data else { return nil }
    return Unmanaged<HTTP1Session>.fromOpaque(data).takeUnretainedValue()
}
