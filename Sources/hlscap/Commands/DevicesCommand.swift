import Foundation
import HLSKit
import HLSMedia

/// `hlscap devices`: the cameras and microphones `hlscap live` can capture from.
struct DevicesCommand: Command {
    static let name = "devices"
    static let summary = "list V4L2 cameras and ALSA capture devices"
    static let help = """
        Usage: hlscap devices

        Lists the V4L2 video capture devices (/dev/video*) with their driver, name, pixel formats
        (each marked raw, MJPEG or H.264 with the --input-format of hlscap live that asks for it),
        frame sizes and frame rates, and the ALSA capture PCMs of the sound cards
        (/proc/asound/pcm) with the names to give --audio. Any PCM defined in an ALSA
        configuration (~/.asoundrc, ALSA_CONFIG_PATH) can be given to --audio by name as well.

        Options:
          --help    show this help

        Exit status: 0, also when there are no devices.
        """

    init(arguments: inout ArgumentList) throws {
        let extra = try arguments.positionals()
        guard extra.isEmpty else { throw CommandError.usage("devices takes no arguments (got \(extra[0]))") }
    }

    func run() throws {
        print(Self.describe(cameras: V4L2Device.captureDevices(), microphones: AlsaCapturePCM.all()), terminator: "")
    }

    static func describe(cameras: [V4L2Device], microphones: [AlsaCapturePCM]) -> String {
        var lines: [String] = []
        if cameras.isEmpty {
            lines.append("no V4L2 capture devices found (no /dev/video* node can capture video)")
        } else {
            lines.append("V4L2 capture devices (--video):")
            for camera in cameras {
                lines.append("  \(camera.path)  \(camera.card) (driver \(camera.driver), \(camera.busInfo))")
                for format in camera.formats {
                    lines.append("    \(format.code) (\(format.name)): \(Self.use(of: format))")
                    for offer in camera.offers where offer.pixelFormat == format {
                        let rates = offer.frameRates.map(Self.rate).joined(separator: ", ")
                        lines.append("      \(offer.width)x\(offer.height)  \(rates) fps")
                    }
                }
            }
        }
        if microphones.isEmpty {
            lines.append("no ALSA capture devices found (no sound card lists a capture PCM in \(AlsaCapturePCM.procPath))")
        } else {
            lines.append("ALSA capture devices (--audio):")
            lines.append("  default  the system's default capture PCM")
            for microphone in microphones {
                lines.append("  \(microphone.pcmName)  \(microphone.name)")
            }
        }
        return lines.map { $0 + "\n" }.joined()
    }

    /// What `hlscap live` does with a pixel format, and the `--input-format` that asks for it.
    private static func use(of format: CameraPixelFormat) -> String {
        switch format.inputFormat {
        case .h264: "H.264, copied into the stream (--input-format h264)"
        case .mjpeg: "MJPEG, decoded (--input-format mjpeg)"
        case .raw: "raw (--input-format raw)"
        case nil: "not supported"
        }
    }

    /// "30", or "29.97" for 30000/1001.
    private static func rate(_ rate: Rational) -> String {
        let hundredths = (Int(rate.numerator) * 100 + Int(rate.denominator) / 2) / Int(rate.denominator)
        return hundredths % 100 == 0 ? "\(hundredths / 100)" : String(format: "%d.%02d", hundredths / 100, hundredths % 100)
    }
}
