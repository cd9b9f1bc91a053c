import Foundation
import HLSTestSupport
import Testing

/// `hlscap validate --ca-file` on a stream that `hlscap live --serve` serves over https with a
/// self-signed certificate: trusted with the file, refused without it.
@Suite struct ValidateHTTPSTests {
    @Test func aPrivateCertificateIsTrustedWithCAFileAndRefusedWithoutIt() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (certificate, key) = try ExternalTools.selfSignedCertificate(in: directory)
        let served = try ServedStream.start(["live"] + LiveStream.testSource + [
            "--serve", "127.0.0.1:0", "--low-latency", "--tls-cert", certificate, "--tls-key", key, "--duration", "6",
            "--out", directory.appendingPathComponent("stream").path, "--quiet"])
        defer { served.process.send(SIGKILL) }
        try #require(served.base.scheme == "https")
        Thread.sleep(forTimeInterval: 3)
        let playlist = served.base.appendingPathComponent("playlist.m3u8").absoluteString

        let trusted = try ExternalTools.runHlscap(["validate", playlist, "--ca-file", certificate, "--sample", "1",
                                                   "--live", "1"])
        #expect(trusted.exitStatus == 0, "\(trusted.stdout)\(trusted.stderr)")
        #expect(trusted.stdout.contains("valid ("), "\(trusted.stdout)")
        // hlscap's own LL playlists keep Apple's LL rules, and --live's blocking request for the next part is met.
        #expect(!trusted.stdout.contains("apple-ll-") && !trusted.stdout.contains("live-blocking-reload"), "\(trusted.stdout)")

        let untrusted = try ExternalTools.runHlscap(["validate", playlist, "--sample", "1"])
        #expect(untrusted.exitStatus == 69, "\(untrusted.stdout)\(untrusted.stderr)")
        #expect(untrusted.stderr.split(separator: "\n").count == 1)
        #expect(untrusted.stderr.contains("give --ca-file"), "\(untrusted.stderr)")

        let missing = try ExternalTools.runHlscap(["validate", playlist, "--ca-file", directory.appendingPathComponent("none.pem").path])
        #expect(missing.exitStatus == 66)
        #expect(missing.stderr.contains("--ca-file") && missing.stderr.contains("none.pem"), "\(missing.stderr)")
        _ = served.process.finish(timeoutSeconds: LiveStream.stopSeconds)
    }
}
