import Foundation
import Glibc
import HLSEngine
import HLSKit
import HLSMedia
import HLSOutput
import HLSServer

/// `--tls-cert`/`--tls-key`, the connection limit and timeouts: how the built-in server listens.
struct ServerOptions {
    static let help = """
          --tls-cert PEM            serve HTTPS with this certificate (with --tls-key; Safari wants
                                    TLS for low latency)
          --tls-key PEM             the certificate's private key
          --max-clients N           connections at once, more wait or are refused (default 1024)
          --idle-timeout SECONDS    close a connection that sends and receives nothing for this
                                    long (default 30)
          --header-timeout SECONDS  close a connection whose request header is not whole this long
                                    after it opened or its last answer went, however slowly bytes
                                    keep coming (default 30)
          --auth-token SECRET       only clients that present SECRET may watch: `Authorization:
                                    Bearer SECRET` or ?token=SECRET (carried into every URI of the
                                    playlists served to them)
          --auth-token-file FILE    the same, with the token read from FILE
          --auth-key FILE           also accept URLs signed with this HMAC-SHA256 key (hlscap sign)
          --metrics-token SECRET    /metrics asks for this token (default: what the stream asks)
        """

    var address: ListenAddress
    var tls: (key: String, certificate: String)?
    var connectionLimit = 1024
    var idleTimeoutSeconds = 30
    var headerTimeoutSeconds = 30
    var access: AccessControl?

    /// nil when `option` (the address) is absent; its companions are then refused.
    init?(arguments: inout ArgumentList, option: String) throws {
        let certificate = try arguments.value("--tls-cert")
        let key = try arguments.value("--tls-key")
        let limit = try arguments.value("--max-clients")
        let idle = try arguments.value("--idle-timeout")
        let header = try arguments.value("--header-timeout")
        let token = try arguments.value("--auth-token")
        let tokenFile = try arguments.value("--auth-token-file")
        let keyFile = try arguments.value("--auth-key")
        let metricsToken = try arguments.value("--metrics-token")
        guard let text = try arguments.value(option) else {
            if certificate != nil || key != nil || limit != nil || idle != nil || header != nil || token != nil || tokenFile != nil || keyFile != nil
                || metricsToken != nil {
                throw CommandError.usage("--tls-cert, --tls-key, --max-clients, --idle-timeout, --header-timeout and "
                    + "--auth-…/--metrics-token need \(option) ADDR:PORT")
            }
            return nil
        }
        guard token == nil || tokenFile == nil else {
            throw CommandError.usage("--auth-token and --auth-token-file exclude each other")
        }
        let streamToken = try token ?? tokenFile.map { path in
            let secret = String(decoding: try Self.readSecret(path, option: "--auth-token-file"), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            guard !secret.isEmpty else { throw CommandError("--auth-token-file \(path) is empty", exitCode: .dataError) }
            return secret
        }
        let signingKey = try keyFile.map { AccessControl.key(fileContents: try Self.readSecret($0, option: "--auth-key")) }
        if let signingKey, signingKey.count < 16 {
            throw CommandError("--auth-key \(keyFile!) holds under 16 bytes; make one with: openssl rand -hex 32 > \(keyFile!)",
                               exitCode: .dataError)
        }
        if streamToken?.isEmpty == true || metricsToken?.isEmpty == true {
            throw CommandError.usage("--auth-token and --metrics-token take a non-empty secret")
        }
        if streamToken != nil || signingKey != nil || metricsToken != nil {
            access = AccessControl(token: streamToken, signingKey: signingKey, metricsToken: metricsToken)
        }
        do {
            address = try ListenAddress(text)
        } catch {
            throw CommandError.usage("\(option): \(error)")
        }
        switch (certificate, key) {
        case (nil, nil):
            tls = nil
        case (let certificate?, let key?):
            tls = (key: try Self.readPEM(key, option: "--tls-key"), certificate: try Self.readPEM(certificate, option: "--tls-cert"))
        default:
            throw CommandError.usage("--tls-cert and --tls-key go together")
        }
        if let limit { connectionLimit = try Parse.integer(limit, option: "--max-clients", in: 1...100_000) }
        if let idle { idleTimeoutSeconds = try Parse.integer(idle, option: "--idle-timeout", in: 1...86_400) }
        if let header { headerTimeoutSeconds = try Parse.integer(header, option: "--header-timeout", in: 1...86_400) }
    }

    /// Descriptors besides the connections: the stream's files being sent, the capture, the store.
    static let descriptorHeadroom = 256

    /// Every connection is a descriptor, and the usual soft limit (1024) is below the default
    /// --max-clients: the soft limit is raised as far as they need, within the hard one. A warning
    /// when even that cannot hold `connections`.
    static func raiseDescriptorLimit(toHold connections: Int) -> String? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        let wanted = rlim_t(connections + descriptorHeadroom)
        if limit.rlim_cur < wanted && limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = min(limit.rlim_max, wanted)
            if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        guard limit.rlim_cur < wanted else { return nil }
        return "only \(limit.rlim_cur) files may be open (ulimit -n), fewer than --max-clients \(connections) "
            + "needs with the stream's own; raise the hard limit (LimitNOFILE= in a unit) or lower --max-clients"
    }

