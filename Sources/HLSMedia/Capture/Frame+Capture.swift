import CFFmpeg
import HLSBase

extension Frame {
    /// A block of captured audio with its buffers allocated, timed in microseconds on the monotonic clock.
    static func captured(samples: Int, sampleRate: Int, channels: Int, format: AVSampleFormat) throws -> Frame {
        let frame = try Frame.audio(sampleCount: samples, sampleRate: sampleRate, channelCount: channels,
                                    sampleFormat: format)
        frame.timeBase = MonotonicClock.timeBase
        return frame
    }
}
