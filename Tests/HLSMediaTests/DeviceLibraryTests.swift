import HLSMedia
import Testing

@Suite struct DeviceLibraryTests {
    @Test func registeringDevicesMakesTheCaptureFormatsKnown() throws {
        try DeviceLibrary.registerDevices()
        #expect(DeviceLibrary.hasInputFormat("video4linux2"))
        #expect(DeviceLibrary.hasInputFormat("alsa"))
        #expect(!DeviceLibrary.hasInputFormat("no-such-device-format"))
    }
}
