import Foundation
import HLSKit
import HLSOutput

/// `--publish URL` and the options that go with it.
struct PublishOptions {
    static let help = """
          --publish URL             also upload the stream with HTTP PUT below URL (URL/init.mp4,
                                    URL/seg/000001.m4s, URL/playlist.m3u8); without --out the files
                                    are kept in a temporary directory until they are uploaded
          --header 'Name: value'    send this header with every upload (repeatable), e.g. Authorization
          --publish-backlog S       media seconds that may wait for the origin (default 300)
          --publish-drain-timeout S seconds to wait for the last uploads at the end (default 30)
          --publish-timeout S       seconds one request may take before it is retried (default 10)
        """
    static let defaultBacklogMilliseconds: Int64 = 300_000
    static let defaultDrainTimeoutMilliseconds: Int64 = 30_000
    static let defaultRequestTimeoutMilliseconds: Int64 = 10_000
    /// Uploads in flight at once: enough to hide a round trip, few enough for a small uplink.
    static let concurrentUploads = 3

    var origin: URL
    var headers: [HTTPHeader]
    var backlogSeconds: Double
    var drainTimeoutSeconds: Double
    var requestTimeoutSeconds: Double

    /// nil when `--publish` is absent; its companion options are then refused.
    init?(arguments: inout ArgumentList) throws {
        let headerLines = try arguments.values("--header")
        let backlog = try arguments.value("--publish-backlog")
        let drainTimeout = try arguments.value("--publish-drain-timeout")
        let requestTimeout = try arguments.value("--publish-timeout")
        guard let url = try arguments.value("--publish") else {
            if !headerLines.isEmpty || backlog != nil || drainTimeout != nil || requestTimeout != nil {
                throw CommandError.usage("--header and --publish-… options need --publish URL")
            }
            return nil
        }
        guard let origin = URL(string: url), ["http", "https"].contains(origin.scheme?.lowercased()),
              origin.host != nil else {
            throw CommandError.usage("--publish takes an http:// or https:// URL (got \"\(url)\")")
        }
        self.origin = origin
        headers = try headerLines.map { line in
            guard let header = HTTPHeader(line: line) else {
                throw CommandError.usage("--header takes 'Name: value' (got \"\(line)\")")
            }
            return header
        }
        backlogSeconds = try Self.seconds(backlog, option: "--publish-backlog", default: Self.defaultBacklogMilliseconds)
        drainTimeoutSeconds = try Self.seconds(drainTimeout, option: "--publish-drain-timeout",
                                               default: Self.defaultDrainTimeoutMilliseconds)
        requestTimeoutSeconds = try Self.seconds(requestTimeout, option: "--publish-timeout",
                                                 default: Self.defaultRequestTimeoutMilliseconds)
        guard requestTimeoutSeconds > 0 else { throw CommandError.usage("--publish-timeout must be more than 0") }
    }

    private static func seconds(_ text: String?, option: String, default milliseconds: Int64) throws -> Double {
        Double(try text.map { try Parse.milliseconds($0, option: option) } ?? milliseconds) / 1000
    }

    /// A publisher for a recording, which can wait for a slow origin instead of dropping segments;
    /// `directory` is the rendition's place below the origin ("" for the top).
    func makeFilePublisher(store: any StreamStore, directory: String = "") -> StreamPublisher {
        makePublisher(store: store, directory: directory, backlogWaitSeconds: drainTimeoutSeconds)
    }

    private func makePublisher(store: any StreamStore, directory: String, backlogWaitSeconds: Double) -> StreamPublisher {
        let limits = PublishSchedule.Limits(maxConcurrentRequests: Self.concurrentUploads, backlogSeconds: backlogSeconds)
        let configuration = StreamPublisher.Configuration(
            origin: directory.isEmpty ? origin : origin.appendingPathComponent(directory + "/"),
            headers: headers, limits: limits,
            backlogWaitSeconds: backlogWaitSeconds, drainTimeoutSeconds: drainTimeoutSeconds)
        // One connection more than uploads, for the playlist's own lane.
        let transport = URLSessionTransport(requestTimeoutSeconds: requestTimeoutSeconds,
                                            maxConnections: Self.concurrentUploads + 1)
        return StreamPublisher(configuration: configuration, store: store, transport: transport)
    }

    /// A publisher for a live stream: capture never waits for the origin; past the backlog the oldest
    /// waiting segments are dropped and reported.
    func makeLivePublisher(store: any StreamStore, directory: String = "") -> StreamPublisher {
        makePublisher(store: store, directory: directory, backlogWaitSeconds: 0)
    }

    /// Deletes the temporary directory of an upload; a failure is reported, not hidden.
    static func removeSpoolDirectory(_ path: String) {
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch {
            printError("warning: the temporary directory \(path) could not be removed: \(error.localizedDescription)")
        }
    }

    /// A fresh directory for the files the stream needs on disk only until they are uploaded.
    static func makeSpoolDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("hlscap-publish-\(UUID().uuidString)", isDirectory: true).path
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw CommandError("cannot create a temporary directory for the upload: \(error.localizedDescription)",
                               exitCode: .cannotCreate)
        }
        return path
    }
}

extension PublishReport {
    /// One line for the summary, such as
    /// `published to URL: 14 files, 1.2 MB at 3.4 MB/s, 2 retries; listed 12 ms after writing (p50), p99 30 ms`.
    func summaryLine(origin: URL) -> String {
        let megabyte = 1_000_000.0
        return String(format: "published to %@: %d files, %.1f MB at %.1f MB/s, %d retries; "
                      + "listed %.0f ms after writing (p50), p99 %.0f ms",
                      origin.absoluteString, status.uploadedCount, Double(status.uploadedBytes) / megabyte,
                      status.bytesPerSecond / megabyte, status.retryCount,
                      listingLatency.quantileSeconds(0.5) * 1000, listingLatency.quantileSeconds(0.99) * 1000)
    }

    /// The error that ends `hlscap file` when something did not reach the origin.
    func incompleteError(origin: URL) -> CommandError {
        let lines = undelivered.map { "  \($0)" }.joined(separator: "\n")
        return CommandError("\(undelivered.count) of the stream's files did not reach \(origin.absoluteString):\n"
                            + lines, exitCode: .ioError)
    }
}
