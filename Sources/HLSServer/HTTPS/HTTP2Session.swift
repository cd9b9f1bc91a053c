import CNGHTTP2

/// HTTP/2 on one TLS connection, through nghttp2's server session: nghttp2 owns the framing, HPACK,
/// stream states, flow control and its defences (rapid resets, CONTINUATION floods, SETTINGS and
/// PING floods, streams over the limit), set below; this type adds what nghttp2 leaves to its user
/// (header blocks that decode to too much, a window kept shut on an answer), tells the loop why a
/// hostile client goes, and turns each complete request into an `HTTPRequest` and each answer into a
/// response whose body nghttp2 pulls as the client's window opens. Requests on one connection are
/// independent streams: many may wait for a later answer at once, each answered when it arrives. A
/// growing body is deferred while it has no new byte and resumed by its wake-up, through the loop.
///
/// The only owner of its `nghttp2_session`; called on the loop's thread only.
final class HTTP2Session: ConnectionSession {
    /// Streams a client may open at once (SETTINGS_MAX_CONCURRENT_STREAMS).
    static let streamLimit: UInt32 = 100
    /// RST_STREAM frames a client may send at once, and per second after (CVE-2023-44487); more and
    /// nghttp2 sends GOAWAY. nghttp2's defaults, written here to be seen.
    private static let resetBurst: UInt64 = 1000
    private static let resetsPerSecond: UInt64 = 33
    /// CONTINUATION frames after one HEADERS (CVE-2024-28182).
    private static let continuationLimit = 8
    /// SETTINGS and PING acknowledgements queued for a client that does not read them.
    private static let outboundAckLimit = 1000
    private static let settingsEntryLimit = 32
    /// A request whose header block decodes to this many times the header limit is an HPACK bomb:
    /// the connection closes (a merely large one gets 431).
    private static let headerBombFactor = 4

    private final class Stream {
        var method = ""
        var target: [UInt8] = []
        var authority: String?
        var headers: [String: String] = [:]
        var headerBytes = 0
        var tooLarge = false
        var dispatched = false
        var answered = false
        var body: ResponseBody?
        /// The body is a growing one with no new byte: nghttp2 holds the stream until it is resumed.
        var deferred = false
    }

    private var session: OpaquePointer?
    private var streams: [Int32: Stream] = [:]
    private unowned let connection: TLSConnection
    private unowned let loop: TLSEventLoop
    private let headerLimitBytes: Int
    /// Whether a request was ever whole: the header deadline holds until then.
    private var sawRequest = false
    /// A GOAWAY with an error went or is queued: nothing more is read.
    private var closing = false
    private var resetsReceived: UInt64 = 0
    /// When an answer's body last sent bytes, or began waiting to.
    private var lastBodyProgressSeconds = 0.0
    /// The output `produce` fills, while it runs: a body's DATA frames are read straight into it.
    private var sending: OutputBuffer?
    /// The header fields of the answer being submitted, kept from one answer to the next.
    private var fields = HTTP2HeaderBlock()

