import CFFmpeg
import Glibc
import Foundation
import HLSBase
import HLSKit

/// A V4L2 camera's own H.264 (`V4L2_PIX_FMT_H264`), handed on without decoding: each access unit the
/// driver dequeues becomes one copied sample on the monotonic clock, stamped as `CameraTimestamps` says,
/// and the camera's keyframes cut the segments.
///
/// The device is opened, and read up to its second keyframe, when the source is made: the track (from the
/// camera's first parameter sets) and its keyframe interval are known before the stream is configured,
/// and a camera that sends no H.264 is said before anything is written. Reading goes on from there, the
/// samples held until `start` gives them a handler: a driver whose buffers are not dequeued drops frames,
/// and a copy cannot do without one.
public final class CameraCopySource: CaptureSource {
    /// How long opening waits for the first keyframe with its parameter sets.
    static let firstKeyframeMicroseconds: Int64 = 10_000_000

    public let configuration: CameraSource.Configuration
    public let device: V4L2Device
    public let choice: CameraFormatChoice
    public let copiedTracks: [TrackDescription]
    /// From the first keyframe to the next, which copied segments cannot be shorter than; nil when no
    /// second one came within `KeyframeIntervalSearch.limitMicroseconds`.
    public let keyframeIntervalSeconds: Double?
    private let relay = Relay()
    private let thread: CaptureThread
    private var started = false

    public init(_ configuration: CameraSource.Configuration) throws(CaptureError) {
        self.configuration = configuration
        thread = CaptureThread { [relay] event in relay.deliver(event) }
        let device = try CameraSource.openDevice(configuration)
        guard let choice = CameraFormatChoice.choose(offers: device.offers, width: configuration.width,
                                                     height: configuration.height, frameRate: configuration.frameRate,
                                                     inputFormats: [.h264]) else {
            throw CaptureError(device: device.path, message: "offers no H.264 (it has: "
                + device.formats.map(\.code).joined(separator: ", ") + ")")
        }
        let input = try CaptureInput(
            device: device.path, formatName: "video4linux2", url: device.path,
            options: ["video_size": "\(choice.width)x\(choice.height)",
                      "framerate": "\(choice.frameRate.numerator)/\(choice.frameRate.denominator)",
                      "input_format": "h264"],
            thread: thread)
        let reader = try Reader(input: input, choice: choice)
        self.device = device
        self.choice = choice
        copiedTracks = [reader.track]
        keyframeIntervalSeconds = try reader.measureKeyframeInterval().map { Double($0) / 1_000_000 }
        thread.start(name: "hlscap v4l2 \(device.path)") { [thread] in reader.run(on: thread) }
    }

    /// A source made and never started (the stream failed to begin) stops reading when it goes.
    deinit { thread.stop() }

    public var name: String { device.path }

    public var delivers: CaptureKinds { .video }

    public func start(handler: @escaping (CaptureEvent) -> Void) throws {
        precondition(!started, "a capture source starts once")
        started = true
        relay.handle(with: handler)
    }

    public func stop() { thread.stop() }

    /// Holds the reading thread's events until the source starts, then hands them, and every later one, to
    /// the handler in order, on the reading thread. Unchecked sendable: both fields are touched under the lock.
    private final class Relay: @unchecked Sendable {
        private let lock = NSLock()
        private var handler: ((CaptureEvent) -> Void)?
        private var held: [CaptureEvent] = []

        func handle(with handler: @escaping (CaptureEvent) -> Void) {
            lock.lock()
            self.handler = handler
            lock.unlock()
        }

        func deliver(_ event: CaptureEvent) {
            lock.lock()
            held.append(event)
            let current = handler
            let due = current == nil ? [] : held
            if current != nil { held = [] }
            lock.unlock()
            guard let current else { return }
            for event in due { current(event) }
        }
    }

    /// The open device and what turns its packets into samples; used by the opening thread, then by the
    /// reading thread only.
    private final class Reader: @unchecked Sendable {
        let input: CaptureInput
        let track: TrackDescription
        private let decoderConfiguration: AVCDecoderConfiguration
        private var parameterSets: InBandParameterSets
        private var timestamps: CameraTimestamps
        private let frameTicks: Int64
        /// Samples read while opening, handed on first.
        private var pending: [EncodedSample] = []

