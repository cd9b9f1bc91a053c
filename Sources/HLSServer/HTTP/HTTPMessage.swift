/// A request as the server's handler sees it: the method, the decoded path, and the query arguments
/// and headers (header names in lower case), and the client's address when known.
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    public var path: String
    public var query: [String: String]
    public var headers: [String: String]
    /// The client's IP address as text (`192.0.2.7`, `2001:db8::7`).
    public var client: String?

    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
                client: String? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.client = client
    }

    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// A response: status, headers, and bytes, a byte range of a file (sent without copying), or a body
/// still being made.
public struct HTTPResponse: Sendable, Equatable {
    public enum Body: Sendable, Equatable {
        case bytes([UInt8])
        /// `length` bytes of the open file at `path` from `offset`.
        case file(path: String, offset: Int, length: Int)
        /// Bytes sent as they come, without Content-Length; no Range applies.
        case growing(GrowingBody)

        public static func == (lhs: Body, rhs: Body) -> Bool {
            switch (lhs, rhs) {
            case (.bytes(let left), .bytes(let right)):
                left == right
            case (.file(let leftPath, let leftOffset, let leftLength), .file(let rightPath, let rightOffset, let rightLength)):
                leftPath == rightPath && leftOffset == rightOffset && leftLength == rightLength
            case (.growing(let left), .growing(let right)):
                left === right
            default:
                false
            }
        }
    }

    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: Body

    public init(status: Int, headers: [(name: String, value: String)] = [], body: Body = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body
            && lhs.headers.map { [$0.name, $0.value] } == rhs.headers.map { [$0.name, $0.value] }
    }

    /// A short text body, for errors.
    public static func text(_ status: Int, _ message: String, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers + [("Content-Type", "text/plain; charset=utf-8")],
                     body: .bytes(Array((message + "\n").utf8)))
    }
}

/// What a handler does with a request: answer now, or later (a blocking playlist reload, a part that
/// does not exist yet). `later` receives the function that sends the answer; it must call it once,
/// from any thread.
public enum HTTPReply: Sendable {
    case now(HTTPResponse)
    case later(@Sendable (_ respond: @escaping @Sendable (HTTPResponse) -> Void) -> Void)
}
