import Foundation
import HLSKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData,
                                    timeoutInterval: requestTimeoutSeconds)
        urlRequest.httpMethod = request.method.rawValue
        for header in request.headers {
            urlRequest.setValue(header.value, forHTTPHeaderField: header.name)
        }
        let handler: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { _, response, error in
            completion(self.response(response, error: error))
        }
        let task = request.method == .put
            ? session.uploadTask(with: urlRequest, from: request.body, completionHandler: handler)
            : session.dataTask(with: urlRequest, completionHandler: handler)
        task.resume()
    }

    private func response(_ response: URLResponse?, error: (any Error)?) -> PublishResponse {
        if let error {
            let code = (error as? URLError)?.code
            let permanent = code == .badURL || code == .unsupportedURL
            let reason = code == .timedOut ? "no answer within \(requestTimeoutSeconds) s" : error.localizedDescription
            return .noResponse(reason, permanent: permanent)
        }
        guard let http = response as? HTTPURLResponse else {
            return .noResponse("the answer is not HTTP", permanent: true)
        }
        let retryAfter = (http.value(forHTTPHeaderField: "Retry-After"))
            .flatMap { Backoff.retryAfterSeconds($0, now: Date()) }
        return .status(http.statusCode, retryAfterSeconds: retryAfter)
    }
}
