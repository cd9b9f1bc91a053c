import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `hlscap live --video http(s)://…`: a live HLS stream of MPEG-TS segments that Debian's ffmpeg writes
/// in real time into a folder nginx serves over http and https, and a progressive MPEG-TS stream over
/// HTTP, copied, validated and played; URLs that cannot be read refused with one line and a sysexits
/// code; the end of the input said in one line. Serialized: each test runs servers, ffmpeg and hlscap
/// on two cores.
@Suite(.serialized) struct HTTPInputTests {
    /// Live HLS over http, and over https with nginx's self-signed certificate given as the authority:
    /// the source's video packets as they were, its sound with them (every flash keeps its beep), valid,
    /// and it plays in Chromium.
    @Test(arguments: [false, true])
    func aLiveHLSStreamIsCopied(secure: Bool) throws {
        let camera = try HTTPCamera.start()
        defer { camera.stop() }
        let stream = camera.directory.appendingPathComponent("stream")
        let run = try ExternalTools.runHlscap(["live", "--video", camera.playlistURL(secure: secure), "--duration", "8",
                                               "--out", stream.path, "--quiet"]
                                              + (secure ? ["--ca-file", camera.certificate] : []), timeoutSeconds: 60)
        #expect(run.succeeded && run.stderr.isEmpty && run.stdout.contains("video copied"), "\(run.stdout)\(run.stderr)")
        try Self.checkCopiedStream(stream, seconds: 8)
    }

