import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// A Python tool from Tests/Tools running in the background until `stop()`: the nginx origin,
/// the fault-injecting proxy, the playlist poller.
final class BackgroundTool {
    static let startupSeconds = 20.0
    static let pollSeconds = 0.05
    static let stopSeconds = 10.0

    private let process = Process()
    private let outputURL: URL
    /// Signalled once on exit, and signalled again by every wait that takes it, so it stays open.
    private let exited = DispatchSemaphore(value: 0)

    /// Starts `script` with `python` (PATH's python3 when nil) and `environment` added to this
    /// process's own.
    init(_ script: String, _ arguments: [String], in directory: URL, python: URL? = nil,
         environment: [String: String] = [:]) throws {
        outputURL = directory.appendingPathComponent("\(script)-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        let output = try FileHandle(forWritingTo: outputURL)
        process.executableURL = try python ?? ExternalTools.locate("python3")
        process.arguments = [ExternalTools.toolsDirectory.appendingPathComponent(script).path] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        process.terminationHandler = { [exited] _ in exited.signal() }
        try process.run()
        try output.close()
    }

    /// The second word of the first output line that starts with `prefix`, waiting for it.
    func announcedURL(prefix: String) throws -> String {
        let deadline = Date(timeIntervalSinceNow: Self.startupSeconds)
        while Date() < deadline {
            let line = output.split(separator: "\n").first { $0.hasPrefix(prefix + " ") }
            if let line, let url = line.split(separator: " ").dropFirst().first {
                return String(url)
            }
            guard process.isRunning else { break }
            Thread.sleep(forTimeInterval: Self.pollSeconds)
        }
        stop()
        throw ExternalToolError.unexpectedOutput(command: process.arguments?.joined(separator: " ") ?? "", output: output)
    }

    var output: String {
        (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
    }

    /// Waits for the tool to exit by itself, or stops it after `timeoutSeconds`; its exit status.
    func waitForExit(timeoutSeconds: Double) -> Int32 {
        if !waitForExit(within: timeoutSeconds) { stop() }
        return process.terminationStatus
    }

    /// SIGTERM, then SIGKILL if it does not exit in time.
    func stop() {
        if process.isRunning { process.terminate() }
        if !waitForExit(within: Self.stopSeconds) {
            kill(process.processIdentifier, SIGKILL)
            _ = waitForExit(within: Self.stopSeconds)
        }
    }

    private func waitForExit(within seconds: Double) -> Bool {
        guard exited.wait(timeout: .now() + seconds) == .success else { return false }
        exited.signal()
        return true
    }
}

/// A scratch directory holding an nginx origin (root/), its logs and any other tool's output.
struct OriginFixture {
    let directory: URL
    let origin: BackgroundTool
    /// `http://127.0.0.1:PORT/`
    let url: String

    init() throws {
        directory = try PackagedStream.temporaryDirectory()
        _ = try ExternalTools.locate("nginx")
        origin = try BackgroundTool("origin_server.py", [directory.appendingPathComponent("root").path,
                                                         "--logs", directory.appendingPathComponent("logs").path],
                                    in: directory)
        url = try origin.announcedURL(prefix: "origin")
    }

    /// A file as nginx stored it.
    func stored(_ path: String) -> Data? {
        FileManager.default.contents(atPath: directory.appendingPathComponent("root/\(path)").path)
    }

    func storedPlaylist(_ path: String) throws -> MediaPlaylist {
        try MediaPlaylist.parse(String(decoding: try #require(stored(path)), as: UTF8.self))
    }

    func stop() {
        origin.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// `hlscap file --publish` against a real origin (nginx with PUT and DELETE), directly and through
/// a proxy that fails uploads. Serialized: each test runs servers and hlscap on two cores.
@Suite(.serialized) struct PublishOriginTests {
    static let fixture = "h264-aac.mp4"

    @Test func publishedStreamIsTheLocalStreamAndDecodes() throws {
        let origin = try OriginFixture()
        defer { origin.stop() }
        let local = try PackagedStream.package(Self.fixture, extraArguments: [
            "--publish", origin.url + "live/", "--header", "X-Upload-Token: secret"])
        defer { local.remove() }
        #expect(local.result.stdout.contains("published to \(origin.url)live/"))
        let remote = try origin.storedPlaylist("live/playlist.m3u8")
        try ExternalTools.validateStream(origin.url + "live/playlist.m3u8")
        let localPlaylist = try local.playlist()
        #expect(remote.segments == localPlaylist.segments)
        #expect(remote.endList)
        #expect(remote.playlistType == .event, "grown as EVENT, finished with ENDLIST")
        for path in ["init.mp4"] + localPlaylist.segments.map(\.uri) {
            #expect(origin.stored("live/" + path) == Data(try local.bytes(path)), "\(path)")
        }
        let errors = try ExternalTools.ffmpegDecodeErrors(path: origin.url + "live/playlist.m3u8")
        #expect(errors.isEmpty, "\(errors)")
        // access.log lines: time, method, URI, status, request bytes, request seconds.
        let log = try String(contentsOf: origin.directory.appendingPathComponent("logs/access.log"), encoding: .utf8)
        let puts = log.split(separator: "\n").map { $0.split(separator: " ") }.filter { $0[1] == "PUT" }
        #expect(puts.count >= localPlaylist.segments.count + 2)
        #expect(puts.allSatisfy { $0[3].hasPrefix("20") }, "every PUT stored: \(log)")
    }

    @Test func withoutOutTheStreamGoesOnlyToTheOriginAndChromiumPlaysIt() throws {
        let origin = try OriginFixture()
        defer { origin.stop() }
        let result = try ExternalTools.runHlscap(["file", "Fixtures/\(Self.fixture)", "--publish", origin.url + "vod"])
        #expect(result.succeeded, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("\(origin.url)vod/playlist.m3u8: "))
        let playlist = try origin.storedPlaylist("vod/playlist.m3u8")
        try ExternalTools.validateStream(origin.url + "vod/playlist.m3u8")
        #expect(playlist.endList)
        #expect(!playlist.segments.isEmpty)
        let playback = try ExternalTools.chromiumPlays(url: origin.url + "vod/playlist.m3u8")
        #expect(playback.ok, "\(playback.report)")
    }

    /// `--publish-keys`: a live stream's rotating keys go up to keys/ below the URL, each before any
    /// playlist at the origin names it (the poller fetches every key URI as soon as a version lists
    /// it), and ffmpeg decodes the stream from the origin alone. Without the flag no key leaves the
    /// machine; without --publish the flag is refused.
    @Test func keysGoUpOnlyWithPublishKeysAndBeforeAnyPlaylistNamesThem() throws {
        let origin = try OriginFixture()
        defer { origin.stop() }
        let keys = origin.directory.appendingPathComponent("keys-kept")
        let poller = try BackgroundTool("origin_poller.py", [origin.url + "live/playlist.m3u8", "--timeout", "90"],
                                        in: origin.directory)
        defer { poller.stop() }
        let live = try ExternalTools.runHlscap([
            "live", "--video", "test", "--audio", "test", "--size", "320x180", "--duration", "8", "--window", "0",
            "--quiet", "--publish", origin.url + "live/", "--encrypt", "aes-128", "--key-rotation", "1",
            "--key-dir", keys.path, "--publish-keys"], timeoutSeconds: 120)
        #expect(live.succeeded, "\(live.stderr)")
        #expect(poller.waitForExit(timeoutSeconds: 20) == 0, "no version named a key the origin lacked: \(poller.output)")
        let keyNames = try FileManager.default.contentsOfDirectory(atPath: keys.path).sorted()
        let playlist = try origin.storedPlaylist("live/playlist.m3u8")
        #expect(keyNames.count == playlist.segments.count && keyNames.count >= 4, "a key per segment: \(keyNames)")
        for name in keyNames {
            #expect(origin.stored("live/keys/" + name) == FileManager.default.contents(atPath: keys.appendingPathComponent(name).path),
                    "\(name)")
        }
        #expect(try ExternalTools.ffprobeFrameCount(path: origin.url + "live/playlist.m3u8") == 240)

        let kept = origin.directory.appendingPathComponent("keys-at-home")
        let file = try ExternalTools.runHlscap(["file", "Fixtures/\(Self.fixture)", "--publish", origin.url + "vod/",
                                                "--encrypt", "aes-128", "--key-dir", kept.path, "--quiet"])
        #expect(file.succeeded, "\(file.stderr)")
        #expect(try origin.storedPlaylist("vod/playlist.m3u8").segments.first?.key != nil)
        #expect(!FileManager.default.fileExists(atPath: origin.directory.appendingPathComponent("root/vod/keys").path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: kept.path).count == 1)

        let unpublished = try ExternalTools.runHlscap(["file", "Fixtures/\(Self.fixture)", "--out",
                                                       origin.directory.appendingPathComponent("local").path,
                                                       "--encrypt", "aes-128", "--publish-keys"])
        #expect(unpublished.exitStatus == 64 && unpublished.stderr.contains("--publish URL"), "\(unpublished.stderr)")
    }

    @Test func anUnreachableOriginEndsWithAnIOErrorThatListsTheFiles() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // nginx answers on the port until it stops; afterwards nothing listens there.
        let origin = try OriginFixture()
        origin.stop()
        let result = try ExternalTools.runHlscap([
            "file", "Fixtures/\(Self.fixture)", "--out", directory.path, "--publish", origin.url + "live/",
            "--publish-drain-timeout", "1", "--quiet"])
        #expect(result.exitStatus == 74)
        #expect(result.stderr.contains("did not reach \(origin.url)live/"))
        for path in ["init.mp4", "seg/000001.m4s", "seg/000002.m4s", "playlist.m3u8"] {
            #expect(result.stderr.contains("  \(path): "), "\(path) missing from: \(result.stderr)")
        }
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("playlist.m3u8").path),
                "the local stream is kept")
        try ExternalTools.validateStream(directory)
    }

    @Test(arguments: [
        ("seg/000001.m4s", "lists seg/000001.m4s, which answered 404"),
        ("seg/000002.m4s\n#EXTINF:1.000,\nseg/000001.m4s", "lists segments out of order"),
    ])
    func thePollerCatchesAPlaylistThatIsUnsafeForViewers(segmentLines: String, complaint: String) throws {
        let origin = try OriginFixture()
        defer { origin.stop() }
        let root = origin.directory.appendingPathComponent("root/bad")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("seg"), withIntermediateDirectories: true)
        try Data("media".utf8).write(to: root.appendingPathComponent("seg/000002.m4s"))
        let playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.000,\n\(segmentLines)\n#EXT-X-ENDLIST\n"
        try Data(playlist.utf8).write(to: root.appendingPathComponent("playlist.m3u8"))
        let result = try ExternalTools.run("python3", [
            ExternalTools.toolsDirectory.appendingPathComponent("origin_poller.py").path,
            origin.url + "bad/playlist.m3u8", "--timeout", "10"])
        #expect(result.exitStatus == 1)
        #expect(result.stdout.contains(complaint), "\(result.stdout)")
    }

    @Test(arguments: [
        ["--publish", "ftp://127.0.0.1/live/"],
        ["--publish", "not a url"],
        ["--header", "X: y", "--out", "/tmp/x"],
        ["--publish-backlog", "10", "--out", "/tmp/x"],
        ["--publish", "http://127.0.0.1:1/", "--header", "no colon"],
        ["--publish", "http://127.0.0.1:1/", "--publish-timeout", "0"],
    ])
    func badPublishOptionsAreUsageErrors(arguments: [String]) throws {
        let result = try ExternalTools.runHlscap(["file", "Fixtures/\(Self.fixture)"] + arguments)
        #expect(result.exitStatus == 64, "\(result.stderr)")
    }
}
