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
                                                  "--no-realtime", "--duration", "10", "--quiet", "--out", stream.path,
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

    /// The packets of `init` + `segment` as ffmpeg's mov demuxer reads them (decrypting with `keyHex`),
    /// one MD5 per packet, video and audio. One segment at a time: ffmpeg 5.1 loses track of the
    /// encryption info of a file of several fragments, its own cenc output included.
    static func packetDigests(initSection: URL, segment: URL, keyHex: String?, in directory: URL) throws -> [String] {
        let joined = directory.appendingPathComponent("joined-\(UUID().uuidString).mp4")
        defer { try? FileManager.default.removeItem(at: joined) }
        try (Data(contentsOf: initSection) + Data(contentsOf: segment)).write(to: joined)
        let result = try ExternalTools.run("ffmpeg", ["-nostdin", "-v", "error"] + (keyHex.map { ["-decryption_key", $0] } ?? [])
                                           + ["-i", joined.path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"])
        guard result.succeeded else { return ["ffmpeg failed: \(result.stderr)"] }
        return result.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.map {
            String($0.split(separator: ",").last ?? "").trimmingCharacters(in: .whitespaces)
        }
    }

    /// `--encrypt cbcs`, checked by an independent reader: ffmpeg's mov demuxer, given the key,
    /// restores every video and audio packet of every segment to the clear stream's bytes; without the
    /// key, or with another, it does not. The stream passes the validator through the built-in server,
    /// which serves the key only with the token.
    @Test func sampleAESRestoresEveryPacketWithItsKeyInFFmpeg() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let encrypted = directory.appendingPathComponent("cbcs"), clear = directory.appendingPathComponent("clear")
        let made = try ExternalTools.runHlscap(["file", Self.fixture, "--copy", "--out", encrypted.path, "--quiet",
                                                "--encrypt", "cbcs"])
        #expect(made.succeeded, "\(made.stderr)")
        #expect(try ExternalTools.runHlscap(["file", Self.fixture, "--copy", "--out", clear.path, "--quiet"]).succeeded)
        let keys = directory.appendingPathComponent("cbcs.keys")
        let keyNames = try FileManager.default.contentsOfDirectory(atPath: keys.path)
        #expect(keyNames.count == 1)
        let keyHex = try Data(contentsOf: keys.appendingPathComponent(try #require(keyNames.first))).map { String(format: "%02x", $0) }.joined()
        let playlist = try MediaPlaylist.parse(String(contentsOf: encrypted.appendingPathComponent("playlist.m3u8"), encoding: .utf8))
        #expect(!playlist.segments.isEmpty)
        let wrongKey = String(keyHex.reversed())
        for segment in playlist.segments {
            #expect(segment.key?.method == .sampleAES && segment.key?.iv?.count == 34, "\(String(describing: segment.key))")
            let clearDigests = try Self.packetDigests(initSection: clear.appendingPathComponent("init.mp4"),
                                                      segment: clear.appendingPathComponent(segment.uri), keyHex: nil, in: directory)
            let restored = try Self.packetDigests(initSection: encrypted.appendingPathComponent("init.mp4"),
                                                  segment: encrypted.appendingPathComponent(segment.uri), keyHex: keyHex, in: directory)
            #expect(clearDigests.count > 40)
            #expect(restored == clearDigests, "\(segment.uri): ffmpeg restores every packet with the key")
            let sealed = try Self.packetDigests(initSection: encrypted.appendingPathComponent("init.mp4"),
                                                segment: encrypted.appendingPathComponent(segment.uri), keyHex: wrongKey, in: directory)
            #expect(Set(sealed).intersection(clearDigests).count < clearDigests.count / 4,
                    "\(segment.uri): another key restores little (headers and short frames are clear)")
            #expect(try Data(contentsOf: encrypted.appendingPathComponent(segment.uri))
                    != Data(contentsOf: clear.appendingPathComponent(segment.uri)))
        }

        let token = "viewer-\(UUID().uuidString)"
        let served = try ServedStream.start(["serve", encrypted.path, "--listen", "127.0.0.1:0", "--auth-token", token])
        defer { served.process.send(SIGTERM) }
        let keyPath = try #require(playlist.segments.first?.key?.uri)
        #expect(try served.get(keyPath).status == 401)
        let validated = try ExternalTools.validateStream(served.base.appendingPathComponent("master.m3u8").absoluteString + "?token=" + token)
        #expect(validated.stdout.contains("valid"), "\(validated.stdout)")
    }

    /// A live stream encrypted with cbcs: every segment decodes in ffmpeg with the key, without an error,
    /// and Chromium plays it through Clear Key.
    @Test func aLiveSampleAESStreamDecodesWithItsKey() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("live")
        let result = try ExternalTools.runHlscap(["live", "--video", "test", "--audio", "test", "--size", "320x180",
                                                  "--no-realtime", "--duration", "6", "--window", "0", "--quiet", "--out", stream.path,
                                                  "--encrypt", "cbcs"], timeoutSeconds: 120)
        #expect(result.succeeded, "\(result.stderr)")
        let keys = directory.appendingPathComponent("live.keys")
        let keyName = try #require(FileManager.default.contentsOfDirectory(atPath: keys.path).first)
        let keyHex = try Data(contentsOf: keys.appendingPathComponent(keyName)).map { String(format: "%02x", $0) }.joined()
        let playlist = try MediaPlaylist.parse(String(contentsOf: stream.appendingPathComponent("playlist.m3u8"), encoding: .utf8))
        #expect(playlist.segments.count == 3)
        var frames = 0
        for segment in playlist.segments {
            let joined = directory.appendingPathComponent("joined.mp4")
            try (Data(contentsOf: stream.appendingPathComponent("init.mp4"))
                 + Data(contentsOf: stream.appendingPathComponent(segment.uri))).write(to: joined)
            let decoded = try ExternalTools.run("ffmpeg", ["-nostdin", "-v", "error", "-decryption_key", keyHex, "-i", joined.path,
                                                           "-map", "0:v", "-f", "framecrc", "-"])
            #expect(decoded.succeeded && decoded.stderr.isEmpty, "\(segment.uri): \(decoded.stderr)")
            frames += decoded.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.count
        }
        #expect(frames == 180)
        try ExternalTools.validateStream(stream)

        // A browser's decryption module restores the samples too: Chromium through EME's Clear Key
        // decodes every frame with the key, and fails to decode with another.
        let keyFile = keys.appendingPathComponent(keyName)
        let played = try ExternalTools.runJSONTool("clearkey_play.py", ["--dir", stream.path, "--key-file", keyFile.path])
        #expect(played.ok, "\(played.text)")
        #expect(played.report["frames"] as? Int == 180, "\(played.text)")
        let wrongKey = directory.appendingPathComponent("wrong.key")
        try Data(Data(contentsOf: keyFile).reversed()).write(to: wrongKey)
        let refused = try ExternalTools.runJSONTool("clearkey_play.py", ["--dir", stream.path, "--key-file", wrongKey.path])
        #expect(!refused.ok && refused.report["error"] is String, "\(refused.text)")
        #expect((refused.report["frames"] as? Int ?? 0) < 180, "\(refused.text)")
    }

    @Test func combinationsThatCannotWorkAreRefused() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("s").path
        let rotating = try ExternalTools.runHlscap(["file", Self.fixture, "--out", out, "--encrypt", "cbcs",
                                                    "--key-rotation", "2"])
        #expect(rotating.exitStatus == 64 && rotating.stderr.contains("init section"), "\(rotating.stderr)")
        let resumed = try ExternalTools.runHlscap(["live", "--video", "test", "--audio", "test", "--out", out,
                                                   "--resume", "--encrypt", "cbcs"])
        #expect(resumed.exitStatus == 64 && resumed.stderr.contains("--resume"), "\(resumed.stderr)")
        let unknown = try ExternalTools.runHlscap(["file", Self.fixture, "--out", out, "--encrypt", "aes-256"])
        #expect(unknown.exitStatus == 64 && unknown.stderr.contains("aes-128 or cbcs"), "\(unknown.stderr)")
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