    /// MPEG-TS over plain HTTP as an encoder serves it (ffmpeg's own HTTP server, chunked, for as long as
    /// the connection lasts; nginx serves a file only as long as it was when asked): copied as it came.
    @Test func aProgressiveMPEGTSStreamIsCopied() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try SilentListener.freePort()
        let server = try BackgroundProcess("ffmpeg", ["-nostdin", "-v", "error", "-re", "-stream_loop", "-1", "-i",
                                                      HTTPCamera.clip, "-c", "copy", "-f", "mpegts", "-listen", "1",
                                                      "http://127.0.0.1:\(port)/cam.ts"])
        defer { server.send(SIGKILL) }
        try HTTPCamera.waitUntilListening(port: port)
        let stream = directory.appendingPathComponent("stream")
        let run = try ExternalTools.runHlscap(["live", "--video", "http://127.0.0.1:\(port)/cam.ts", "--duration", "8",
                                               "--out", stream.path, "--quiet"], timeoutSeconds: 60)
        #expect(run.succeeded && run.stderr.isEmpty && run.stdout.contains("video copied"), "\(run.stdout)\(run.stderr)")
        try Self.checkCopiedStream(stream, seconds: 8)
    }

    /// A missing playlist, a port nobody listens on, a certificate no trusted authority signed, one signed
    /// for another name, and a password in the URL: one line naming the URL without its password, 69 (as
    /// an RTSP camera that refuses), nothing written.
    @Test func urlsThatCannotBeReadAreRefused() throws {
        let camera = try HTTPCamera.start()
        defer { camera.stop() }
        let refusedPort = try SilentListener.freePort()
        let http = camera.http, https = camera.https
        let otherName = https.replacingOccurrences(of: "127.0.0.1", with: "localhost")
        let cases: [(input: String, extra: [String], says: String)] = [
            (http + "cam/missing.m3u8", [], "cam/missing.m3u8: cannot be opened (Server returned 404 Not Found)"),
            ("http://127.0.0.1:\(refusedPort)/cam/index.m3u8", [], "127.0.0.1:\(refusedPort)/cam/index.m3u8: cannot be opened (Connection refused)"),
            (https + "cam/index.m3u8", [], "its server's certificate is not trusted (Peer certificate failed verification)"),
            (otherName + "cam/index.m3u8", ["--ca-file", camera.certificate], "does not match hostname localhost"),
            (https.replacingOccurrences(of: "https://", with: "https://viewer:secret@") + "cam/index.m3u8", [],
             "https://viewer@127.0.0.1"),
        ]
        for (index, item) in cases.enumerated() {
            let out = camera.directory.appendingPathComponent("out-\(index)")
            let run = try ExternalTools.runHlscap(["live", "--video", item.input, "--out", out.path, "--quiet"] + item.extra,
                                                  timeoutSeconds: 60)
            #expect(run.exitStatus == 69 && run.stderr.split(separator: "\n").count == 1 && run.stderr.contains(item.says),
                    "\(item.input): \(run.exitStatus) \(run.stderr)")
            #expect(!run.stderr.contains("secret"), "a password never reaches a message: \(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out.path), "\(item.input) left \(out.path)")
        }
        let untrusted = try ExternalTools.runHlscap(["live", "--video", https + "cam/index.m3u8", "--out",
                                                     camera.directory.appendingPathComponent("u").path])
        #expect(untrusted.stderr.contains("trust the authority that signed the certificate with --ca-file"), "\(untrusted.stderr)")
        let missing = try ExternalTools.runHlscap(["live", "--video", https + "cam/index.m3u8", "--ca-file",
                                                   camera.directory.appendingPathComponent("none.pem").path,
                                                   "--out", camera.directory.appendingPathComponent("m").path])
        #expect(missing.exitStatus == 66 && missing.stderr.contains("none.pem: cannot be read"), "\(missing.stderr)")
        let plain = try ExternalTools.runHlscap(["live", "--video", http + "cam/index.m3u8", "--ca-file", camera.certificate,
                                                 "--out", camera.directory.appendingPathComponent("p").path])
        #expect(plain.exitStatus == 64 && plain.stderr.contains("--ca-file is for an https:// input"), "\(plain.stderr)")
    }

    /// A live HLS input that ends (EXT-X-ENDLIST), and one whose server stops, end the stream as an RTSP
    /// camera that goes away does: what came is a valid stream with EXT-X-ENDLIST, one line, 74.
    @Test func theEndOfAnHTTPInputEndsTheStream() throws {
        let ending = try HTTPCamera.start(seconds: 10)
        defer { ending.stop() }
        let ended = ending.directory.appendingPathComponent("ended")
        let run = try ExternalTools.runHlscap(["live", "--video", ending.playlistURL(secure: false), "--window", "0",
                                               "--out", ended.path, "--quiet"], timeoutSeconds: 60)
        #expect(run.exitStatus == 74 && run.stderr.split(separator: "\n").count == 1
                && run.stderr.contains("cam/index.m3u8: the input ended"), "\(run.exitStatus) \(run.stderr)")
        try ExternalTools.validateStream(ended)
        let endedPlaylist = try LiveStream.playlist(in: ended)
        // The source's 10 s: its first segment is still listed when hlscap joins.
        #expect(endedPlaylist.endList && abs(endedPlaylist.segments.map(\.durationSeconds).reduce(0, +) - 10) < 0.6,
                "\(endedPlaylist.render())")

        let stopping = try HTTPCamera.start()
        defer { stopping.stop() }
        let stopped = stopping.directory.appendingPathComponent("stopped")
        let hlscap = try ExternalTools.startHlscap(["live", "--video", stopping.playlistURL(secure: false), "--window", "0",
                                                    "--out", stopped.path, "--quiet"])
        defer { hlscap.send(SIGKILL) }
        Thread.sleep(forTimeInterval: 6)
        stopping.origin.stop()
        let result = hlscap.finish(timeoutSeconds: 30)
        #expect(result.exitStatus == 74 && result.stderr.split(separator: "\n").count == 1
                && result.stderr.contains("cam/index.m3u8: the input ended"), "\(result.exitStatus) \(result.stderr)")
        try ExternalTools.validateStream(stopped)
        #expect(try LiveStream.playlist(in: stopped).endList)
    }

    /// Valid, about `seconds` of both tracks, the clip's own video packets in order, every flash with its
    /// beep, and Chromium plays it.
    private static func checkCopiedStream(_ stream: URL, seconds: Double) throws {
        try ExternalTools.validateStream(stream)
        let playlist = try LiveStream.playlist(in: stream)
        #expect(playlist.endList && playlist.segments.count >= 3, "\(playlist.render())")
        let entry = stream.appendingPathComponent("playlist.m3u8").path
        let videoSeconds = try ExternalTools.presentationSpanSeconds(path: entry, stream: "v:0")
        let audioSeconds = try ExternalTools.presentationSpanSeconds(path: entry, stream: "a:0")
        #expect(abs(videoSeconds - seconds) < 1.1 && abs(audioSeconds - videoSeconds) < 0.5,
                "\(videoSeconds) s of video and \(audioSeconds) s of audio for \(seconds) s")
        // The clip's packets, the clip looped: what was copied is a run of them, from a keyframe.
        let copied = try HTTPCamera.videoPacketDigests(path: entry)
        let clip = try HTTPCamera.videoPacketDigests(path: HTTPCamera.clip)
        let looped = Array(repeating: clip, count: Int(seconds) / 6 + 3).flatMap { $0 }
        let found = copied.count > 100 && (0...(looped.count - copied.count)).contains { Array(looped[$0..<($0 + copied.count)]) == copied }
        #expect(found, "\(copied.count) copied video packets are not a run of the clip's \(clip.count)")
        // ffmpeg's -stream_loop copy puts each repetition's sound 10.8 ms (half an AAC frame) late; that
        // is the source's own offset, kept, and no more.
        let sync = try ExternalTools.avSync(path: entry, maxOffsetMilliseconds: 11.5, minimumPairs: Int(seconds) - 3)
        #expect(sync.ok, "\(sync.report)")
        let playback = try ExternalTools.chromiumPlays(directory: stream)
        #expect(playback.ok, "\(playback.report)")
    }
}

