import Foundation
import HLSKit
import HLSOutput
import HLSTestSupport
import Testing

/// A real S3 store: Ceph's RADOS Gateway on a one-node cluster (Tests/Tools/s3_gateway.py), started
/// for each test and removed after it, with a user whose keys are `accessKey` and `secretKey`.
final class S3Gateway {
    static let accessKey = "HLSCAPTESTKEY"
    static let secretKey = "hlscap-test-secret"
    /// A second key of the same user, for rotation.
    static let rotatedAccessKey = "HLSCAPROTATEDKEY"
    static let rotatedSecretKey = "hlscap-rotated-secret"
    static let bucket = "cameras"

    let directory: URL
    let gateway: BackgroundTool
    /// The cluster's daemons (monitor, OSD, radosgw), which must be gone after `stop()`.
    private(set) var daemons: [Int32] = []
    /// `http://127.0.0.1:PORT` (no trailing slash), for --s3-endpoint.
    let endpoint: String

    init() throws {
        directory = try PackagedStream.temporaryDirectory()
        do {
            gateway = try BackgroundTool("s3_gateway.py", [directory.appendingPathComponent("ceph").path,
                                                           "--access-key", Self.accessKey, "--secret-key", Self.secretKey],
                                         in: directory)
            endpoint = String(try gateway.announcedURL(prefix: "gateway").dropLast())
            let run = directory.appendingPathComponent("ceph/c/run")
            daemons = try FileManager.default.contentsOfDirectory(atPath: run.path).filter { $0.hasSuffix(".pid") }
                .compactMap { Int32((try? String(contentsOf: run.appendingPathComponent($0), encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") }
            try admin(["key", "create", "--uid=test", "--key-type=s3", "--access-key=\(Self.rotatedAccessKey)",
                       "--secret=\(Self.rotatedSecretKey)"])
            try check(["create", Self.bucket, "--cors", "--player"])
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    static var keys: [String: String] {
        ["AWS_ACCESS_KEY_ID": accessKey, "AWS_SECRET_ACCESS_KEY": secretKey]
    }

    /// The keys boto3 reads with: the rotated ones once the first are revoked.
    var toolKeys = S3Gateway.keys

    /// boto3 in .build/python, which `make deps` installs.
    static func boto3Python() throws -> URL {
        let python = ExternalTools.repositoryRoot.appendingPathComponent(".build/python/bin/python3")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw ExternalToolError.missingTool("boto3 in .build/python (make deps installs it)")
        }
        return python
    }

    /// Runs Tests/Tools/s3_check.py with boto3 and returns its last output line, parsed, when it is JSON.
    @discardableResult
    func check(_ arguments: [String], expectSuccess: Bool = true) throws -> [String: Any] {
        let process = try BackgroundProcess(Self.boto3Python().path, [
            ExternalTools.toolsDirectory.appendingPathComponent("s3_check.py").path, endpoint + "/"] + arguments,
            environment: toolKeys)
        let result = process.finish(timeoutSeconds: 120)
        if expectSuccess, !result.succeeded {
            throw ExternalToolError.failed(command: "s3_check.py " + arguments.joined(separator: " "), result: result)
        }
        let line = result.stdout.split(separator: "\n").last.map { Data($0.utf8) } ?? Data()
        return (try? JSONSerialization.jsonObject(with: line)) as? [String: Any] ?? ["output": result.stdout + result.stderr]
    }

    /// An object's bytes, read with boto3.
    func object(_ key: String) throws -> Data {
        let file = directory.appendingPathComponent("object-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let process = try BackgroundProcess(Self.boto3Python().path, [
            ExternalTools.toolsDirectory.appendingPathComponent("s3_check.py").path, endpoint + "/", "get", Self.bucket, key,
            "--output", file.path], environment: toolKeys)
        let result = process.finish(timeoutSeconds: 60)
        guard result.succeeded else { throw ExternalToolError.failed(command: "s3_check.py get \(key)", result: result) }
        return try Data(contentsOf: file)
    }

    /// radosgw-admin on this cluster.
    func admin(_ arguments: [String]) throws {
        let process = try BackgroundProcess("radosgw-admin", arguments,
                                            environment: ["CEPH_CONF": directory.appendingPathComponent("ceph/ceph.conf").path])
        let result = process.finish(timeoutSeconds: 60)
        guard result.succeeded else { throw ExternalToolError.failed(command: "radosgw-admin", result: result) }
    }

    /// The public URL of an object (path-style).
    func url(_ key: String) -> String { "\(endpoint)/\(Self.bucket)/\(key)" }

    /// hlscap's options to publish below `prefix` of the bucket.
    func publishArguments(_ prefix: String, endpoint: String? = nil) -> [String] {
        ["--publish", "s3://\(Self.bucket)/\(prefix)", "--s3-endpoint", endpoint ?? self.endpoint]
    }

    /// Whether `pid` is a process that is not a zombie (a daemon's zombie waits for init to reap it).
    static func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }

    /// Stops the gateway: every daemon of the cluster must have gone with it.
    func stop() {
        gateway.stop()
        for pid in daemons where Self.isRunning(pid) {
            Issue.record("the gateway's daemon \(pid) outlived it")
            kill(pid, SIGKILL)
        }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// `--publish s3://…` against the real gateway: what is stored is read back with boto3 (an
/// independent client), validated and played by URL, through faults, with rotated keys, and
/// refused at once when the store says no. Serialized: each test runs a Ceph cluster and hlscap on
/// two cores.
@Suite(.serialized) struct PublishS3StoreTests {
    static let fixture = "h264-aac.mp4"
    /// `make soak-s3` sets it to 600; the test suite runs 30 s.
    static let faultSeconds = Int(ProcessInfo.processInfo.environment["HLSCAP_S3_FAULT_SECONDS"] ?? "") ?? 30

    @Test func aRecordingIsStoredAsWrittenWithItsHeadersAndPlaysFromTheStore() throws {
        let store = try S3Gateway()
        defer { store.stop() }
        let local = try PackagedStream.package(Self.fixture, extraArguments: store.publishArguments("vod/front/") + [
            "--s3-acl", "public-read", "--playlist-cache-control", "max-age=1"], environment: S3Gateway.keys)
        defer { local.remove() }
        #expect(local.result.stdout.contains("published to s3://\(S3Gateway.bucket)/vod/front/"), "\(local.result.stdout)")

        let report = try store.check(["check", S3Gateway.bucket, "vod/front/", "--playlist-cache-control", "max-age=1",
                                      "--public"])
        #expect((report["problems"] as? [String])?.isEmpty == true, "\(report)")
        let files = local.files()
        #expect(report["objects"] as? Int == files.count, "one object per local file: \(files), \(report)")
        for file in files where !file.hasSuffix(".m3u8") {
            #expect(try store.object("vod/front/" + file) == Data(try local.bytes(file)), "\(file)")
        }
        // The store's playlist grew as EVENT while the segments went up, and ended with ENDLIST.
        let remote = try MediaPlaylist.parse(String(decoding: try store.object("vod/front/playlist.m3u8"), as: UTF8.self))
        #expect(remote.segments == (try local.playlist()).segments)
        #expect(remote.endList && remote.playlistType == .event)
        try ExternalTools.validateStream(store.url("vod/front/playlist.m3u8"))
        let played = try ExternalTools.chromiumPlays(url: store.url("vod/front/playlist.m3u8"),
                                                     playerPage: store.url("__player.html"))
        #expect(played.ok, "\(played.report)")

        // Virtual-hosted addressing (BUCKET.localhost, which resolves to loopback; the gateway knows
        // `localhost` as its DNS name) stores the same objects.
        let virtual = try ExternalTools.runHlscap([
            "file", ExternalTools.fixturesDirectory.appendingPathComponent(Self.fixture).path, "--copy", "--quiet",
            "--publish", "s3://\(S3Gateway.bucket)/vod/virtual/", "--s3-virtual-hosted",
            "--s3-endpoint", store.endpoint.replacingOccurrences(of: "127.0.0.1", with: "localhost")],
            environment: S3Gateway.keys)
        #expect(virtual.succeeded, "\(virtual.stderr)")
        #expect(virtual.stdout.hasPrefix("http://\(S3Gateway.bucket).localhost:"), "\(virtual.stdout)")
        let virtualReport = try store.check(["check", S3Gateway.bucket, "vod/virtual/"])
        #expect((virtualReport["problems"] as? [String])?.isEmpty == true && virtualReport["objects"] as? Int == files.count,
                "\(virtualReport)")
    }

    /// A live window through a proxy that fails 30 % of uploads and goes down for longer than the
    /// window, while boto3 reads the store's playlist every 50 ms: the store never lists an object it
    /// lacks, gets every segment, lists each in some version of its playlist (the bucket keeps every
    /// version, which a poller may miss), deletes what left the window, ends with ENDLIST; hlscap exits 0.
    @Test func aLiveWindowThroughFaultsLosesNothingAndNeverListsAMissingObject() throws {
        let store = try S3Gateway()
        defer { store.stop() }
        try store.check(["versioning", S3Gateway.bucket])
        let proxy = try BackgroundTool("fault_proxy.py", [store.endpoint + "/", "--keep-host", "--fail-share", "0.3",
                                                          "--seed", "7", "--latency", "0.05", "--stall", "3",
                                                          "--outage", "8:10"], in: store.directory)
        defer { proxy.stop() }
        let proxyURL = String(try proxy.announcedURL(prefix: "proxy").dropLast())
        let poller = try BackgroundTool("s3_check.py", [store.endpoint + "/", "poll", S3Gateway.bucket,
                                                        "live/cam1/playlist.m3u8", "--sliding", "--timeout", String(Self.faultSeconds + 210)],
                                        in: store.directory, python: S3Gateway.boto3Python(), environment: S3Gateway.keys)
        defer { poller.stop() }
        let seconds = Self.faultSeconds
        let result = try ExternalTools.run(ExternalTools.hlscapBinary().path, [
            "live", "--video", "test", "--audio", "test", "--size", "320x180", "--duration", String(seconds),
            "--window", "3", "--quiet", "--publish-timeout", "1.5", "--publish-drain-timeout", "60", "--s3-acl", "public-read"]
            + store.publishArguments("live/cam1/", endpoint: proxyURL),
            timeoutSeconds: Double(seconds) + 200, environment: S3Gateway.keys)
        #expect(result.succeeded, "exit \(result.exitStatus): \(result.stderr)")

        #expect(poller.waitForExit(timeoutSeconds: 30) == 0, "\(poller.output)")
        let polled = try JSONSerialization.jsonObject(with: Data(poller.output.utf8)) as? [String: Any] ?? [:]
        #expect((polled["violations"] as? [String])?.isEmpty == true, "\(poller.output)")
        let listed = try store.check(["listed", S3Gateway.bucket, "live/cam1/playlist.m3u8"])
        #expect((listed["uris"] as? [String])?.filter { $0.hasPrefix(StreamLayout.segmentDirectory + "/") }
                == (1...seconds / 2).map { StreamLayout.segmentPath($0) }, "every segment was listed on the store: \(listed)")
        #expect((polled["segmentsSeen"] as? Int ?? 0) > 0, "\(polled)")
        proxy.stop()
        let counts = try #require(try JSONSerialization.jsonObject(
            with: Data((proxy.output.split(separator: "\n").last ?? "").utf8)) as? [String: Int])
        for fault in ["503", "stall", "reset", "outage"] {
            #expect(counts[fault, default: 0] > 0, "the proxy injected \(fault): \(counts)")
        }

        let playlist = try MediaPlaylist.parse(String(decoding: try store.object("live/cam1/playlist.m3u8"), as: UTF8.self))
        #expect(playlist.endList)
        #expect(playlist.segments.map(\.uri) == (seconds / 2 - 2...seconds / 2).map { StreamLayout.segmentPath($0) })
        // What left the window was deleted from the store: the segments listed, the init section,
        // three playlists.
        let report = try store.check(["check", S3Gateway.bucket, "live/cam1/"])
        #expect((report["problems"] as? [String])?.isEmpty == true, "\(report)")
        #expect(report["objects"] as? Int == 3 + 1 + 3, "\(report)")
        try ExternalTools.validateStream(store.url("live/cam1/playlist.m3u8"))
    }

    /// Keys rotated during a stream: the credentials file is rewritten with a new key and the old
    /// one is revoked at the store; the stream goes on and every object is stored.
    @Test func aRotatedCredentialsFileIsReadAgainDuringTheStream() throws {
        let store = try S3Gateway()
        defer { store.stop() }
        let credentials = store.directory.appendingPathComponent("credentials")
        try "[camera]\naws_access_key_id = \(S3Gateway.accessKey)\naws_secret_access_key = \(S3Gateway.secretKey)\n"
            .write(to: credentials, atomically: true, encoding: .utf8)
        let hlscap = try ExternalTools.startHlscap([
            "live", "--video", "test", "--audio", "test", "--size", "320x180", "--duration", "16", "--window", "0",
            "--quiet"] + store.publishArguments("rotate/"),
            environment: ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_PROFILE": "camera",
                          "AWS_SHARED_CREDENTIALS_FILE": credentials.path,
                          "AWS_CONFIG_FILE": store.directory.appendingPathComponent("config").path])
        Thread.sleep(forTimeInterval: 6)
        try "[camera]\naws_access_key_id = \(S3Gateway.rotatedAccessKey)\naws_secret_access_key = \(S3Gateway.rotatedSecretKey)\n"
            .write(to: credentials, atomically: true, encoding: .utf8)
        try store.admin(["key", "rm", "--uid=test", "--key-type=s3", "--access-key=\(S3Gateway.accessKey)"])
        store.toolKeys = ["AWS_ACCESS_KEY_ID": S3Gateway.rotatedAccessKey, "AWS_SECRET_ACCESS_KEY": S3Gateway.rotatedSecretKey]
        let result = hlscap.finish(timeoutSeconds: 120)
        #expect(result.succeeded, "exit \(result.exitStatus): \(result.stderr)")
        #expect(!result.stderr.contains(S3Gateway.rotatedSecretKey) && !result.stdout.contains(S3Gateway.rotatedSecretKey))
        let playlist = try MediaPlaylist.parse(String(decoding: try store.object("rotate/playlist.m3u8"), as: UTF8.self))
        #expect(playlist.endList)
        #expect(playlist.segments.count == 8)
        let report = try store.check(["check", S3Gateway.bucket, "rotate/"])
        #expect((report["problems"] as? [String])?.isEmpty == true, "\(report)")
    }