        /// Reads up to the camera's first keyframe with usable parameter sets (the pictures before it cannot
        /// be decoded) and describes the track from them.
        init(input: CaptureInput, choice: CameraFormatChoice) throws(CaptureError) {
            self.input = input
            frameTicks = Timescale.video.perSecond * Int64(choice.frameRate.denominator)
                / Int64(max(1, choice.frameRate.numerator))
            timestamps = CameraTimestamps(frameMicroseconds: choice.frameMicroseconds)
            let deadline = MonotonicClock.nowMicroseconds() + CameraCopySource.firstKeyframeMicroseconds
            var found: AVCDecoderConfiguration?
            while found == nil {
                guard try Self.read(input, until: deadline) else {
                    throw CaptureError(device: input.device, message: String(
                        format: "sent no H.264 keyframe with its parameter sets (SPS/PPS) within %g s",
                        Double(CameraCopySource.firstKeyframeMicroseconds) / 1_000_000))
                }
                let bytes = input.packet.bytes
                if let configuration = H264ParameterSetChoice.usableConfiguration(annexB: bytes),
                   AnnexB.nalUnits(in: bytes).contains(where: { H264NALUnit.typeField(of: $0) == H264NALUnitType.idrSlice.rawValue }) {
                    found = configuration
                }
            }
            guard let configuration = found else { preconditionFailure("the loop ends with a configuration") }
            decoderConfiguration = configuration
            parameterSets = InBandParameterSets(configuration)
            let stream = InputStreamInfo(stream: input.stream, kind: .video, in: input.context)
            do {
                let format = try CopySource.h264Format(stream, configuration: configuration, path: input.device)
                track = TrackDescription(trackID: 1, timescale: .video, format: .h264(format))
            } catch {
                throw CaptureError(device: input.device, message: "its H.264 cannot be copied: \(error)")
            }
            pending.append(try sample())
        }

        /// Reads ahead to the second keyframe, keeping the samples: its distance from the first, in
        /// microseconds, or nil when none came within `KeyframeIntervalSearch.limitMicroseconds`.
        func measureKeyframeInterval() throws(CaptureError) -> Int64? {
            var search = KeyframeIntervalSearch()
            let add = { (sample: EncodedSample) in
                search.add(microseconds: Timescale.video.convert(sample.decodeTime, to: .microseconds), isSync: sample.isSync)
            }
            for sample in pending { _ = add(sample) }
            let deadline = MonotonicClock.nowMicroseconds() + KeyframeIntervalSearch.limitMicroseconds
            while try Self.read(input, until: deadline) {
                let sample = try sample()
                pending.append(sample)
                switch add(sample) {
                case .searching: continue
                case .found(let interval): return interval
                case .gaveUp: return nil
                }
            }
            return nil
        }

        func run(on thread: CaptureThread) {
            for sample in pending {
                guard thread.emit(.copied(sample)) else { return }
            }
            pending = []
            do throws(CaptureError) {
                while true {
                    switch try input.read(stoppingOn: thread) {
                    case .stopped:
                        return
                    case .ended:
                        thread.emit(.ended)
                        return
                    case .packet:
                        guard thread.emit(.copied(try sample())) else { return }
                    }
                }
            } catch {
                thread.emit(.failed(error))
            }
        }

        /// The access unit in `input.packet` as a sample: 4-byte lengths, on the monotonic clock.
        private func sample() throws(CaptureError) -> EncodedSample {
            let dequeued = MonotonicClock.nowMicroseconds()
            let captured = timestamps.captureTime(driverMicroseconds: input.packet.pts, dequeuedMicroseconds: dequeued)
            let unit: H264AccessUnit
            do {
                unit = try H264AccessUnit(input.packet.bytes, framing: .annexB, configuration: decoderConfiguration)
            } catch {
                throw CaptureError(device: input.device, message: "sent a broken H.264 access unit (\(error))")
            }
            if let units = try? LengthPrefixed.nalUnits(in: unit.bytes), let problem = parameterSets.check(units) {
                throw CaptureError(device: input.device, message: "\(problem); its H.264 cannot be copied on")
            }
            return EncodedSample(track: 0, decodeTime: Timescale.microseconds.convert(captured, to: .video),
                                 durationHint: frameTicks, isSync: unit.isIDR, data: unit.bytes)
        }

        /// Waits for the next packet into `input.packet` until `deadline` on the monotonic clock (while the
        /// source is opened, before any stop can be asked for): false when none came by then.
        private static func read(_ input: CaptureInput, until deadline: Int64) throws(CaptureError) -> Bool {
            while MonotonicClock.nowMicroseconds() < deadline {
                let result: InputFormatContext.ReadResult
                do {
                    result = try input.context.readFrame(into: &input.packet)
                } catch {
                    throw CaptureError(device: input.device, message: "reading failed: \(error)")
                }
                switch result {
                case .packet: return true
                case .endOfFile: return false
                case .tryAgain: usleep(CaptureInput.idleSleepMicroseconds)
                }
            }
            return false
        }
    }
}