    /// A secret from a file; the error names the file, never its contents.
    static func readSecret(_ path: String, option: String) throws -> Data {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandError("\(option) \(path) cannot be read", exitCode: .noInput)
        }
        return data
    }

    private static func readPEM(_ path: String, option: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandError("\(option) \(path) cannot be read; give a PEM file", exitCode: .noInput)
        }
        let text = String(decoding: data, as: UTF8.self)
        guard text.contains("-----BEGIN ") else {
            throw CommandError("\(option) \(path) is not PEM text (-----BEGIN …)", exitCode: .dataError)
        }
        return text
    }

    /// Starts the server for `server`'s directory; the URL a viewer opens goes to standard error.
    func start(_ unprotected: StreamServer, entry: String) throws -> HTTPServer {
        let server = StreamServer(root: unprotected.root, lowLatency: unprotected.lowLatency, metrics: unprotected.metrics,
                                  access: access, keyDirectory: unprotected.keyDirectory,
                                  deltaPlaylists: unprotected.deltaPlaylists, recordings: unprotected.recordings,
                                  pictures: unprotected.pictures)
        if let warning = Self.raiseDescriptorLimit(toHold: connectionLimit) {
            FileHandle.standardError.write(Data("hlscap: \(warning)\n".utf8))
        }
        var configuration = HTTPServer.Configuration(address: address)
        configuration.tls = tls
        configuration.connectionLimit = connectionLimit
        configuration.idleTimeoutSeconds = idleTimeoutSeconds
        configuration.headerTimeoutSeconds = headerTimeoutSeconds
        let http: HTTPServer
        do {
            http = try HTTPServer(configuration: configuration, handler: server.handle)
        } catch {
            throw CommandError("\(error)", exitCode: .unavailable)
        }
        server.metrics.countConnections { [weak http] in http?.connectionCount ?? 0 }
        let scheme = tls == nil ? "http" : "https"
        let host = address.host.isEmpty ? "localhost" : (address.host.contains(":") ? "[\(address.host)]" : address.host)
        FileHandle.standardError.write(Data(
            "hlscap: serving \(server.root) at \(scheme)://\(host):\(http.port)/\(entry) (preview: \(scheme)://\(host):\(http.port)/)\n".utf8))
        return http
    }
}

/// The engine's figures for `GET /metrics`.
enum EngineMetrics {
    static func families(_ statistics: LiveStatistics) -> [ServerMetrics.Family] {
        let snapshot = statistics.snapshot()
        let names = snapshot.renditions.map { $0.name.isEmpty ? "video" : $0.name }
        let perRendition = { (value: Int) in names.map { ([("rendition", $0)], Double(value)) } }
        var families = [
            ServerMetrics.Family(name: "hlscap_frames_captured_total", help: "video frames captured, by rendition",
                                 kind: .counter, samples: perRendition(snapshot.frames)),
            ServerMetrics.Family(name: "hlscap_frames_dropped_total",
                                 help: "video frames dropped before encoding, by rendition", kind: .counter,
                                 samples: perRendition(snapshot.droppedFrames)),
            ServerMetrics.Family(name: "hlscap_segments_total", help: "segments written and listed", kind: .counter,
                                 value: Double(snapshot.segments)),
            ServerMetrics.Family(name: "hlscap_media_seconds_total", help: "media seconds in written segments",
                                 kind: .counter, value: snapshot.mediaSeconds),
            ServerMetrics.Family(name: "hlscap_media_bytes_total", help: "bytes of written segments, every rendition",
                                 kind: .counter, value: Double(snapshot.mediaBytes)),
        ]
        if let latency = snapshot.lastListingLatencySeconds {
            families.append(.init(name: "hlscap_publish_latency_seconds",
                                  help: "from the capture of the last segment's last frame to its playlist",
                                  kind: .gauge, value: latency))
        }
        if !snapshot.recordingRemovals.isEmpty {
            let removals = snapshot.recordingRemovals.sorted { $0.key.label < $1.key.label }
            families += [
                .init(name: "hlscap_recording_files_deleted_total", help: "recording files retention deleted, by rule",
                      kind: .counter, samples: removals.map { ([("reason", $0.key.label)], Double($0.value.files)) }),
                .init(name: "hlscap_recording_bytes_deleted_total", help: "bytes of recording files retention deleted, by rule",
                      kind: .counter, samples: removals.map { ([("reason", $0.key.label)], Double($0.value.bytes)) }),
            ]
        }
        if let upload = snapshot.upload {
            families += [
                .init(name: "hlscap_uploads_total", help: "files uploaded to the origin", kind: .counter,
                      value: Double(upload.uploadedCount)),
                .init(name: "hlscap_upload_retries_total", help: "upload requests retried", kind: .counter,
                      value: Double(upload.retryCount)),
                .init(name: "hlscap_upload_failures_total", help: "upload requests that failed", kind: .counter,
                      value: Double(upload.failedCount)),
                .init(name: "hlscap_upload_backlog_files", help: "files waiting for the origin", kind: .gauge,
                      value: Double(upload.queuedCount)),
                .init(name: "hlscap_upload_backlog_seconds", help: "media seconds waiting for the origin",
                      kind: .gauge, value: upload.queuedMediaSeconds),
            ]
        }
        return families
    }
}

extension RecordingRetention.Reason {
    /// The rule's name in `/metrics`: keep, keep_size, min_free.
    var label: String {
        switch self {
        case .age: "keep"
        case .size: "keep_size"
        case .freeSpace: "min_free"
        }
    }
}
