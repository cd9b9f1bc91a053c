import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `hlscap run FILE` with test-source streams in real time: every stream ends as `live` ends one on
/// SIGINT, and after `kill -9` of the process a restart continues every stream.
@Suite(.serialized) struct RunStreamsTests {
    static let names = ["a", "b", "c"]

    /// Three small streams of one-second segments under `out`; `extra` goes into `defaults:`.
    static func file(out: URL, extra: String = "") -> String {
        """
        out: \(out.path)
        defaults:
          video: test
          audio: test
          size: 320x180
          fps: 15
          segment-duration: 1
          window: 0
        \(extra.isEmpty ? "" : "  " + extra)
        streams:
          a:
          b:
          c: {audio: none}
        """
    }

    static func start(_ yaml: String, in directory: URL) throws -> BackgroundProcess {
        let file = directory.appendingPathComponent("hlscap.yml")
        try yaml.write(to: file, atomically: true, encoding: .utf8)
        return try ExternalTools.startHlscap(["run", file.path])
    }

    static func waitForSegments(_ count: Int, in out: URL, of hlscap: BackgroundProcess) -> Bool {
        names.allSatisfy { LiveStream.waitForSegments(count, in: out.appendingPathComponent($0), of: hlscap) }
    }

    @Test func interruptEndsEveryStreamWithItsLastSegment() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("live")
        let hlscap = try Self.start(Self.file(out: out), in: directory)
        try #require(Self.waitForSegments(2, in: out, of: hlscap), "\(hlscap.stderr)")
        hlscap.send(SIGINT)
        let result = hlscap.finish(timeoutSeconds: LiveStream.stopSeconds)
        #expect(result.exitStatus == 0, "\(result.stderr)")
        for name in Self.names {
            let stream = out.appendingPathComponent(name)
            #expect(try LiveStream.playlist(in: stream).endList, "\(name)")
            try ExternalTools.validateStream(stream)
            // Each stream's summary starts with its name.
            #expect(result.stdout.contains("\(name): \(stream.path)/playlist.m3u8: "), "\(result.stdout)")
        }
    }

    /// An interrupt while the streams start (before some of them run) still ends every stream.
    @Test func anInterruptAsTheStreamsStartEndsThemAll() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("live")
        let hlscap = try Self.start(Self.file(out: out), in: directory)
        // The first stream's folder is made as it starts, once the signals are handled.
        let deadline = Date(timeIntervalSinceNow: LiveStream.startupSeconds)
        while !FileManager.default.fileExists(atPath: out.appendingPathComponent("a").path), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
        hlscap.send(SIGINT)
        let result = hlscap.finish(timeoutSeconds: 20)
        #expect(!result.timedOut, "\(result.stderr)")
        #expect(result.exitStatus == 0, "\(result.stderr)")
    }

    @Test func aStreamThatFailsEndsAloneAndTheOthersGoOn() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("live")
        let hlscap = try Self.start("""
            out: \(out.path)
            defaults: {video: test, audio: test, size: 320x180, fps: 15, segment-duration: 1}
            streams:
              good:
              broken: {video: /dev/video-hlscap-none}
            """, in: directory)
        let good = out.appendingPathComponent("good")
        try #require(LiveStream.waitForSegments(2, in: good, of: hlscap), "\(hlscap.stderr)")
        #expect(hlscap.stderr.split(separator: "\n").contains { $0.hasPrefix("hlscap: broken: /dev/video-hlscap-none: ") },
                "\(hlscap.stderr)")
        hlscap.send(SIGINT)
        let result = hlscap.finish(timeoutSeconds: LiveStream.stopSeconds)
        // The worst status of the streams: the missing camera's.
        #expect(result.exitStatus == 66, "\(result.stderr)")
        #expect(try LiveStream.playlist(in: good).endList)
        try ExternalTools.validateStream(good)
    }

    @Test func afterKillNineARestartContinuesEveryStream() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("live")
        let crashed = try Self.start(Self.file(out: out), in: directory)
        try #require(Self.waitForSegments(2, in: out, of: crashed), "\(crashed.stderr)")
        crashed.send(SIGKILL)
        _ = crashed.finish(timeoutSeconds: LiveStream.stopSeconds)
        var before: [String: MediaPlaylist] = [:]
        for name in Self.names {
            before[name] = try LiveStream.playlist(in: out.appendingPathComponent(name))
            #expect(before[name]?.endList == false)
        }

        // The same streams, ending by themselves two seconds after the restart.
        let restarted = try Self.start(Self.file(out: out, extra: "duration: 2"), in: directory)
        let result = restarted.finish(timeoutSeconds: LiveStream.stopSeconds)
        #expect(result.exitStatus == 0, "\(result.stderr)")
        for name in Self.names {
            let stream = out.appendingPathComponent(name)
            #expect(result.stderr.contains("hlscap: \(name): continuing the stream in \(stream.path)"), "\(result.stderr)")
            let playlist = try LiveStream.playlist(in: stream)
            let earlier = try #require(before[name])
            #expect(playlist.endList)
            #expect(playlist.segments.count > earlier.segments.count, "\(name)")
            #expect(Array(playlist.segments.prefix(earlier.segments.count).map(\.uri)) == earlier.segments.map(\.uri))
            #expect(playlist.segments[earlier.segments.count].discontinuity, "\(name)")
            try ExternalTools.validateStream(stream)
        }
    }
}
