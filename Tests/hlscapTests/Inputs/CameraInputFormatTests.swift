import Foundation
import HLSTestSupport
import Testing

/// `hlscap live --input-format`: refused where it means nothing, and a camera that lacks the format asked for
/// ends the run with one line naming the device, exit 66, and no stream. (Capturing with it is tested
/// against vivid and a v4l2loopback H.264 camera in `make test-devices`.)
@Suite struct CameraInputFormatTests {
    func live(_ arguments: [String]) throws -> (result: ProcessResult, playlist: URL) {
        let output = try PackagedStream.temporaryDirectory()
        let result = try ExternalTools.runHlscap(["live", "--out", output.path, "--audio", "none", "--duration", "2"]
                                                 + arguments, timeoutSeconds: 60)
        return (result, output.appendingPathComponent("playlist.m3u8"))
    }

    @Test(arguments: [
        (["--video", "test", "--input-format", "h264"], "--video is not a camera"),
        (["--video", "/dev/video0", "--input-format", "png"], "--input-format takes h264, mjpeg or raw"),
    ])
    func usageErrors(_ arguments: [String], _ message: String) throws {
        let (result, playlist) = try live(arguments)
        #expect(result.exitStatus == 64, "stderr: \(result.stderr)")
        #expect(result.stderr.contains(message), "stderr: \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: playlist.path))
    }

    @Test(arguments: ["h264", "mjpeg", "raw"])
    func aNodeThatIsNoCameraIsRefusedNamingIt(_ format: String) throws {
        let (result, playlist) = try live(["--video", "/dev/null", "--input-format", format])
        #expect(result.exitStatus == 66, "stderr: \(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "stderr: \(result.stderr)")
        #expect(lines.first?.hasPrefix("hlscap: /dev/null: not a V4L2 device") == true, "stderr: \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: playlist.path))
    }
}
