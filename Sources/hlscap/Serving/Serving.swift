import Foundation
import Glibc
import HLSEngine
import HLSKit
import HLSMedia
import HLSOutput
import HLSServer

/// `--tls-cert`/`--tls-key`/`--tls-ocsp`, the connection limit and timeouts: how the built-in server listens.
struct ServerOptions {
    static let help = """
          --tls-cert PEM            serve HTTPS with this certificate (with --tls-key; Safari wants
                                    TLS for low latency)
          --tls-key PEM             the certificate's private key
          --tls-ocsp FILE           staple this OCSP response for the certificate (DER, as openssl
                                    ocsp -respout writes it; read again on SIGHUP)
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
    /// The certificate, key and any OCSP response, checked once as the options are read: HTTPS.
    var tlsContext: TLSContext?
    var connectionLimit = 1024
    var idleTimeoutSeconds = 30
    var headerTimeoutSeconds = 30
    var access: AccessControl?
    /// With TLS: the files read again on SIGHUP.
    var certificateReload: CertificateReload?

    /// What SIGHUP does for the server: nil without TLS.
    var onReload: (@Sendable () -> Void)? {
        guard let certificateReload else { return nil }
        return { certificateReload.reload() }
    }

    /// nil when `option` (the address) is absent; its companions are then refused.
    init?(arguments: inout ArgumentList, option: String) throws {
        var request = ServerRequest()
        request.certificatePath = try arguments.value("--tls-cert")
        request.keyPath = try arguments.value("--tls-key")
        request.ocspPath = try arguments.value("--tls-ocsp")
        // A value that is no number is outside every range, and refused as one.
        request.connectionLimit = try arguments.value("--max-clients").map { Int($0) ?? .min }
        request.idleTimeoutSeconds = try arguments.value("--idle-timeout").map { Int($0) ?? .min }
        request.headerTimeoutSeconds = try arguments.value("--header-timeout").map { Int($0) ?? .min }
        request.token = try arguments.value("--auth-token")
        request.tokenFile = try arguments.value("--auth-token-file")
        request.signingKeyFile = try arguments.value("--auth-key")
        request.metricsToken = try arguments.value("--metrics-token")
        request.address = try arguments.value(option)
        let plan: ServerPlan
        do {
            guard let planned = try ServerPlan(request) else { return nil }
            plan = planned
        } catch {
            throw CommandError(error, addressOption: option)
        }
        do {
            address = try ListenAddress(plan.address)
        } catch {
            throw CommandError.usage("\(option): \(error)")
        }
        if let tls = plan.tls {
            do throws(TLSContext.Invalid) {
                tlsContext = try TLSContext(key: tls.key, certificate: tls.certificate, ocspResponse: tls.ocspResponse)
            } catch {
                if let ocsp = error.ocsp, let path = request.ocspPath {
                    throw CommandError("--tls-ocsp \(path) \(ocsp); \(ocsp.advice)", exitCode: .dataError)
                }
                throw CommandError("cannot serve HTTPS: \(error)", exitCode: .unavailable)
            }
        }
        if tlsContext != nil, let certificatePath = request.certificatePath, let keyPath = request.keyPath {
            certificateReload = CertificateReload(certificatePath: certificatePath, keyPath: keyPath, ocspPath: request.ocspPath)
        }
        connectionLimit = plan.connectionLimit
        idleTimeoutSeconds = plan.idleTimeoutSeconds
        headerTimeoutSeconds = plan.headerTimeoutSeconds
        if plan.isProtected {
            access = AccessControl(token: plan.streamToken, signingKey: plan.signingKey, metricsToken: plan.metricsToken)
        }
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

    /// Starts the server for `server`'s directory; the URL a viewer opens goes to standard error.
    func start(_ unprotected: StreamServer, entry: String) throws -> any HTTPServing {
        let server = StreamServer(root: unprotected.root, lowLatency: unprotected.lowLatency, metrics: unprotected.metrics,
                                  access: access, keyDirectory: unprotected.keyDirectory,
                                  deltaPlaylists: unprotected.deltaPlaylists, recordings: unprotected.recordings,
                                  pictures: unprotected.pictures)
        let http = try listen(handler: server.handle, metrics: server.metrics)
        let root = origin(port: http.port)
        FileHandle.standardError.write(Data("hlscap: serving \(server.root) at \(root)\(entry) (preview: \(root))\n".utf8))
        return http
    }

    /// Starts the one server of `hlscap run` for every stream `site` serves; the index's URL goes to
    /// standard error.
    func start(_ site: SiteServer, streamCount: Int) throws -> any HTTPServing {
        let http = try listen(handler: site.handle, metrics: site.metrics)
        let streams = streamCount == 1 ? "1 stream" : "\(streamCount) streams"
        FileHandle.standardError.write(Data("hlscap: serving \(streams) at \(origin(port: http.port)) (each at NAME/)\n".utf8))
        return http
    }

    /// HTTPS (HTTP/2 and HTTP/1.1 on OpenSSL) when a certificate is given, HTTP/1.1 on libmicrohttpd
    /// otherwise (local use).
    private func listen(handler: @escaping HTTPServer.Handler, metrics: ServerMetrics) throws -> any HTTPServing {
        if let warning = Self.raiseDescriptorLimit(toHold: connectionLimit) {
            FileHandle.standardError.write(Data("hlscap: \(warning)\n".utf8))
        }
        var configuration = HTTPServer.Configuration(address: address)
        configuration.tlsContext = tlsContext
        configuration.connectionLimit = connectionLimit
        configuration.idleTimeoutSeconds = idleTimeoutSeconds
        configuration.headerTimeoutSeconds = headerTimeoutSeconds
        configuration.refusalLog = { line in FileHandle.standardError.write(Data("hlscap: \(line)\n".utf8)) }
        let http: any HTTPServing
        do {
            if tlsContext != nil {
                let https = try HTTPSServer(configuration: configuration, handler: handler)
                certificateReload?.serve(https)
                http = https
            } else {
                http = try HTTPServer(configuration: configuration, handler: handler)
            }
        } catch {
            throw CommandError("\(error)", exitCode: .unavailable)
        }
        metrics.follow(http)
        return http
    }

    /// `http://HOST:PORT/`, as a viewer opens it.
    private func origin(port: Int) -> String {
        let scheme = tlsContext == nil ? "http" : "https"
        let host = address.host.isEmpty ? "localhost" : (address.host.contains(":") ? "[\(address.host)]" : address.host)
        return "\(scheme)://\(host):\(port)/"
    }
}

/// The engine's figures for `GET /metrics`.
enum EngineMetrics {
    static func families(_ snapshot: LiveStatistics.Snapshot) -> [ServerMetrics.Family] {
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
