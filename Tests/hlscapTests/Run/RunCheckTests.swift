import Foundation
import HLSTestSupport
import Testing

/// `hlscap run --check FILE`: the file's problems, each on a line FILE:LINE:COLUMN, exit 78; `live`'s own
/// refusals placed at the key they name. The file's own problems are HLSConfigTests', in process.
@Suite struct RunCheckTests {
    func check(_ yaml: String) throws -> (result: ProcessResult, file: String) {
        let directory = try PackagedStream.temporaryDirectory()
        let file = directory.appendingPathComponent("hlscap.yml")
        try yaml.write(to: file, atomically: true, encoding: .utf8)
        return (try ExternalTools.runHlscap(["run", "--check", file.path], timeoutSeconds: 30), file.path)
    }

    @Test func aFileThatChecksSaysEachStreamOnItsLine() throws {
        let (result, _) = try check("""
            out: /tmp/live
            defaults: {audio: test}
            streams:
              a: {video: test, size: 320x180}
              b: {video: test, ladder: [360p, 180p], record: /tmp/rec/b.mp4}
              c: {video: /dev/video9, out: /tmp/elsewhere/c}
            """)
        #expect(result.exitStatus == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n") == [
            "a: test, audio test -> /tmp/live/a (encoded 320x180 h264)",
            "b: test, audio test -> /tmp/live/b (ladder 360p,180p, recorded to /tmp/rec/b.mp4)",
            "c: /dev/video9, audio test -> /tmp/elsewhere/c (copied when the camera sends H.264)",
        ])
    }

    @Test func liveRefusalsArePlacedAtTheKeyTheyName() throws {
        let (result, file) = try check("""
            out: /tmp/live
            streams:
              a:
                video: test
                record-size: 640x360
              b:
                video: test
                size: 641x360
              c:
                video: test
                resume: true
                overwrite: true
              d:
                video: test
                low-latency: true
              e:
                ladders: 720p
            """)
        #expect(result.exitStatus == 78)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.split(separator: "\n").map(String.init) == [
            "\(file):5:5: stream a: record-size needs record PATH",
            "\(file):8:5: stream b: size takes an even WxH of at most 8192 pixels a side, such as 1280x720 (got \"641x360\")",
            "\(file):11:5: stream c: resume and overwrite exclude each other",
            "\(file):15:5: stream d: low-latency needs server: listen ADDR:PORT: blocking reloads and parts are answered by "
                + "the process that captures",
            "\(file):17:5: stream e: unknown key 'ladders'; did you mean 'ladder'?",
        ], "\(result.stderr)")
    }

    @Test func theServerAndTheRecordingsAreCheckedByLivesRules() throws {
        let (result, file) = try check("""
            out: /tmp/live
            streams:
              a: {video: test}
            server:
              listen: ":8080"
              tls-cert: /nonexistent/cert.pem
            recordings:
              min-free: lots
              keep-size: 5 gigs
            """)
        #expect(result.exitStatus == 78)
        #expect(result.stderr.split(separator: "\n").map(String.init) == [
            "\(file):6:3: server: tls-cert and tls-key go together",
            "\(file):8:3: recordings: min-free takes a size such as 500M, 50G or 2T (got \"lots\")",
            "\(file):9:3: recordings: keep-size takes a size such as 500M, 50G or 2T (got \"5 gigs\")",
        ], "\(result.stderr)")
    }

    /// `server: tls-ocsp` is read and checked as `--tls-ocsp` is.
    @Test func theServersOCSPResponseIsCheckedWithItsCertificate() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (certificate, key) = try ExternalTools.selfSignedCertificate(in: directory)
        let (result, file) = try check("""
            out: /tmp/live
            streams:
              a: {video: test}
            server:
              listen: ":8443"
              tls-cert: \(certificate)
              tls-key: \(key)
              tls-ocsp: \(key)
            """)
        #expect(result.exitStatus == 78)
        #expect(result.stderr.split(separator: "\n").map(String.init) == [
            "\(file):8:3: server: tls-ocsp \(key) is not an OCSP response in DER; fetch a current one for the certificate "
                + "served (openssl ocsp -issuer … -cert … -url … -respout …)",
        ], "\(result.stderr)")
    }

    /// The one server serves each stream below /NAME/, beside its own /api/ and /metrics.
    @Test func aStreamNameTheServerUsesIsRefused() throws {
        let (result, file) = try check("""
            out: /tmp/live
            streams:
              door: {video: test}
              api: {video: test}
            server:
              listen: ":8080"
            """)
        #expect(result.exitStatus == 78)
        #expect(result.stderr.split(separator: "\n").map(String.init) == [
            "\(file):4:3: stream api: the stream name api is one of the server's own paths (api, index, metrics); choose another",
        ], "\(result.stderr)")
    }

    @Test func aMissingFileIsNoInput() throws {
        let result = try ExternalTools.runHlscap(["run", "--check", "/nonexistent/hlscap.yml"], timeoutSeconds: 30)
        #expect(result.exitStatus == 66)
        #expect(result.stderr == "hlscap: /nonexistent/hlscap.yml cannot be read; give the YAML file that lists the streams\n")
    }

    @Test func theExampleFileChecks() throws {
        let example = ExternalTools.repositoryRoot.appendingPathComponent("contrib/hlscap.yml")
        let result = try ExternalTools.runHlscap(["run", "--check", example.path], timeoutSeconds: 30)
        #expect(result.exitStatus == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").map { $0.prefix { $0 != ":" } } == ["door", "yard", "desk"])
    }
}
