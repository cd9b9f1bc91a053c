import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HLSKit

/// Reads `file://` URLs from the local file system.
public struct FileLoader: ResourceLoader {
    public init() {}

    public func load(_ url: URL) throws(LoadError) -> [UInt8] {
        let path = url.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .notFound("\(path) does not exist")
        }
        guard !isDirectory.boolValue else { throw .unreadable("\(path) is a directory") }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw .unreadable("\(path) is not readable (permissions)")
        }
        do {
            return [UInt8](try Data(contentsOf: url))
        } catch {
            throw .readFailed("\(path): \(error.localizedDescription)")
        }
    }

    public func exists(_ url: URL) throws(LoadError) -> Bool {
        FileManager.default.isReadableFile(atPath: url.path)
    }
}

/// Reads `http(s)://` URLs with URLSession, one request at a time, and `file://` URLs from disk.
public final class URLSessionLoader: ResourceLoader {
    private let session: URLSession
    private let timeoutSeconds: Double

    public init(timeoutSeconds: Double = 15) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeoutSeconds
        configuration.timeoutIntervalForResource = timeoutSeconds * 4
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
        self.timeoutSeconds = timeoutSeconds
    }

    /// Holds the answer until the calling thread wakes; the semaphore orders the write before the read.
    private final class Answer: @unchecked Sendable {
        var result: Result<[UInt8], LoadError> = .failure(.unreachable("no answer"))
    }

    public func load(_ url: URL) throws(LoadError) -> [UInt8] {
        if url.isFileURL {
            return try FileLoader().load(url)
        }
        let answer = Answer()
        let done = DispatchSemaphore(value: 0)
        let request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeoutSeconds)
        let task = session.dataTask(with: request) { data, response, error in
            answer.result = Self.result(url: url, data: data, response: response, error: error)
            done.signal()
        }
        task.resume()
        done.wait()
        return try answer.result.get()
    }

    private static func result(url: URL, data: Data?, response: URLResponse?,
                               error: (any Error)?) -> Result<[UInt8], LoadError> {
        let name = url.absoluteString
        if let error {
            let code = (error as? URLError)?.code
            let noAnswer: Set<URLError.Code> = [.cannotConnectToHost, .cannotFindHost, .timedOut,
                                                .networkConnectionLost, .notConnectedToInternet, .dnsLookupFailed]
            if let code, noAnswer.contains(code) {
                return .failure(.unreachable("\(name): \(error.localizedDescription)"))
            }
            let untrusted: Set<URLError.Code> = [.serverCertificateUntrusted, .serverCertificateHasUnknownRoot,
                                                 .serverCertificateHasBadDate, .serverCertificateNotYetValid]
            // libcurl under URLSession reports an unknown authority as "SSL certificate problem: …".
            if let code, untrusted.contains(code) || error.localizedDescription.contains("SSL certificate problem") {
                return .failure(.untrusted("\(name): \(error.localizedDescription)"))
            }
            return .failure(.readFailed("\(name): \(error.localizedDescription)"))
        }
        guard let http = response as? HTTPURLResponse else {
            return .failure(.readFailed("\(name): the answer is not HTTP"))
        }
        return httpResult(name: name, status: http.statusCode, body: [UInt8](data ?? Data()))
    }

    /// What an HTTP status means for the validator: the body, or why there is none.
    static func httpResult(name: String, status: Int, body: [UInt8]) -> Result<[UInt8], LoadError> {
        switch status {
        case 200..<300: .success(body)
        case 404, 410: .failure(.notFound("\(name) answered HTTP \(status)"))
        case 400..<500: .failure(.unreadable("\(name) answered HTTP \(status)"))
        default: .failure(.readFailed("\(name) answered HTTP \(status)"))
        }
    }
}

/// Reads a stream from a store, at `store:///` URLs (`store:///720p/playlist.m3u8`): the validator's
/// view of a stream held in memory or anywhere else a store keeps it.
public struct StoreLoader: ResourceLoader {
    public static let scheme = "store"
    public let store: any StreamStore

    public init(store: any StreamStore) {
        self.store = store
    }

    /// The URL of a file of the store.
    public static func url(_ path: String) -> URL {
        URL(string: "\(scheme):///\(path)")!
    }

    public func load(_ url: URL) throws(LoadError) -> [UInt8] {
        let path = String(url.path.drop { $0 == "/" })
        do {
            guard try store.exists(path) else { throw LoadError.notFound("\(store.location)/\(path) does not exist") }
            return try store.read(path)
        } catch let error as LoadError {
            throw error
        } catch {
            throw .readFailed("\(error)")
        }
    }
}
