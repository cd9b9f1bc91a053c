import HLSKit
import HLSMedia

/// `--video` and `--audio`: what the user names, and the capture sources that read it. The one place
/// that knows the kinds of input; the engine takes whatever sources it is given.
struct CaptureInputs {
    enum Video: Equatable {
        case firstCamera, device(String), test, none

        init(_ text: String) {
            switch text {
            case "test": self = .test
            case "none": self = .none
            default: self = .device(text)
            }
        }
    }

    enum Audio: Equatable {
        /// `test`, or `test:+5000ppm`: the tone as a microphone whose sample clock runs that fast.
        case device(String), test(clockPartsPerMillion: Int), none

        init(_ text: String) {
            switch text {
            case "test": self = .test(clockPartsPerMillion: 0)
            case "none": self = .none
            default:
                if text.hasPrefix("test:"), text.hasSuffix("ppm"),
                   let partsPerMillion = Int(text.dropFirst("test:".count).dropLast("ppm".count)) {
                    self = .test(clockPartsPerMillion: partsPerMillion)
                } else {
                    self = .device(text)
                }
            }
        }

        var isTest: Bool {
            if case .test = self { return true }
            return false
        }
    }

    var video = Video.firstCamera
    var audio = Audio.device("default")
    var size = OutputSize(width: 1280, height: 720)
    var framesPerSecond = 30
    /// With the test source: as fast as it encodes instead of in real time.
    var realtime = true
    /// Wait for a camera or microphone that fails or goes away, a stand-in keeping its track flowing.
    var reconnect = false
    /// With the test source out of real time: its stream time, after which it ends.
    var durationMilliseconds: Int64?

    /// The sources to capture: the test source for whatever is `test` (one source, so its picture and
    /// sound share a clock), then the camera, then the microphone.
    func makeSources() throws(CaptureError) -> [any CaptureSource] {
        var sources: [any CaptureSource] = []
        if video == .test || audio.isTest {
            var test = TestSource.Configuration()
            test.width = size.width
            test.height = size.height
            test.framesPerSecond = framesPerSecond
            test.video = video == .test
            test.audio = audio.isTest
            if case .test(let partsPerMillion) = audio { test.audioClockPartsPerMillion = partsPerMillion }
            test.realtime = realtime
            if !realtime, let durationMilliseconds { test.durationMicroseconds = durationMilliseconds * 1000 }
            do {
                sources.append(try TestSource(test))
            } catch let error as CaptureError {
                throw error
            } catch {
                throw CaptureError(device: TestSource.deviceName, message: "\(error)")
            }
        }
        switch video {
        case .firstCamera, .device:
            var camera = CameraSource.Configuration()
            if case .device(let path) = video { camera.device = path }
            camera.width = size.width
            camera.height = size.height
            camera.frameRate = Rational(Int32(framesPerSecond), 1)
            camera.reconnect = reconnect
            sources.append(CameraSource(camera))
        case .test, .none:
            break
        }
        if case .device(let name) = audio {
            var microphone = MicrophoneSource.Configuration()
            microphone.device = name
            microphone.reconnect = reconnect
            sources.append(MicrophoneSource(microphone))
        }
        return sources
    }
}
