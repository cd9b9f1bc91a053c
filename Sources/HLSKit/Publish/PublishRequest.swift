import Foundation

/// One HTTP request to the origin.
public struct PublishRequest: Sendable, Equatable {
    public enum Method: String, Sendable {
        case get = "GET"
        case put = "PUT"
        case post = "POST"
        case delete = "DELETE"
    }

    public var method: Method
    public var url: URL
    public var headers: [HTTPHeader]
    public var body: Data

    public init(method: Method, url: URL, headers: [HTTPHeader], body: Data = Data()) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

public struct HTTPHeader: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// `Name: value`, as given on the command line; nil when there is no name before a colon.
    public init?(line: String) {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        let name = line[..<colon].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, !name.contains(where: { $0.isWhitespace }) else { return nil }
        self.init(name: name, value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }
}

/// What became of a request: the server's answer, or why there was none.
public enum PublishResponse: Sendable, Equatable {
    /// `errorCode`: the code an object store's error body gives, such as `SignatureDoesNotMatch`.
    case status(Int, retryAfterSeconds: Double? = nil, errorCode: String? = nil)
    /// No answer: refused, reset or timed out (`permanent` false), or a request that can never
    /// succeed, such as an unsupported URL or an unreadable local file (`permanent` true).
    case noResponse(String, permanent: Bool)
}

/// What a response means for the file it concerned.
public enum RequestOutcome: Equatable, Sendable {
    case succeeded
    case retry(reason: String, afterSeconds: Double?)
    case failed(reason: String)

    private static let requestTimeout = 408
    private static let tooManyRequests = 429
    private static let notFound = 404
    private static let methodNotAllowed = 405

    public init(_ response: PublishResponse, method: PublishRequest.Method) {
        switch response {
        case .status(let code, let retryAfterSeconds, let errorCode):
            let reason = errorCode.map { "HTTP \(code) \($0)" } ?? "HTTP \(code)"
            switch code {
            case 200..<300:
                self = .succeeded
            // Deleting what is already gone, or from an origin that keeps files forever, is done.
            case Self.notFound where method == .delete, Self.methodNotAllowed where method == .delete:
                self = .succeeded
            case Self.requestTimeout, Self.tooManyRequests, 500..<600:
                self = .retry(reason: reason, afterSeconds: retryAfterSeconds)
            default:
                self = .failed(reason: reason)
            }
        case .noResponse(let reason, let permanent):
            self = permanent ? .failed(reason: reason) : .retry(reason: reason, afterSeconds: nil)
        }
    }
}

extension PublishResponse {
    /// The `<Code>` of an S3-style XML error body (`<Error><Code>NoSuchBucket</Code>…`), if it has one.
    public static func errorCode(inBody body: some Collection<UInt8>) -> String? {
        guard let code = xmlElement("Code", in: body.prefix(4096)), !code.isEmpty, code.count <= 64,
              code.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." }) else { return nil }
        return code
    }

    /// The text of the first `<name>…</name>` in an XML answer (an object store's error code, a
    /// multipart upload's id).
    public static func xmlElement(_ name: String, in body: some Collection<UInt8>) -> String? {
        let text = String(decoding: body, as: UTF8.self)
        guard let open = text.range(of: "<\(name)>"),
              let close = text.range(of: "</\(name)>", range: open.upperBound..<text.endIndex) else { return nil }
        return String(text[open.upperBound..<close.lowerBound])
    }
}