/// A camera or packager publishing live HLS to a web server: Debian's ffmpeg copies the flash-and-beep
/// clip, looped at its pace (a keyframe each second), into 2 s MPEG-TS segments and a playlist of the
/// last six in ROOT/cam, which nginx serves over http and https (Tests/Tools/origin_server.py --static,
/// its certificate self-signed for 127.0.0.1 by openssl when the camera starts).
struct HTTPCamera {
    static let clip = ExternalTools.fixturesDirectory.appendingPathComponent("flash-beep.mp4").path
    let directory: URL
    let origin: BackgroundTool
    let writer: BackgroundProcess
    /// `http://127.0.0.1:PORT/`, `https://127.0.0.1:PORT/`.
    let http: String
    let https: String
    /// nginx's certificate, PEM: the authority to give `--ca-file`.
    let certificate: String

    /// `seconds`: the stream ends (EXT-X-ENDLIST) after that long; nil: it runs until stopped.
    static func start(seconds: Int? = nil) throws -> HTTPCamera {
        let directory = try PackagedStream.temporaryDirectory()
        let root = directory.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("cam"), withIntermediateDirectories: true)
        let (certificate, key) = try ExternalTools.selfSignedCertificate(in: directory)
        let origin = try BackgroundTool("origin_server.py", [root.path, "--static", "--tls-cert", certificate, "--tls-key", key,
                                                             "--logs", directory.appendingPathComponent("logs").path],
                                        in: directory)
        let http = try origin.announcedURL(prefix: "origin")
        let https = try origin.announcedURL(prefix: "origin-tls")
        let playlist = root.appendingPathComponent("cam/index.m3u8")
        let writer = try BackgroundProcess("ffmpeg", ["-nostdin", "-v", "error", "-re", "-stream_loop", "-1", "-i", clip,
                                                      "-c", "copy"] + (seconds.map { ["-t", String($0)] } ?? [])
                                           + ["-f", "hls", "-hls_time", "2", "-hls_list_size", "6", "-hls_flags", "temp_file",
                                              "-hls_segment_filename", root.appendingPathComponent("cam/%05d.ts").path,
                                              playlist.path])
        let camera = HTTPCamera(directory: directory, origin: origin, writer: writer, http: http, https: https,
                                certificate: certificate)
        // Two segments listed: a player that joins has a segment to start from and one after it.
        let deadline = Date(timeIntervalSinceNow: 20)
        while Date() < deadline {
            let text = (try? String(contentsOf: playlist, encoding: .utf8)) ?? ""
            if text.components(separatedBy: "#EXTINF").count > 2 { return camera }
            Thread.sleep(forTimeInterval: 0.1)
        }
        camera.stop()
        throw ExternalToolError.unexpectedOutput(command: "ffmpeg -f hls", output: writer.finish(timeoutSeconds: 1).stderr)
    }

    func playlistURL(secure: Bool) -> String { (secure ? https : http) + "cam/index.m3u8" }

    func stop() {
        writer.send(SIGKILL)
        _ = writer.finish(timeoutSeconds: 5)
        origin.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// An MD5 of each video packet of `path` as its H.264 NAL units, start codes before each and without
    /// access unit delimiters (which MPEG-TS carries and fMP4 leaves out): the same for an MP4, an
    /// MPEG-TS and an fMP4 stream that hold the same coded pictures.
    static func videoPacketDigests(path: String) throws -> [String] {
        let result = try ExternalTools.run("ffmpeg", ["-v", "error", "-i", path, "-map", "0:v:0", "-c", "copy", "-bsf:v",
                                                      "h264_mp4toannexb,filter_units=remove_types=9", "-f", "framemd5", "-"])
        guard result.succeeded else { throw ExternalToolError.failed(command: "ffmpeg -f framemd5 \(path)", result: result) }
        // stream, dts, pts, duration, size, hash, then any side data.
        return result.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }
            .compactMap { line in
                let fields = line.split(separator: ",")
                return fields.count > 5 ? fields[5].trimmingCharacters(in: .whitespaces) : nil
            }
    }

    /// Waits until something listens on `port` on loopback, without connecting: a server that takes one
    /// client (ffmpeg's `-listen 1`) keeps it for the reader.
    static func waitUntilListening(port: Int, timeoutSeconds: Double = 30) throws {
        let local = String(format: "0100007F:%04X", port)
        let deadline = Date(timeIntervalSinceNow: timeoutSeconds)
        while Date() < deadline {
            let table = (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? ""
            // Columns: sl, local_address, rem_address, st (0A: LISTEN).
            if table.split(separator: "\n").contains(where: { line in
                let columns = line.split(separator: " ")
                return columns.count > 3 && columns[1] == local && columns[3] == "0A"
            }) { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw ExternalToolError.unexpectedOutput(command: "ffmpeg -listen 1", output: "nothing listens on port \(port)")
    }
}
