import CFFmpeg
import HLSBase
import HLSKit

/// The built-in source (`--video test`, `--audio test`): `TestPattern` pictures and sound,
/// timed exactly (frame n at n / fps s, audio in blocks of `audioBlockSamples`), and paced by
/// the monotonic clock unless `realtime` is off.
public final class TestSource: CaptureSource {
    public struct Configuration: Sendable {
        public var width = 1280
        public var height = 720
        public var framesPerSecond = 30
        public var video = true
        public var audio = true
        /// When false, frames come as fast as they can be made (`--no-realtime`), with the same timestamps.
        public var realtime = true
        /// Stream time after which the source sends `.ended`; nil runs until stopped.
        public var durationMicroseconds: Int64?
        /// Makes the sound like a microphone whose sample clock runs this many parts per million fast
        /// (negative: slow): it plays that many more samples a second than the 48 kHz it claims, and
        /// they are timed the way a microphone's are, by their count (`SampleClock`). 0: exact timing.
        public var audioClockPartsPerMillion = 0

        public init() {}
    }

    public static let deviceName = "test"
    public static let sampleRate = 48_000
    public static let channelCount = 2
    public static let audioBlockSamples = 1024

    public let configuration: Configuration
    private var thread: CaptureThread?

    public init(_ configuration: Configuration) throws {
        guard configuration.video || configuration.audio else {
            throw CaptureError(device: Self.deviceName, message: "neither video nor audio is enabled")
        }
        guard configuration.width >= 2, configuration.height >= 2,
              configuration.width % 2 == 0, configuration.height % 2 == 0 else {
            throw CaptureError(device: Self.deviceName,
                               message: "size \(configuration.width)x\(configuration.height) must be even and at least 2x2")
        }
        guard configuration.framesPerSecond > 0 else {
            throw CaptureError(device: Self.deviceName, message: "frame rate must be positive")
        }
        self.configuration = configuration
    }

    public var name: String { Self.deviceName }

    public var delivers: CaptureKinds {
        CaptureKinds(configuration.video ? [.video] : []).union(configuration.audio ? [.audio] : [])
    }

    public var isLive: Bool { configuration.realtime }

    public func start(handler: @escaping (CaptureEvent) -> Void) throws {
        precondition(thread == nil, "a capture source starts once")
        let thread = CaptureThread(handler: handler)
        self.thread = thread
        let pattern = TestPattern(width: configuration.width, height: configuration.height,
                                  framesPerSecond: configuration.framesPerSecond,
                                  sampleRate: Self.sampleRate, channelCount: Self.channelCount)
        let configuration = configuration
        guard abs(configuration.audioClockPartsPerMillion) <= 10_000 else {
            throw CaptureError(device: Self.deviceName,
                               message: "an audio clock off by more than 10000 ppm (1 %) is not a microphone's")
        }
        let startMicroseconds = MonotonicClock.nowMicroseconds()
        thread.start(name: "hlscap test source") {
            Self.run(pattern, configuration, startMicroseconds: startMicroseconds, on: thread)
        }
    }

    public func stop() { thread?.stop() }

    /// Makes video frames and audio blocks in the order of the instant each becomes available:
    /// a frame at its time, an audio block once its last sample has played.
    private static func run(_ pattern: TestPattern, _ configuration: Configuration, startMicroseconds: Int64,
                            on thread: CaptureThread) {
        let end = configuration.durationMicroseconds ?? .max
        // One being drawn, one waiting for the writing queue, one being encoded, one spare; frames
        // beyond that, while the queue is behind, are made for the moment and freed after.
        let pictures = PicturePool(width: pattern.width, height: pattern.height, capacity: 4)
        var frameIndex: Int64 = 0
        var sampleIndex: Int64 = 0
        // A drifting microphone: its sound, beeps included, happens in real time at the rate it really
        // plays; its samples are counted at the rate it claims.
        let drifting = configuration.audioClockPartsPerMillion != 0
        let sound = drifting ? TestPattern(width: pattern.width, height: pattern.height,
                                           framesPerSecond: pattern.framesPerSecond,
                                           sampleRate: sampleRate + sampleRate * configuration.audioClockPartsPerMillion / 1_000_000,
                                           channelCount: pattern.channelCount) : pattern
        var clock = SampleClock(sampleRate: sampleRate)
        while !thread.isStopRequested {
            let videoStart = pattern.frameTimeMicroseconds(frameIndex)
            let audioStart = sound.sampleTimeMicroseconds(sampleIndex)
            let videoPending = configuration.video && videoStart < end
            let audioPending = configuration.audio && audioStart < end
            guard videoPending || audioPending else {
                thread.emit(.ended)
                return
            }
            let audioReady = sound.sampleTimeMicroseconds(sampleIndex + Int64(audioBlockSamples))
            let nextIsVideo = videoPending && (!audioPending || videoStart <= audioReady)
            if configuration.realtime {
                MonotonicClock.sleep(until: startMicroseconds + (nextIsVideo ? videoStart : audioReady))
            }
            do {
                let event: CaptureEvent
                if nextIsVideo {
                    let frame = try pictures.picture(timeBase: MonotonicClock.timeBase)
                    pattern.draw(frame: frameIndex, into: frame)
                    frame.pts = startMicroseconds + videoStart
                    event = .video(frame)
                    frameIndex += 1
                } else {
                    let frame = try Frame.captured(samples: audioBlockSamples, sampleRate: sampleRate,
                                                        channels: channelCount, format: AV_SAMPLE_FMT_S16)
                    sound.fillAudio(from: sampleIndex, count: audioBlockSamples,
                                    into: UnsafeMutableRawPointer(frame.plane(0).base).assumingMemoryBound(to: Int16.self))
                    frame.pts = startMicroseconds + audioStart
                    if drifting {
                        if clock.receive(samples: audioBlockSamples, clockMicroseconds: startMicroseconds + audioStart) {
                            guard thread.emit(.audioClock(partsPerMillion: clock.partsPerMillion, resyncs: clock.resyncCount))
                            else { return }
                        }
                        frame.pts = clock.time(ofSample: sampleIndex)
                    }
                    event = .audio(frame)
                    sampleIndex += Int64(audioBlockSamples)
                }
                guard thread.emit(event) else { return }
            } catch {
                thread.emit(.failed(CaptureError(device: deviceName, message: "cannot allocate a frame: \(error)")))
                return
            }
        }
    }
}
