import CFFmpeg
import Glibc
import HLSBase
import HLSKit

/// An ALSA capture PCM read through libavdevice (`--audio default`, `hw:1,0`, any PCM name).
///
/// Samples arrive as interleaved signed 16-bit (the ALSA demuxer's format) in blocks of
/// `blockSamples`, however the device packets them; the last block before `.ended` may be
/// shorter. Each block's `pts` comes from a `SampleClock` anchored to the device's packet times.
public final class MicrophoneSource: CaptureSource {
    public struct Configuration: Sendable {
        /// An ALSA PCM name.
        public var device = "default"
        /// What to ask the device for; it may give a different rate (see `sampleRate`).
        public var sampleRate = 48_000
        public var channelCount = 2
        /// When the device fails or disappears, wait for it to come back (`.lost`, then `.restored`)
        /// instead of failing.
        public var reconnect = false

        public init() {}
    }

    public static let blockSamples = 1024
    private static let bytesPerSample = MemoryLayout<Int16>.size

    public let configuration: Configuration
    /// The rate the device delivers, known once `start` has returned.
    public private(set) var sampleRate = 0
    public private(set) var channelCount = 0
    private var thread: CaptureThread?

    public init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    public var name: String { configuration.device }

    public var delivers: CaptureKinds { .audio }

    /// Silence at the rate and channel count the device delivered.
    public var standIns: [StandInSource.Content] { [.audio(sampleRate: sampleRate, channelCount: channelCount)] }

    public func start(handler: @escaping (CaptureEvent) -> Void) throws {
        precondition(thread == nil, "a capture source starts once")
        let thread = CaptureThread(handler: handler)
        let input = try Self.open(configuration, on: thread)
        sampleRate = input.sampleRate
        channelCount = input.channelCount
        self.thread = thread
        var reader = Reader(input: input, configuration: configuration)
        thread.start(name: "hlscap alsa \(configuration.device)") { reader.run(on: thread) }
    }

    public func stop() { thread?.stop() }

    private static func open(_ configuration: Configuration, on thread: CaptureThread) throws(CaptureError) -> CaptureInput {
        let device = configuration.device
        let input = try CaptureInput(
            device: device, formatName: "alsa", url: device,
            options: ["sample_rate": String(configuration.sampleRate), "channels": String(configuration.channelCount)],
            thread: thread)
        let parameters = input.stream.pointee.codecpar.pointee
        guard parameters.codec_id == AV_CODEC_ID_PCM_S16LE else {
            throw CaptureError(device: device, message: "delivers \(String(cString: avcodec_get_name(parameters.codec_id))), not 16-bit PCM")
        }
        return input
    }

    /// The reading loop's state: the device, the sample clock and the block being filled.
    private struct Reader {
        /// Nil while a lost device is waited for: closed, so that it can go and come back.
        var input: CaptureInput?
        let configuration: Configuration
        var sampleRate: Int
        var channelCount: Int
        var clock: SampleClock
        var block: Frame?
        var blockFilled = 0

        init(input: CaptureInput, configuration: Configuration) {
            self.input = input
            self.configuration = configuration
            sampleRate = input.sampleRate
            channelCount = input.channelCount
            clock = SampleClock(sampleRate: sampleRate)
        }

        var bytesPerFrame: Int { channelCount * MicrophoneSource.bytesPerSample }

        private enum Outcome {
            case stopped
            case failed(CaptureError)
        }

        /// Reads until a stop, the end, or a failure; with `reconnect`, a failure is `.lost`, the device
        /// is closed and opened again until it is back (`.restored`), and its samples go on with a new
        /// sample clock.
        mutating func run(on thread: CaptureThread) {
            while case .failed(let error) = readUntilFailure(on: thread) {
                // The samples read before the failure go on; the next block starts on the new clock.
                guard handOnPartialBlock(on: thread) else { return }
                input = nil
                let configuration = configuration
                guard let reopened = thread.recover(from: error, reconnect: configuration.reconnect, open: {
                    () throws(CaptureError) in try MicrophoneSource.open(configuration, on: thread)
                }) else { return }
                input = reopened
                sampleRate = reopened.sampleRate
                channelCount = reopened.channelCount
                clock = SampleClock(sampleRate: sampleRate)
            }
        }

        private mutating func readUntilFailure(on thread: CaptureThread) -> Outcome {
            guard let input else { return .stopped }
            do throws(CaptureError) {
                while true {
                    switch try input.read(stoppingOn: thread) {
                    case .stopped:
                        return .stopped
                    case .ended:
                        try finish(on: thread)
                        return .stopped
                    case .packet:
                        guard try consumePacket(from: input, on: thread) else { return .stopped }
                    }
                }
            } catch {
                return .failed(error)
            }
        }

        /// Counts the packet's samples and copies them into blocks, handing on each full one;
        /// false when the handler stopped the source.
        mutating func consumePacket(from input: CaptureInput, on thread: CaptureThread) throws(CaptureError) -> Bool {
            let packet = input.packet.pointer.pointee
            let samples = Int(packet.size) / bytesPerFrame
            // The ALSA demuxer stamps the packet's first sample on the wall clock, in microseconds
            // (its stream time base is 1/1000000).
            let clockMicroseconds = input.packet.pts.map(MonotonicClock.fromWallClock)
                ?? MonotonicClock.nowMicroseconds() - Int64(samples) * 1_000_000 / Int64(sampleRate)
            let firstSample = clock.sampleCount
            if clock.receive(samples: samples, clockMicroseconds: clockMicroseconds) {
                guard thread.emit(.audioClock(partsPerMillion: clock.partsPerMillion, resyncs: clock.resyncCount))
                else { return false }
            }
            var copied = 0
            while copied < samples {
                let current: Frame
                if let block {
                    current = block
                } else {
                    current = try newBlock(startingAt: firstSample + Int64(copied))
                    block = current
                    blockFilled = 0
                }
                let count = min(samples - copied, MicrophoneSource.blockSamples - blockFilled)
                memcpy(current.plane(0).base + blockFilled * bytesPerFrame,
                       packet.data + copied * bytesPerFrame, count * bytesPerFrame)
                blockFilled += count
                copied += count
                if blockFilled == MicrophoneSource.blockSamples {
                    block = nil
                    guard thread.emit(.audio(current)) else { return false }
                }
            }
            return true
        }

        /// Hands on the partly filled block, then `.ended`.
        mutating func finish(on thread: CaptureThread) throws(CaptureError) {
            guard handOnPartialBlock(on: thread) else { return }
            thread.emit(.ended)
        }

        /// Hands on the block being filled, shortened to the samples it holds; false when the handler
        /// stopped the source.
        mutating func handOnPartialBlock(on thread: CaptureThread) -> Bool {
            defer {
                block = nil
                blockFilled = 0
            }
            guard let current = block, blockFilled > 0 else { return true }
            current.pointer.pointee.nb_samples = Int32(blockFilled)
            return thread.emit(.audio(current))
        }

        func newBlock(startingAt sample: Int64) throws(CaptureError) -> Frame {
            do {
                let frame = try Frame.captured(samples: MicrophoneSource.blockSamples, sampleRate: sampleRate,
                                                    channels: channelCount, format: AV_SAMPLE_FMT_S16)
                frame.pts = clock.time(ofSample: sample)
                return frame
            } catch {
                throw CaptureError(device: configuration.device, message: "cannot allocate an audio block: \(error)")
            }
        }
    }
}
