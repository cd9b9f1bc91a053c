import CFFmpeg
import Glibc
import HLSBase

/// Keeps a track flowing while its capture device is gone (`--reconnect`): a dark picture that
/// counts the seconds since the device was lost, or silence, in real time on the monotonic clock
/// from where the device stopped, as the device would have delivered them.
///
/// Without it the stream would stall: the segmenter cuts on the video and waits for every track to
/// pass each cut, so a missing camera or microphone would hold every segment back until it returned.
///
/// Unchecked sendable: `content` is immutable, and `thread` is set once by `start` before the source
/// is shared.
public final class StandInSource: CaptureSource, @unchecked Sendable {
    public enum Content: Sendable, Equatable {
        case video(width: Int, height: Int, framesPerSecond: Int)
        /// Interleaved signed 16-bit silence in blocks of `MicrophoneSource.blockSamples`.
        case audio(sampleRate: Int, channelCount: Int)
    }

    /// Luma of the picture and of its counter: dark grey and light grey, so neither reads as a camera's.
    static let backgroundLuma: UInt8 = 40
    static let counterLuma: UInt8 = 160
    static let neutralChroma: UInt8 = 128

    public let content: Content
    /// The time of its first frame on the monotonic clock: a frame's spacing after the lost device's
    /// last one. A device found lost only when its stall timeout ran out stopped delivering that long
    /// before: the stand-in starts where the device stopped and makes its first frames at once until
    /// they catch up with the clock, so that the stream has no hole (a hole would be one frame lasting
    /// the whole stall, and a segment longer than the target duration). At most `catchUpMicroseconds`
    /// back; without a time, the stand-in starts now.
    private let firstFrameAtMicroseconds: Int64?
    /// The longest stretch a stand-in makes at once to catch up with the clock.
    public static let catchUpMicroseconds: Int64 = 30_000_000
    private var thread: CaptureThread?

    public init(_ content: Content, firstFrameAtMicroseconds: Int64? = nil) throws(CaptureError) {
        switch content {
        case .video(let width, let height, let framesPerSecond):
            guard width >= 2, height >= 2, width % 2 == 0, height % 2 == 0, framesPerSecond > 0 else {
                throw CaptureError(device: "stand-in", message: "cannot make \(width)x\(height) pictures at \(framesPerSecond) fps")
            }
        case .audio(let sampleRate, let channelCount):
            guard sampleRate > 0, channelCount > 0 else {
                throw CaptureError(device: "stand-in", message: "cannot make \(channelCount) channels at \(sampleRate) Hz")
            }
        }
        self.content = content
        self.firstFrameAtMicroseconds = firstFrameAtMicroseconds
    }

    public var name: String { "stand-in" }

    public var delivers: CaptureKinds {
        switch content {
        case .video: .video
        case .audio: .audio
        }
    }

    public func start(handler: @escaping (CaptureEvent) -> Void) {
        precondition(thread == nil, "a capture source starts once")
        let thread = CaptureThread(handler: handler)
        self.thread = thread
        let content = content
        let now = MonotonicClock.nowMicroseconds()
        let startMicroseconds = firstFrameAtMicroseconds.map { max($0, now - Self.catchUpMicroseconds) } ?? now
        thread.start(name: "hlscap stand-in") { Self.run(content, startMicroseconds: startMicroseconds, on: thread) }
    }

    public func stop() { thread?.stop() }

    private static func run(_ content: Content, startMicroseconds: Int64, on thread: CaptureThread) {
        var index: Int64 = 0
        do {
            switch content {
            case .video(let width, let height, let framesPerSecond):
                let pictures = PicturePool(width: width, height: height, capacity: 4)
                while !thread.isStopRequested {
                    let time = index * 1_000_000 / Int64(framesPerSecond)
                    MonotonicClock.sleep(until: startMicroseconds + time)
                    let frame = try pictures.picture(timeBase: MonotonicClock.timeBase)
                    draw(secondsLost: Int(time / 1_000_000), into: frame, width: width, height: height)
                    frame.pts = startMicroseconds + time
                    guard thread.emit(.video(frame)) else { return }
                    index += 1
                }
            case .audio(let sampleRate, let channelCount):
                let block = MicrophoneSource.blockSamples
                while !thread.isStopRequested {
                    let time = index * Int64(block) * 1_000_000 / Int64(sampleRate)
                    // A block is there once its last sample would have been recorded.
                    MonotonicClock.sleep(until: startMicroseconds + (index + 1) * Int64(block) * 1_000_000 / Int64(sampleRate))
                    let frame = try Frame.captured(samples: block, sampleRate: sampleRate, channels: channelCount,
                                                   format: AV_SAMPLE_FMT_S16)
                    memset(frame.plane(0).base, 0, block * channelCount * MemoryLayout<Int16>.size)
                    frame.pts = startMicroseconds + time
                    guard thread.emit(.audio(frame)) else { return }
                    index += 1
                }
            }
        } catch {
            thread.emit(.failed(CaptureError(device: "stand-in", message: "cannot allocate a frame: \(error)")))
        }
    }

    /// The dark picture with "m:ss" since the device was lost in its middle, so a viewer sees the
    /// stream is live and waiting rather than frozen.
    static func draw(secondsLost: Int, into frame: Frame, width: Int, height: Int) {
        let (y, yStride) = frame.plane(0)
        for row in 0..<height { memset(y + row * yStride, Int32(backgroundLuma), width) }
        for plane in 1...2 {
            let (chroma, stride) = frame.plane(plane)
            for row in 0..<(height / 2) { memset(chroma + row * stride, Int32(neutralChroma), width / 2) }
        }
        let text = "\(secondsLost / 60):" + (secondsLost % 60 < 10 ? "0" : "") + "\(secondsLost % 60)"
        let scale = max(1, height / 60)
        let textWidth = PixelFont.textWidth(characterCount: text.count, scale: scale)
        PixelFont.draw(text, into: y, stride: yStride, width: width, height: height, x: (width - textWidth) / 2,
                       y: (height - PixelFont.glyphHeight * scale) / 2, scale: scale, foreground: counterLuma)
    }
}
