import Foundation
import Testing
@testable import HLSMedia

@Suite struct CaptureV4L2DeviceTests {
    @Test func aNodeThatIsNotV4L2IsRefusedNamingIt() {
        #expect {
            _ = try V4L2Device(path: "/dev/null")
        } throws: { error in
            (error as? CaptureError)?.description.hasPrefix("/dev/null: not a V4L2 device") == true
        }
        #expect {
            _ = try V4L2Device(path: "/nonexistent/video0")
        } throws: { error in
            (error as? CaptureError)?.description == "/nonexistent/video0: cannot open: No such file or directory"
        }
    }

    @Test func listingSkipsNodesThatCannotCapture() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dev-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in ["video0", "video10", "videodev"] {
            #expect(FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: Data()))
        }
        #expect(V4L2Device.captureDevices(directory: directory.path).isEmpty)
    }

    @Test func cameraWithoutDevicesFailsAtStart() {
        var configuration = CameraSource.Configuration()
        configuration.device = "/dev/null"
        #expect(throws: CaptureError.self) { try CameraSource(configuration).start { _ in } }
    }
}
