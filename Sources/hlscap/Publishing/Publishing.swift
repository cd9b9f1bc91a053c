import Foundation
import HLSEngine
import HLSKit
import HLSOutput

/// `--publish URL` and the options that go with it.
struct PublishOptions {
    static let help = """
          --publish URL             also upload the stream with HTTP PUT below URL (URL/init.mp4,
                                    URL/seg/000001.m4s, URL/playlist.m3u8); without --out the files
                                    are kept in a temporary directory until they are uploaded
          --publish s3://BUCKET/PREFIX/
                                    upload to an S3-compatible object store instead, signed with
                                    Signature V4; keys from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY
                                    or the AWS_PROFILE in ~/.aws/credentials (re-read when it changes)
          --s3-endpoint URL         the store (MinIO, Ceph, R2, B2 …); AWS by region when absent
          --s3-region REGION        the signing region (default AWS_REGION, the profile's, or us-east-1)
          --s3-path-style           address ENDPOINT/BUCKET/KEY (the default with --s3-endpoint)
          --s3-virtual-hosted       address BUCKET.ENDPOINT/KEY (the default on AWS)
          --s3-acl ACL              canned ACL of every object, e.g. public-read (default: the bucket's)
          --s3-part-size SIZE       part size of the multipart upload of a finished --record file
                                    (default 8M, at least 5M); it goes to PREFIX/recordings/NAME
          --playlist-cache-control V
                                    Cache-Control of uploaded playlists (default no-cache; e.g.
                                    max-age=1); segments and init sections are immutable for a year
          --header 'Name: value'    send this header with every upload (repeatable), e.g. Authorization
          --publish-backlog S       media seconds that may wait for the origin (default 300)
          --publish-drain-timeout S seconds to wait for the last uploads at the end (default 30)
          --publish-timeout S       seconds one request may take before it is retried (default 10)
        """
    /// Uploads in flight at once: enough to hide a round trip, few enough for a small uplink.
    static let concurrentUploads = 3

    /// Where the files go: below this URL (for S3, the prefix's URL at the store).
    var origin: URL
    /// The store and its signing transport, for `s3://` targets.
    var s3: S3Transport?
    var playlistCacheControl: String
    var partSize: Int
    var headers: [HTTPHeader]
    var backlogSeconds: Double
    var drainTimeoutSeconds: Double
    var requestTimeoutSeconds: Double

    /// nil when `--publish` is absent; its companion options are then refused.
    init?(arguments: inout ArgumentList) throws {
        var request = OriginRequest()
        request.headerLines = try arguments.values("--header")
        request.backlogMilliseconds = try arguments.value("--publish-backlog")
            .map { try Parse.milliseconds($0, option: "--publish-backlog") }
        request.drainTimeoutMilliseconds = try arguments.value("--publish-drain-timeout")
            .map { try Parse.milliseconds($0, option: "--publish-drain-timeout") }
        request.requestTimeoutMilliseconds = try arguments.value("--publish-timeout")
            .map { try Parse.milliseconds($0, option: "--publish-timeout") }
        request.playlistCacheControl = try arguments.value("--playlist-cache-control")
        request.s3Endpoint = try arguments.value("--s3-endpoint")
        request.s3Region = try arguments.value("--s3-region")
        request.s3ACL = try arguments.value("--s3-acl")
        request.s3PathStyle = arguments.flag("--s3-path-style")
        request.s3VirtualHosted = arguments.flag("--s3-virtual-hosted")
        request.s3PartSizeBytes = try arguments.value("--s3-part-size").map { try Parse.byteSize($0, option: "--s3-part-size") }
        request.url = try arguments.value("--publish")
        let made: OriginPlan?
        do {
            made = try OriginPlan(request)
        } catch {
            throw CommandError(error)
        }
        guard let plan = made else { return nil }
        switch plan.target {
        case .http(let url):
            origin = url
        case .s3(let target):
            // The store's transport for the first request and the recording; each rendition's publisher
            // gets its own (sharing the credentials), as with HTTP.
            s3 = S3Transport(target: target, credentials: S3CredentialSource(), acl: plan.s3ACL,
                             requestTimeoutSeconds: plan.requestTimeoutSeconds, maxConnections: Self.concurrentUploads + 1)
            origin = target.originURL
        }
        playlistCacheControl = plan.playlistCacheControl
        partSize = plan.s3PartSize
        headers = plan.headers
        backlogSeconds = plan.backlogSeconds
        drainTimeoutSeconds = plan.drainTimeoutSeconds
        requestTimeoutSeconds = plan.requestTimeoutSeconds
    }

