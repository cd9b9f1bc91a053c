import Foundation
import HLSTestSupport
import Testing

@Suite struct DevicesCommandTests {
    @Test func saysClearlyWhenThereAreNoDevices() throws {
        // What this machine (and CI) has: neither /dev/video* nor a sound card.
        let haveCameras = (try? FileManager.default.contentsOfDirectory(atPath: "/dev"))?.contains { $0.hasPrefix("video") } ?? false
        let havePCMs = FileManager.default.fileExists(atPath: "/proc/asound/pcm")
        try #require(!haveCameras && !havePCMs, "this test expects a machine without capture devices")

        let result = try ExternalTools.runHlscap(["devices"], timeoutSeconds: 30)
        #expect(result.exitStatus == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("no V4L2 capture devices found"))
        #expect(result.stdout.contains("no ALSA capture devices found"))
        #expect(result.stderr.isEmpty)
    }

    @Test func helpDescribesTheCommand() throws {
        let result = try ExternalTools.runHlscap(["devices", "--help"], timeoutSeconds: 30)
        #expect(result.exitStatus == 0)
        #expect(result.stdout.hasPrefix("Usage: hlscap devices"))
        #expect(result.stdout.contains("/dev/video"))
    }

    @Test func refusesArguments() throws {
        let result = try ExternalTools.runHlscap(["devices", "--all"], timeoutSeconds: 30)
        #expect(result.exitStatus == 64)
        #expect(result.stderr.contains("--all"))
    }
}
