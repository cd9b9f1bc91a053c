import Foundation
import HLSKit

/// Uploads one large finished file (a recording) with S3's multipart upload: parts of `partSize`
/// bytes read from disk one at a time, each retried with backoff, then completed; an upload that
/// cannot finish is aborted, so the store keeps no orphaned parts.
public struct S3MultipartUpload {
    public struct Report: Sendable, Equatable {
        public var key: String
        public var parts: Int
        public var bytes: Int64
        public var retries: Int
    }

    public struct Failure: Error, CustomStringConvertible {
        public var key: String
        public var reason: String
        /// Whether the abort reached the store (false: parts may be left to its lifecycle rules).
        public var aborted: Bool

        public var description: String {
            "\(key): \(reason)" + (aborted ? "; the upload was aborted" : "; the upload could not be aborted either")
        }
    }

    /// S3 refuses parts under 5 MiB, but for the last.
    public static let minimumPartSize = 5 * 1024 * 1024
    public static let defaultPartSize = 8 * 1024 * 1024
    /// S3 allows at most this many parts in one upload.
    static let maximumParts = 10_000

    public var transport: S3Transport
    public var partSize: Int
    public var attempts: Int
    public var backoff: Backoff
    /// Waits between attempts; the tests may pass one that does not sleep.
    public var sleep: @Sendable (Double) -> Void

    public init(transport: S3Transport, partSize: Int = defaultPartSize, attempts: Int = 6, backoff: Backoff = Backoff(),
                sleep: @escaping @Sendable (Double) -> Void = { Thread.sleep(forTimeInterval: $0) }) {
        precondition(partSize >= Self.minimumPartSize, "S3 parts are at least 5 MiB")
        self.transport = transport
        self.partSize = partSize
        self.attempts = attempts
        self.backoff = backoff
        self.sleep = sleep
    }

    /// Uploads the file at `path` to the object `key` with `headers` (Content-Type, Cache-Control).
    public func upload(file path: String, key: String, headers: [HTTPHeader]) throws(Failure) -> Report {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw Failure(key: key, reason: "cannot open \(path)", aborted: true)
        }
        defer { try? handle.close() }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
        // A file too large for the part size gets larger parts.
        let partSize = max(Int64(self.partSize), (size + Int64(Self.maximumParts) - 1) / Int64(Self.maximumParts))
        let objectURL = transport.target.url(forKey: key)
        var retries = 0

        let started = try send(PublishRequest(method: .post, url: Self.url(objectURL, query: "uploads"), headers: headers),
                               key: key, retries: &retries, abortingUpload: nil)
        guard let uploadID = PublishResponse.xmlElement("UploadId", in: started.body) else {
            throw Failure(key: key, reason: "the store gave no UploadId", aborted: true)
        }
        let encodedID = PercentEncoding.encode(uploadID)
        var etags: [String] = []
        var sent: Int64 = 0
        repeat {
            let body: Data
            do {
                body = try handle.read(upToCount: Int(partSize)) ?? Data()
            } catch {
                throw abort(key: key, objectURL: objectURL, uploadID: encodedID, reason: "cannot read \(path): \(error)")
            }
            if body.isEmpty, !etags.isEmpty { break }
            let number = etags.count + 1
            let answer = try send(
                PublishRequest(method: .put, url: Self.url(objectURL, query: "partNumber=\(number)&uploadId=\(encodedID)"),
                               headers: [], body: body),
                key: key, retries: &retries, abortingUpload: encodedID)
            guard let etag = answer.etag else {
                throw abort(key: key, objectURL: objectURL, uploadID: encodedID, reason: "part \(number) came back without an ETag")
            }
            etags.append(etag)
            sent += Int64(body.count)
        } while sent < size

        let list = etags.enumerated().map { "<Part><PartNumber>\($0.offset + 1)</PartNumber><ETag>\($0.element)</ETag></Part>" }
        let completion = Data(("<CompleteMultipartUpload>" + list.joined() + "</CompleteMultipartUpload>").utf8)
        let completed = try send(PublishRequest(method: .post, url: Self.url(objectURL, query: "uploadId=\(encodedID)"),
                                                headers: [HTTPHeader(name: "Content-Type", value: "application/xml")],
                                                body: completion),
                                 key: key, retries: &retries, abortingUpload: encodedID)
        // S3 may answer 200 and still fail the completion, in the body.
        if let code = PublishResponse.errorCode(inBody: completed.body) {
            throw abort(key: key, objectURL: objectURL, uploadID: encodedID, reason: "the store did not complete it (\(code))")
        }
        return Report(key: key, parts: etags.count, bytes: sent, retries: retries)
    }

    private struct Answer {
        var body: Data
        var etag: String?
    }

    /// Sends `request` until it succeeds, the store refuses it, or the attempts run out; then aborts
    /// the upload when there is one.
    private func send(_ request: PublishRequest, key: String, retries: inout Int, abortingUpload uploadID: String?)
        throws(Failure) -> Answer {
        var attempt = 0
        while true {
            attempt += 1
            let exchange = transport.exchange(request)
            let outcome = RequestOutcome(exchange.publishResponse, method: request.method)
            switch outcome {
            case .succeeded:
                guard case .answered(_, _, let body) = exchange else { return Answer(body: Data(), etag: nil) }
                return Answer(body: body, etag: exchange.header("ETag"))
            case .retry(_, let after) where attempt < attempts:
                retries += 1
                sleep(backoff.delaySeconds(afterFailedAttempts: attempt, retryAfterSeconds: after))
            case .retry(let reason, _), .failed(let reason):
                let why = "\(request.method.rawValue) failed after \(attempt) attempt(s): \(reason)"
                guard let uploadID else { throw Failure(key: key, reason: why, aborted: true) }
                throw abort(key: key, objectURL: transport.target.url(forKey: key), uploadID: uploadID, reason: why)
            }
        }
    }

    /// Aborts the upload (retried like any request) and says why it was given up.
    private func abort(key: String, objectURL: URL, uploadID: String, reason: String) -> Failure {
        let request = PublishRequest(method: .delete, url: Self.url(objectURL, query: "uploadId=\(uploadID)"), headers: [])
        for attempt in 1...attempts {
            if case .succeeded = RequestOutcome(transport.exchange(request).publishResponse, method: .delete) {
                return Failure(key: key, reason: reason, aborted: true)
            }
            if attempt < attempts { sleep(backoff.delaySeconds(afterFailedAttempts: attempt)) }
        }
        return Failure(key: key, reason: reason, aborted: false)
    }

    private static func url(_ object: URL, query: String) -> URL {
        URL(string: object.absoluteString + "?" + query)!
    }
}
