import Foundation
import HLSKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What one HTTP request returned: the answer whole, or why there was none.
public enum HTTPExchange: Sendable {
    case answered(status: Int, headers: [String: String], body: Data)
    /// Refused, reset or timed out (`permanent` false), or a request that can never succeed.
    case noAnswer(String, permanent: Bool)

    /// A header of the answer, by name in any case.
    public func header(_ name: String) -> String? {
        guard case .answered(_, let headers, _) = self else { return nil }
        return headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// What the publisher needs of it.
    public var publishResponse: PublishResponse {
        switch self {
        case .answered(let status, _, let body):
            let retryAfter = header("Retry-After").flatMap { Backoff.retryAfterSeconds($0, now: Date()) }
            let code = status >= 300 ? PublishResponse.errorCode(inBody: body) : nil
            return .status(status, retryAfterSeconds: retryAfter, errorCode: code)
        case .noAnswer(let reason, let permanent):
            return .noResponse(reason, permanent: permanent)
        }
    }
}

/// Sends the publisher's requests with URLSession.
///
/// The session is not invalidated on deinit: the last reference may go on the session's own
/// delegate queue, where invalidating deadlocks; it lives as long as the process.
public final class URLSessionTransport: PublishTransport {
    private let session: URLSession
    private let requestTimeoutSeconds: Double

    /// `requestTimeoutSeconds` bounds each request from start to answer, so a stalled origin
    /// turns into a retry instead of a hang.
    public init(requestTimeoutSeconds: Double, maxConnections: Int) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = requestTimeoutSeconds
        configuration.timeoutIntervalForResource = requestTimeoutSeconds
        configuration.httpMaximumConnectionsPerHost = maxConnections
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
        self.requestTimeoutSeconds = requestTimeoutSeconds
    }

    public func send(_ request: PublishRequest, completion: @escaping @Sendable (PublishResponse) -> Void) {
        exchange(request) { completion($0.publishResponse) }
    }

    /// Sends `request` and hands over the whole answer.
    public func exchange(_ request: PublishRequest, completion: @escaping @Sendable (HTTPExchange) -> Void) {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData,
                                    timeoutInterval: requestTimeoutSeconds)
        urlRequest.httpMethod = request.method.rawValue
        for header in request.headers {
            urlRequest.setValue(header.value, forHTTPHeaderField: header.name)
        }
        let handler: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { data, response, error in
            completion(self.exchange(data, response, error: error))
        }
        let task = request.method == .put || request.method == .post
            ? session.uploadTask(with: urlRequest, from: request.body, completionHandler: handler)
            : session.dataTask(with: urlRequest, completionHandler: handler)
        task.resume()
    }

    private func exchange(_ data: Data?, _ response: URLResponse?, error: (any Error)?) -> HTTPExchange {
        if let error {
            let code = (error as? URLError)?.code
            let permanent = code == .badURL || code == .unsupportedURL
            let reason = code == .timedOut ? "no answer within \(requestTimeoutSeconds) s" : error.localizedDescription
            return .noAnswer(reason, permanent: permanent)
        }
        guard let http = response as? HTTPURLResponse else {
            return .noAnswer("the answer is not HTTP", permanent: true)
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return .answered(status: http.statusCode, headers: headers, body: data ?? Data())
    }
}