    /// Uploads a finished recording to `PREFIX/recordings/NAME` with a multipart upload; one line
    /// for the summary, or the error that ends the command (74) saying whether the parts were removed.
    func uploadRecording(_ path: String) throws -> String {
        guard let s3 else { return "" }
        let name = String(path.split(separator: "/").last ?? Substring(path))
        let key = s3.target.prefix + Self.recordingsFolder + "/" + name
        let upload = S3MultipartUpload(transport: s3, partSize: partSize)
        do {
            let report = try upload.upload(file: path, key: key, headers: [
                HTTPHeader(name: "Content-Type", value: "video/mp4"),
                HTTPHeader(name: "Cache-Control", value: StreamPublisher.mediaCacheControl)])
            return String(format: "uploaded the recording to s3://%@/%@: %d parts, %.1f MB, %d retries",
                          s3.target.bucket, key, report.parts, Double(report.bytes) / 1_000_000, report.retries)
        } catch {
            throw CommandError("the recording \(path) did not reach s3://\(s3.target.bucket)/\(error.description)",
                               exitCode: .ioError)
        }
    }

    /// Where finished recordings go below the prefix.
    static let recordingsFolder = "recordings"

    /// Seconds between the first requests to a store that did not answer: three more tries, three seconds.
    static let unreachableRetryPauses = [0.5, 1.0, 1.5]

    /// What the summary and messages call the target: the URL given.
    var displayName: String { s3?.target.displayName ?? origin.absoluteString }

    /// Before the stream starts, asks an S3 store whether it will take it: a refusal ends the command
    /// at once with the bucket, the store's error code and what to do, rather than after the backlog
    /// fills. An HTTP origin is not asked: it may accept PUT alone.
    func checkTarget() throws {
        guard let s3 else { return }
        let bucket = "the bucket \(s3.target.bucket) at \(s3.target.endpoint.absoluteString)"
        // A store that is busy for a moment as many cameras start is asked again before the camera gives up.
        var answer = s3.checkAccess()
        for pause in Self.unreachableRetryPauses {
            guard case .unreachable = answer else { break }
            Thread.sleep(forTimeInterval: pause)
            answer = s3.checkAccess()
        }
        switch answer {
        case nil:
            return
        case .credentials(let reason) where !reason.contains(" "):
            throw CommandError("\(bucket) refused the credentials from \(s3.credentials.sourceDescription) (\(reason)): "
                               + "check the access key and secret", exitCode: .noPermission)
        case .credentials(let reason):
            throw CommandError("cannot publish to \(s3.target.displayName): \(reason)", exitCode: .noPermission)
        case .noSuchBucket:
            throw CommandError("\(bucket) does not exist (NoSuchBucket): create it or correct --publish",
                               exitCode: .config)
        case .clockSkew(let code):
            throw CommandError("\(bucket) refused a request signed at this machine's time (\(code)): "
                               + "set the clock right (NTP) and start again", exitCode: .noPermission)
        case .unreachable(let reason):
            throw CommandError("\(bucket) does not answer (\(reason)): check --s3-endpoint and the network",
                               exitCode: .unavailable)
        case .refused(let status, let code):
            throw CommandError("\(bucket) refused a first request with HTTP \(status)\(code.map { " " + $0 } ?? "")",
                               exitCode: status == 403 ? .noPermission : .unavailable)
        }
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
            backlogWaitSeconds: backlogWaitSeconds, drainTimeoutSeconds: drainTimeoutSeconds,
            playlistCacheControl: playlistCacheControl)
        // One connection more than uploads, for the playlist's own lane.
        let transport: any PublishTransport = s3.map {
            S3Transport(target: $0.target, credentials: $0.credentials, acl: $0.acl,
                        requestTimeoutSeconds: requestTimeoutSeconds, maxConnections: Self.concurrentUploads + 1)
        } ?? URLSessionTransport(requestTimeoutSeconds: requestTimeoutSeconds, maxConnections: Self.concurrentUploads + 1)
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
    /// `published to URL: 14 files, 1.2 MB at 3.4 MB/s, 2 retries; listed 12 ms after writing (p50), p99 30 ms;
    /// PUT 8 ms (p50), p99 20 ms`.
    func summaryLine(origin: String) -> String {
        let megabyte = 1_000_000.0
        return String(format: "published to %@: %d files, %.1f MB at %.1f MB/s, %d retries; "
                      + "listed %.0f ms after writing (p50), p99 %.0f ms; PUT %.0f ms (p50), p99 %.0f ms",
                      origin, status.uploadedCount, Double(status.uploadedBytes) / megabyte,
                      status.bytesPerSecond / megabyte, status.retryCount,
                      listingLatency.quantileSeconds(0.5) * 1000, listingLatency.quantileSeconds(0.99) * 1000,
                      putLatency.quantileSeconds(0.5) * 1000, putLatency.quantileSeconds(0.99) * 1000)
    }

    /// The error that ends `hlscap file` when something did not reach the origin.
    func incompleteError(origin: String) -> CommandError {
        let lines = undelivered.map { "  \($0)" }.joined(separator: "\n")
        return CommandError("\(undelivered.count) of the stream's files did not reach \(origin):\n"
                            + lines, exitCode: .ioError)
    }
}