    /// A wrong secret, a missing bucket, a clock the store rejects, an endpoint that does not answer:
    /// one line naming the bucket and the store's code, the sysexits code, in the first seconds, and
    /// no secret in the output.
    @Test func refusalsAreDecidedAtOnceWithTheStoresCode() throws {
        let store = try S3Gateway()
        defer { store.stop() }
        let live = ["live", "--video", "test", "--audio", "test", "--size", "320x180", "--duration", "30", "--quiet"]
        func run(_ arguments: [String], environment: [String: String], faketime: String? = nil)
            throws -> (result: ProcessResult, seconds: Double) {
            let started = Date()
            let command = try ExternalTools.hlscapBinary().path
            let result = try faketime.map {
                try ExternalTools.run("faketime", ["-f", $0, command] + arguments, timeoutSeconds: 60, environment: environment)
            } ?? ExternalTools.run(command, arguments, timeoutSeconds: 60, environment: environment)
            return (result, Date().timeIntervalSince(started))
        }
        let wrongSecret = "not-the-secret-\(UUID().uuidString)"
        let refused = try run(live + store.publishArguments("a/"),
                              environment: ["AWS_ACCESS_KEY_ID": S3Gateway.accessKey, "AWS_SECRET_ACCESS_KEY": wrongSecret])
        #expect(refused.result.exitStatus == 77, "\(refused.result.stderr)")
        #expect(refused.result.stderr.contains("SignatureDoesNotMatch") && refused.result.stderr.contains(S3Gateway.bucket))
        #expect(!refused.result.stderr.contains(wrongSecret))
        #expect(refused.seconds < 5)

        let unknownKey = try run(live + store.publishArguments("a/"),
                                 environment: ["AWS_ACCESS_KEY_ID": "NOSUCHKEY", "AWS_SECRET_ACCESS_KEY": wrongSecret])
        #expect(unknownKey.result.exitStatus == 77, "\(unknownKey.result.stderr)")
        #expect(unknownKey.result.stderr.contains("InvalidAccessKeyId"))

        let noBucket = try run(live + ["--publish", "s3://no-such-bucket/a/", "--s3-endpoint", store.endpoint],
                               environment: S3Gateway.keys)
        #expect(noBucket.result.exitStatus == 78, "\(noBucket.result.stderr)")
        #expect(noBucket.result.stderr.contains("no-such-bucket") && noBucket.result.stderr.contains("NoSuchBucket"))

        let skewed = try run(live + store.publishArguments("a/"), environment: S3Gateway.keys, faketime: "+2h")
        #expect(skewed.result.exitStatus == 77, "\(skewed.result.stderr)")
        #expect(skewed.result.stderr.contains("RequestTimeTooSkewed"))

        let closedPort = try run(live + store.publishArguments("a/", endpoint: "http://127.0.0.1:9"),
                                 environment: S3Gateway.keys)
        #expect(closedPort.result.exitStatus == 69, "\(closedPort.result.stderr)")
        #expect(closedPort.result.stderr.contains("does not answer"))

        let noKeys = try run(live + store.publishArguments("a/"),
                             environment: ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_PROFILE": "nobody",
                                           "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials"])
        #expect(noKeys.result.exitStatus == 77, "\(noKeys.result.stderr)")
        #expect(noKeys.result.stderr.contains("no S3 credentials"))
        for outcome in [refused, unknownKey, noBucket, skewed, closedPort, noKeys] {
            #expect(outcome.result.stderr.split(separator: "\n").count == 1, "one line: \(outcome.result.stderr)")
        }
        // Nothing was written to the store by any of them.
        #expect((try store.check(["check", S3Gateway.bucket, "a/"], expectSuccess: false))["objects"] as? Int == 0)
    }

    /// `--record` with an S3 target: the finished recording goes up with a multipart upload and is
    /// the local file, byte for byte.
    @Test func aFinishedRecordingIsUploadedInPartsAsItIs() throws {
        let store = try S3Gateway()
        defer { store.stop() }
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recording = directory.appendingPathComponent("front.mp4")
        let result = try ExternalTools.runHlscap([
            "live", "--video", "test", "--audio", "test", "--size", "320x180", "--duration", "6", "--quiet",
            "--record", recording.path, "--record-codec", "h264"] + store.publishArguments("cams/front/"),
            timeoutSeconds: 120, environment: S3Gateway.keys)
        #expect(result.succeeded, "exit \(result.exitStatus): \(result.stderr)")
        #expect(result.stdout.contains("uploaded the recording to s3://\(S3Gateway.bucket)/cams/front/recordings/front.mp4: 1 parts"),
                "\(result.stdout)")
        #expect(try store.object("cams/front/recordings/front.mp4") == Data(contentsOf: recording))
    }

    /// A 12 MiB file in 5 MiB parts through a proxy that fails a third of the PUTs: every part is
    /// retried until stored and the object is the file. When one part can never be stored, the upload
    /// is aborted and the store keeps no upload in progress.
    @Test func multipartUploadsRetryEachPartAndAbortWhatCannotFinish() throws {
        let store = try S3Gateway()
        defer { store.stop() }
        let file = store.directory.appendingPathComponent("large.mp4")
        var generator = SeededGenerator(state: 24)
        let bytes = Data((0..<(12 * 1024 * 1024 + 12_345)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try bytes.write(to: file)
        let backoff = Backoff(initialSeconds: 0.05, maximumSeconds: 0.5)

        func upload(through proxyArguments: [String], key: String) throws
            -> (result: Result<S3MultipartUpload.Report, S3MultipartUpload.Failure>, counts: String) {
            let proxy = try BackgroundTool("fault_proxy.py", [store.endpoint + "/", "--keep-host", "--stall", "2"]
                                           + proxyArguments, in: store.directory)
            defer { proxy.stop() }
            let target = try S3Target(url: "s3://\(S3Gateway.bucket)/", endpoint: String(try proxy.announcedURL(prefix: "proxy").dropLast()),
                                      region: nil, pathStyle: nil)
            let transport = S3Transport(target: target, credentials: S3CredentialSource(environment: S3Gateway.keys),
                                        requestTimeoutSeconds: 1.5, maxConnections: 2)
            let upload = S3MultipartUpload(transport: transport, partSize: S3MultipartUpload.minimumPartSize, attempts: 8,
                                           backoff: backoff)
            let result = Result { () throws(S3MultipartUpload.Failure) in
                try upload.upload(file: file.path, key: key, headers: [HTTPHeader(name: "Content-Type", value: "video/mp4")])
            }
            proxy.stop()
            return (result, proxy.output)
        }

        let retried = try upload(through: ["--fail-share", "0.34", "--seed", "3", "--methods", "PUT"], key: "rec/large.mp4")
        let report = try retried.result.get()
        #expect(report.parts == 3 && report.bytes == Int64(bytes.count), "\(report)")
        #expect(report.retries > 0, "the proxy failed some parts: \(retried.counts)")
        #expect(try store.object("rec/large.mp4") == bytes)

        let failed = try upload(through: ["--fail-share", "1", "--methods", "PUT", "--paths", "partNumber=2"], key: "rec/lost.mp4")
        guard case .failure(let failure) = failed.result else {
            Issue.record("an upload whose second part always fails cannot succeed: \(failed.counts)")
            return
        }
        #expect(failure.aborted, "\(failure)")
        #expect(failure.description.contains("PUT failed after 8 attempt(s)"), "\(failure)")
        #expect((try store.check(["uploads", S3Gateway.bucket]))["uploads"] as? [String] == [], "no upload left in progress")
        #expect((try store.check(["check", S3Gateway.bucket, "rec/lost.mp4"], expectSuccess: false))["objects"] as? Int == 0)
    }

    /// `make bench-s3-fleet`'s short run: three cameras publishing to one bucket at once, each stream
    /// whole on the store (ENDLIST, every named object stored) and none dropping frames.
    @Test func threeCamerasShareOneBucket() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fleet = try BackgroundProcess(S3Gateway.boto3Python().path, [
            ExternalTools.toolsDirectory.appendingPathComponent("s3_fleet.py").path,
            "--hlscap", try ExternalTools.hlscapBinary().path, "--cameras", "3", "--seconds", "12",
            "--directory", directory.path])
        let result = fleet.finish(timeoutSeconds: 240)
        print(result.stdout)
        #expect(result.succeeded, "\(result.stdout)\(result.stderr)")
        let line = Data((result.stdout.split(separator: "\n").last ?? "").utf8)
        let report = try #require(try JSONSerialization.jsonObject(with: line) as? [String: Any])
        #expect((report["perCamera"] as? [Any])?.count == 3, "\(report)")
        #expect((report["summary"] as? [String: Any])?["droppedFrames"] as? Int == 0, "\(report)")
    }

    /// contrib/systemd/hlscap@.service with contrib/systemd/camera.env.example, as systemd would run
    /// the instance hlscap@front: the camera's stream lands below front/ in the bucket, with the key
    /// from the shared credentials file's profile.
    @Test func theFleetUnitsCommandLinePublishesItsCamera() throws {
        let store = try S3Gateway()
        defer { store.stop() }
        let example = try String(contentsOf: ExternalTools.repositoryRoot
            .appendingPathComponent("contrib/systemd/camera.env.example"), encoding: .utf8)
        var environment: [String: String] = [:]
        for line in example.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { environment[parts[0]] = parts[1] }
        }
        let profile = try #require(environment["AWS_PROFILE"])
        let credentials = store.directory.appendingPathComponent("aws-credentials")
        try "[\(profile)]\naws_access_key_id = \(S3Gateway.accessKey)\naws_secret_access_key = \(S3Gateway.secretKey)\n"
            .write(to: credentials, atomically: true, encoding: .utf8)
        // This machine's camera, microphone and store in place of the example's.
        environment.merge(["HLSCAP_VIDEO": "test", "HLSCAP_AUDIO": "test", "HLSCAP_S3_ENDPOINT": store.endpoint,
                           "HLSCAP_BUCKET": S3Gateway.bucket, "HLSCAP_OPTIONS": "--size 320x180 --duration 4",
                           "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "",
                           "AWS_SHARED_CREDENTIALS_FILE": credentials.path]) { $1 }
        let local = store.directory.appendingPathComponent("state")
        let arguments = try ServiceUnitTests.execStart(ServiceUnitTests.fleetUnit).dropFirst().flatMap { word -> [String] in
            let instance = word.replacingOccurrences(of: "%i", with: "front")
                .replacingOccurrences(of: "/var/lib/hlscap/front", with: local.path)
            if instance.hasPrefix("$"), !instance.hasPrefix("${") {
                return (environment[String(instance.dropFirst())] ?? "").split(separator: " ").map(String.init)
            }
            var expanded = instance
            for (name, value) in environment { expanded = expanded.replacingOccurrences(of: "${\(name)}", with: value) }
            return [expanded]
        }
        #expect(!arguments.contains { $0.contains("$") }, "every variable is in the example: \(arguments)")
        let result = try ExternalTools.runHlscap(arguments, timeoutSeconds: 120, environment: environment)
        #expect(result.succeeded, "exit \(result.exitStatus): \(result.stderr)")
        #expect(result.stdout.contains("published to s3://\(S3Gateway.bucket)/front/"), "\(result.stdout)")
        let report = try store.check(["check", S3Gateway.bucket, "front/"])
        #expect((report["problems"] as? [String])?.isEmpty == true, "\(report)")
    }
}
