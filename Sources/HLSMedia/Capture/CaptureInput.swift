import CFFmpeg
import Glibc

/// A capture device opened through libavdevice in non-blocking mode, read from one thread.
///
/// Non-blocking reads return at once when no packet is ready, so the reading loop notices a
/// stop request within `idleSleepMicroseconds`; the interrupt callback covers the calls that
/// still block (opening, a plugin's own waits).
final class CaptureInput {
    let device: String
    let context: InputFormatContext
    var packet: Packet

    /// How long the loop waits before asking again when no packet is ready: short against a
    /// frame interval or an audio period, long enough to leave the CPU idle.
    static let idleSleepMicroseconds: useconds_t = 2_000

    init(device: String, formatName: String, url: String, options: [String: String],
         thread: CaptureThread) throws(CaptureError) {
        FFmpegLog.installIfNeeded()
        self.device = device
        do {
            try DeviceLibrary.registerDevices()
            context = try InputFormatContext(url: url, formatName: formatName, options: options,
                                             interrupt: thread.interruptCallback, nonBlocking: true)
            packet = try Packet()
        } catch {
            throw CaptureError(device: device, message: "cannot open: \(error)")
        }
    }

    var stream: UnsafeMutablePointer<AVStream> { context.stream(at: 0) }

    /// An audio device's rate and channels, as it opened.
    var sampleRate: Int { Int(stream.pointee.codecpar.pointee.sample_rate) }
    var channelCount: Int { Int(stream.pointee.codecpar.pointee.ch_layout.nb_channels) }

    enum ReadResult {
        case packet
        /// A stop was requested while waiting.
        case stopped
        case ended
    }

    /// Waits for the next packet into `packet`, checking for a stop request between tries.
    func read(stoppingOn thread: CaptureThread) throws(CaptureError) -> ReadResult {
        while !thread.isStopRequested {
            let result: InputFormatContext.ReadResult
            do {
                result = try context.readFrame(into: &packet)
            } catch {
                if thread.isStopRequested { return .stopped }
                throw CaptureError(device: device, message: "reading failed: \(error)")
            }
            switch result {
            case .packet: return .packet
            case .endOfFile: return .ended
            case .tryAgain: usleep(Self.idleSleepMicroseconds)
            }
        }
        return .stopped
    }
}
