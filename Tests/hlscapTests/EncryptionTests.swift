import Foundation
import Glibc
import HLSKit
import HLSTestSupport
import Testing

/// `--encrypt aes-128`: what is stored is ciphertext that OpenSSL's own command line decrypts to the
/// clear stream's bytes; keys are the owner's alone and served only to those who may watch; ffmpeg,
/// hls.js and the validator play and read the stream through the built-in server.
@Suite(.serialized) struct EncryptionTests {
    static let fixture = ExternalTools.fixturesDirectory.appendingPathComponent("h264-aac.mp4").path

    @Test func aRecordingIsEncryptedWithRotatingKeysAndPlaysThroughTheServer() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let encrypted = directory.appendingPathComponent("vod"), clear = directory.appendingPathComponent("clear")
        let made = try ExternalTools.runHlscap(["file", Self.fixture, "--copy", "--out", encrypted.path, "--quiet",
                                                "--encrypt", "aes-128", "--key-rotation", "1"])
        #expect(made.succeeded, "\(made.stderr)")
        #expect(try ExternalTools.runHlscap(["file", Self.fixture, "--copy", "--out", clear.path, "--quiet"]).succeeded)

        // Keys beside the stream, not in it, readable by the owner alone: one per segment here.
        let keys = directory.appendingPathComponent("vod.keys")
        var status = stat()
        #expect(stat(keys.path, &status) == 0 && status.st_mode & 0o777 == 0o700)
        let keyNames = try FileManager.default.contentsOfDirectory(atPath: keys.path).sorted()
        #expect(keyNames.count == 2, "\(keyNames)")
        for name in keyNames {
            #expect(stat(keys.appendingPathComponent(name).path, &status) == 0 && status.st_mode & 0o777 == 0o600)
        }
        #expect(!FileManager.default.fileExists(atPath: encrypted.appendingPathComponent("iframes.m3u8").path))

        // OpenSSL's command line decrypts each segment, with its key and its sequence number as IV, to
        // the clear stream's segment.
        let playlist = try MediaPlaylist.parse(String(contentsOf: encrypted.appendingPathComponent("playlist.m3u8"), encoding: .utf8))
        for (index, segment) in playlist.segments.enumerated() {
            let key = try #require(segment.key).uri
            #expect(key.hasPrefix("keys/"))
            let keyHex = try Data(contentsOf: keys.appendingPathComponent(String(key.dropFirst(5)))).map { String(format: "%02x", $0) }.joined()
            let iv = String(format: "%032x", playlist.mediaSequence + index)
            let decrypted = directory.appendingPathComponent("decrypted-\(index)")
            let result = try ExternalTools.run("openssl", ["enc", "-d", "-aes-128-cbc", "-K", keyHex, "-iv", iv,
                                                           "-in", encrypted.appendingPathComponent(segment.uri).path,
                                                           "-out", decrypted.path])
            #expect(result.succeeded, "\(result.stderr)")
            #expect(try Data(contentsOf: decrypted) == Data(contentsOf: clear.appendingPathComponent(segment.uri)))
        }

        // Served with a token: keys only with it; ffmpeg decodes every frame; the validator decrypts
        // and checks every segment; hls.js plays it.
        let token = "viewer-\(UUID().uuidString)"
        let served = try ServedStream.start(["serve", encrypted.path, "--listen", "127.0.0.1:0", "--auth-token", token])
        defer { served.process.send(SIGTERM) }
        let keyPath = try #require(playlist.segments.first?.key?.uri)
        #expect(try served.get(keyPath).status == 401)
        let fetched = try served.get(keyPath + "?token=" + token)
        #expect(fetched.status == 200 && fetched.body.count == 16 && fetched.headers["cache-control"] == "private, no-store")
        let master = served.base.appendingPathComponent("master.m3u8").absoluteString + "?token=" + token
        #expect(try ExternalTools.ffprobeFrameCount(path: master)
                == ExternalTools.ffprobeFrameCount(path: clear.appendingPathComponent("master.m3u8").path))
        #expect(try ExternalTools.ffmpegDecodeErrors(path: master).isEmpty)
        let validated = try ExternalTools.validateStream(master)
        #expect(validated.stdout.contains("read 2 playlists, \(playlist.segments.count) segments"), "\(validated.stdout)")
        let hlsjs = try ExternalTools.runJSONTool("latency_probe.py", [master, "--hlsjs", HLSJS.path, "--vod",
                                                                       "--seconds", "3"], timeoutSeconds: 90)
        #expect(hlsjs.ok, "\(hlsjs.text)")
    }

    @Test func aLiveStreamRotatesItsKeysAndDecodes() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("live")
        let result = try ExternalTools.runHlscap(["live", "--video", "test", "--audio", "test", "--size", "320x180",
                                                  "--duration", "10", "--quiet", "--out", stream.path,
                                                  "--encrypt", "aes-128", "--key-rotation", "2"], timeoutSeconds: 120)
        #expect(result.succeeded, "\(result.stderr)")
        let text = try String(contentsOf: stream.appendingPathComponent("playlist.m3u8"), encoding: .utf8)
        let keyLines = text.split(separator: "\n").filter { $0.hasPrefix("#EXT-X-KEY:METHOD=AES-128") }
        #expect(keyLines.count == 3, "five segments, a key every two: \(text)")
        let served = try ServedStream.start(["serve", stream.path, "--listen", "127.0.0.1:0"])
        defer { served.process.send(SIGTERM) }
        #expect(try ExternalTools.ffprobeFrameCount(path: served.base.appendingPathComponent("playlist.m3u8").absoluteString) == 300)
        try ExternalTools.validateStream(served.base.appendingPathComponent("master.m3u8"))
    }

    @Test func combinationsThatCannotWorkAreRefused() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("s").path
        let cbcs = try ExternalTools.runHlscap(["file", Self.fixture, "--out", out, "--encrypt", "cbcs"])
        #expect(cbcs.exitStatus == 64 && cbcs.stderr.contains("aes-128"), "\(cbcs.stderr)")
        let lowLatency = try ExternalTools.runHlscap(["live", "--video", "test", "--audio", "test", "--out", out,
                                                      "--serve", "127.0.0.1:0", "--low-latency", "--encrypt", "aes-128"])
        #expect(lowLatency.exitStatus == 64 && lowLatency.stderr.contains("--low-latency"), "\(lowLatency.stderr)")
        let nowhere = try ExternalTools.runHlscap(["file", Self.fixture, "--publish", "http://127.0.0.1:9/x/",
                                                   "--encrypt", "aes-128"])
        #expect(nowhere.exitStatus == 64 && nowhere.stderr.contains("--key-dir"), "\(nowhere.stderr)")
        let stray = try ExternalTools.runHlscap(["file", Self.fixture, "--out", out, "--key-rotation", "3"])
        #expect(stray.exitStatus == 64, "\(stray.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