    /// nil when nghttp2 cannot make a session (no memory).
    init?(connection: TLSConnection, loop: TLSEventLoop, headerLimitBytes: Int) {
        self.connection = connection
        self.loop = loop
        self.headerLimitBytes = headerLimitBytes
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else { return nil }
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, user in
            guard let frame, let user else { return 0 }
            Unmanaged<HTTP2Session>.fromOpaque(user).takeUnretainedValue().beginHeaders(frame)
            return 0
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, let name, let value, let user else { return 0 }
            return Unmanaged<HTTP2Session>.fromOpaque(user).takeUnretainedValue()
                .header(frame, name: UnsafeBufferPointer(start: name, count: nameLength),
                        value: UnsafeBufferPointer(start: value, count: valueLength))
        }
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { _, frame, user in
            guard let frame, let user else { return 0 }
            Unmanaged<HTTP2Session>.fromOpaque(user).takeUnretainedValue().frameSent(frame)
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            guard let frame, let user else { return 0 }
            Unmanaged<HTTP2Session>.fromOpaque(user).takeUnretainedValue().frameReceived(frame)
            return 0
        }
        nghttp2_session_callbacks_set_send_data_callback(callbacks) { _, frame, header, length, _, user in
            guard let frame, let header, let user else { return NGHTTP2_ERR_CALLBACK_FAILURE.rawValue }
            return Unmanaged<HTTP2Session>.fromOpaque(user).takeUnretainedValue()
                .sendData(stream: frame.pointee.hd.stream_id, header: header, length: length,
                          padding: frame.pointee.data.padlen)
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamID, _, user in
            guard let user else { return 0 }
            Unmanaged<HTTP2Session>.fromOpaque(user).takeUnretainedValue().streams.removeValue(forKey: streamID)
            return 0
        }
        var options: OpaquePointer?
        guard nghttp2_option_new(&options) == 0, let options else { return nil }
        defer { nghttp2_option_del(options) }
        nghttp2_option_set_stream_reset_rate_limit(options, Self.resetBurst, Self.resetsPerSecond)
        nghttp2_option_set_max_continuations(options, Self.continuationLimit)
        nghttp2_option_set_max_outbound_ack(options, Self.outboundAckLimit)
        nghttp2_option_set_max_settings(options, Self.settingsEntryLimit)
        var made: OpaquePointer?
        guard nghttp2_session_server_new2(&made, callbacks, nil, options) == 0, let made else { return nil }
        session = made
        nghttp2_session_set_user_data(made, Unmanaged.passUnretained(self).toOpaque())
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                                   value: Self.streamLimit),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                                   value: UInt32(clamping: headerLimitBytes)),
        ]
        guard nghttp2_submit_settings(made, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count) == 0 else {
            return nil
        }
    }

    deinit {
        if let session { nghttp2_session_del(session) }
    }

    // MARK: ConnectionSession

    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let session, let base = bytes.baseAddress else { return false }
        guard !closing else { return true }
        // A negative count is a connection error (a bad preface, a flood): this connection closes.
        let result = nghttp2_session_mem_recv(session, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        guard result < 0 else { return true }
        loop.refuse(connection, Self.reason(forReceiveError: Int32(result)))
        return false
    }

    private static func reason(forReceiveError error: Int32) -> String {
        switch error {
        case NGHTTP2_ERR_TOO_MANY_CONTINUATIONS.rawValue: "closed: CONTINUATION flood (CVE-2024-28182)"
        case NGHTTP2_ERR_FLOODED.rawValue: "closed: SETTINGS or PING flood, acknowledgements not read"
        case NGHTTP2_ERR_TOO_MANY_SETTINGS.rawValue: "closed: SETTINGS frame of over \(settingsEntryLimit) entries"
        case NGHTTP2_ERR_BAD_CLIENT_MAGIC.rawValue: "closed: no HTTP/2 connection preface"
        default: "closed: HTTP/2 error (\(String(cString: nghttp2_strerror(error))))"
        }
    }

    func produce(into output: OutputBuffer, limit: Int) -> Bool {
        guard let session else { return false }
        sending = output
        defer { sending = nil }
        while output.count < limit {
            var data: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &data)
            guard count >= 0 else { return false }
            guard count > 0, let data else { return true }
            output.append(UnsafeRawBufferPointer(start: data, count: count))
        }
        return true
    }

    func deliver(_ response: HTTPResponse, ticket: Int32) {
        guard let stream = streams[ticket], !stream.answered else { return }
        submit(response, on: ticket, stream: stream)
    }

    func resumeBody(ticket: Int32) {
        guard let session, let stream = streams[ticket], stream.deferred else { return }
        stream.deferred = false
        // Bytes that waited on the producer, not on the client: the client's time to read them starts now.
        if !streamsWaitOnShutWindow { lastBodyProgressSeconds = TLSEventLoop.nowSeconds() }
        nghttp2_session_resume_data(session, ticket)
    }

    func answerWaitingBeforeStop() {
        for (id, stream) in streams where stream.dispatched && !stream.answered {
            submit(.text(503, "the server is stopping"), on: id, stream: stream)
        }
    }

    var wantsInput: Bool { !closing && session.map { nghttp2_session_want_read($0) != 0 } ?? false }

    var isFinished: Bool {
        guard let session else { return true }
        return (closing || nghttp2_session_want_read(session) == 0) && nghttp2_session_want_write(session) == 0
    }

    var windowShutSinceSeconds: Double? {
        streamsWaitOnShutWindow ? lastBodyProgressSeconds : nil
    }

    /// Whether an answer's bytes wait on a window the client keeps shut (a growing body waiting on its
    /// producer waits on no client).
    private var streamsWaitOnShutWindow: Bool {
        guard let session else { return false }
        let connectionShut = nghttp2_session_get_remote_window_size(session) <= 0
        return streams.contains { id, stream in
            guard let body = stream.body, !stream.deferred, !body.isGrowing || body.hasBytesToSend else { return false }
            return connectionShut || nghttp2_session_get_stream_remote_window_size(session, id) <= 0
        }
    }

    /// No request waits for a later answer (a stream whose answer the client does not read is idle).
    var isIdle: Bool { !streams.values.contains { $0.dispatched && !$0.answered } }

    // MARK: Called by nghttp2

    private func beginHeaders(_ frame: UnsafePointer<nghttp2_frame>) {
        guard frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue),
              frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST else { return }
        streams[frame.pointee.hd.stream_id] = Stream()
    }

    private func header(_ frame: UnsafePointer<nghttp2_frame>, name: UnsafeBufferPointer<UInt8>,
                        value: UnsafeBufferPointer<UInt8>) -> Int32 {
        guard let stream = streams[frame.pointee.hd.stream_id], !stream.dispatched else { return 0 }
        // Counted as SETTINGS_MAX_HEADER_LIST_SIZE counts (RFC 9113 6.5.2); over it the request gets 431.
        stream.headerBytes += name.count + value.count + 32
        let bombBytes = Self.headerBombFactor * headerLimitBytes
        guard stream.headerBytes <= bombBytes else {
            terminate("closed: request headers decoding to over \(bombBytes) bytes (HPACK bomb)")
            // Stops decoding this block: nghttp2 resets the stream.
            return Int32(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
        }
        guard !stream.tooLarge else { return 0 }
        guard stream.headerBytes <= headerLimitBytes else {
            stream.tooLarge = true
            stream.headers = [:]
            return 0
        }
        // Pseudo-header names are told by bytes: no string made for a name that is not kept.
        if name.first == UInt8(ascii: ":") {
            if name.elementsEqual(":method".utf8) {
                stream.method = String(decoding: value, as: UTF8.self)
            } else if name.elementsEqual(":path".utf8) {
                stream.target = Array(value)
            } else if name.elementsEqual(":authority".utf8) {
                stream.authority = String(decoding: value, as: UTF8.self)
            }
            return 0
        }
        let text = String(decoding: value, as: UTF8.self)
        switch String(decoding: name, as: UTF8.self) {
        // Cookies may come split over many fields (RFC 9113 8.2.3).
        case "cookie": stream.headers["cookie"] = stream.headers["cookie"].map { $0 + "; " + text } ?? text
        case let header: stream.headers[header] = text
        }
        return 0
    }

    /// Sends GOAWAY with ENHANCE_YOUR_CALM and reads no more: the client is hostile.
    private func terminate(_ reason: String) {
        guard let session, !closing else { return }
        loop.refuse(connection, reason)
        closing = true
        nghttp2_session_terminate_session(session, UInt32(NGHTTP2_ENHANCE_YOUR_CALM.rawValue))
    }

    private func frameSent(_ frame: UnsafePointer<nghttp2_frame>) {
        switch UInt32(frame.pointee.hd.type) {
        case NGHTTP2_GOAWAY.rawValue where frame.pointee.goaway.error_code != NGHTTP2_NO_ERROR.rawValue:
            // nghttp2's own GOAWAY (after too many resets, or a protocol error) leaves the session
            // reading; a hostile client is not read further.
            closing = true
            let code = String(cString: nghttp2_http2_strerror(frame.pointee.goaway.error_code))
            loop.refuse(connection, resetsReceived >= Self.resetBurst ? "closed: rapid stream resets (CVE-2023-44487)"
                                                                       : "closed: HTTP/2 \(code)")
        case NGHTTP2_RST_STREAM.rawValue where frame.pointee.rst_stream.error_code == NGHTTP2_REFUSED_STREAM.rawValue:
            loop.refuse(connection, "refused streams over the limit of \(Self.streamLimit) at once")
        default:
            break
        }
    }

    private func frameReceived(_ frame: UnsafePointer<nghttp2_frame>) {
        let type = UInt32(frame.pointee.hd.type)
        if type == NGHTTP2_RST_STREAM.rawValue { resetsReceived += 1 }
        guard type == NGHTTP2_HEADERS.rawValue || type == NGHTTP2_DATA.rawValue,
              frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0,
              let stream = streams[frame.pointee.hd.stream_id], !stream.dispatched else { return }
        stream.dispatched = true
        let id = frame.pointee.hd.stream_id
        if !sawRequest {
            sawRequest = true
            connection.headerDeadlineSeconds = nil
        }
        if stream.tooLarge {
            return submit(.text(431, "request header fields too large"), on: id, stream: stream)
        }
        let target = RequestTarget(stream.target)
        var headers = stream.headers
        if headers["host"] == nil, let authority = stream.authority { headers["host"] = authority }
        let request = HTTPRequest(method: stream.method, path: target.path, query: target.query, headers: headers,
                                  client: connection.client)
        loop.dispatch(request, from: connection, ticket: id)
    }

    // MARK: Responses

    private func submit(_ response: HTTPResponse, on id: Int32, stream: Stream) {
        guard let session else { return }
        guard let body = ResponseBody(response.body) else {
            return submit(.text(404, "not found"), on: id, stream: stream)
        }
        stream.answered = true
        fields.removeAll()
        fields.add(":status") { HeaderBytes.appendDecimal(response.status, to: &$0) }
        for (name, value) in response.headers where !(body.isGrowing && HeaderBytes.name(name, is: "content-length")) {
            fields.add(name: name, value: value)
        }
        if !fields.hasContentLength && response.statusAllowsBody, let length = body.length {
            fields.add("content-length") { HeaderBytes.appendDecimal(length, to: &$0) }
        }
        fields.add("date") { $0.append(contentsOf: ServerHeaders.currentHTTPDate().utf8) }
        let sendsBody = stream.method != "HEAD" && response.statusAllowsBody && body.length != 0
        if sendsBody {
            if !streamsWaitOnShutWindow { lastBodyProgressSeconds = TLSEventLoop.nowSeconds() }
            if body.isGrowing { body.watch(loop.bodyWakeUp(for: connection, ticket: id)) }
            stream.body = body
        }
        let result = fields.withList { fields in
            guard sendsBody else { return nghttp2_submit_response(session, id, fields.baseAddress, fields.count, nil) }
            var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: readBodyCallback)
            return nghttp2_submit_response(session, id, fields.baseAddress, fields.count, &provider)
        }
        if result != 0 {
            stream.body = nil
            nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id,
                                      UInt32(NGHTTP2_INTERNAL_ERROR.rawValue))
            return
        }
        loop.countAnswer()
    }

    /// How much of the stream's body the next DATA frame carries; nghttp2 calls it as the windows allow.
    /// A body whose bytes are there (a file, bytes) is not copied here: `sendData` reads it straight
    /// into the output. A growing body is copied into nghttp2's buffer as it grows.
    fileprivate func readBody(stream id: Int32, into buffer: UnsafeMutableRawBufferPointer,
                              flags: UnsafeMutablePointer<UInt32>) -> Int {
        guard let stream = streams[id], let body = stream.body else { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
        if let unsent = body.unsentCount {
            let count = min(buffer.count, unsent)
            flags.pointee |= NGHTTP2_DATA_FLAG_NO_COPY.rawValue
            if count == unsent { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
            return count
        }
        var count = 0
        switch body.read(into: buffer) {
        case .bytes(let read):
            count = read
            lastBodyProgressSeconds = TLSEventLoop.nowSeconds()
        case .waiting:
            // Resumed by the body's wake-up (`resumeBody`).
            stream.deferred = true
            return Int(NGHTTP2_ERR_DEFERRED.rawValue)
        case .end:
            break
        case .failed:
            // The growing body was abandoned: this stream is reset (INTERNAL_ERROR), the others go on.
            return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
        }
        if body.isFinished {
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
            stream.body = nil
        }
        return count
    }

    /// Writes a DATA frame whose length `readBody` chose: nghttp2's 9-byte header, then the body's next
    /// `length` bytes read straight into the output. A file that ends early or cannot be read resets
    /// the stream (INTERNAL_ERROR) with nothing of the frame written; the others go on.
    fileprivate func sendData(stream id: Int32, header: UnsafePointer<UInt8>, length: Int, padding: Int) -> Int32 {
        // No padding is asked for, so frames have none.
        guard padding == 0, let output = sending, let stream = streams[id], let body = stream.body else {
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue
        }
        let headerBytes = 9
        let written = output.append(reading: headerBytes + length) { free in
            free.copyMemory(from: UnsafeRawBufferPointer(start: header, count: headerBytes))
            guard case .bytes(let count) = body.read(into: UnsafeMutableRawBufferPointer(rebasing: free[headerBytes...])),
                  count == length
            else { return (0, false) }
            return (headerBytes + length, true)
        }
        guard written else { return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue }
        lastBodyProgressSeconds = TLSEventLoop.nowSeconds()
        if body.isFinished { stream.body = nil }
        return 0
    }
}

private let readBodyCallback: nghttp2_data_source_read_callback = { _, streamID, buffer, length, flags, _, user in
    guard let buffer, let flags, let user else { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
    return Unmanaged<HTTP2Session>.fromOpaque(user).takeUnretainedValue()
        .readBody(stream: streamID, into: UnsafeMutableRawBufferPointer(start: buffer, count: length), flags: flags)
}
