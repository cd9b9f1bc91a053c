import CFFmpeg
import HLSKit

extension Frame {
    /// Buffer alignment for frames hlscap allocates: 0 lets FFmpeg pick what its SIMD code needs.
    private static let bufferAlignment: Int32 = 0

    /// A new frame with writable buffers for a `width`×`height` picture in `pixelFormat`.
    static func video(width: Int, height: Int, pixelFormat: AVPixelFormat, timeBase: Rational) throws -> Frame {
        let frame = try Frame(timeBase: timeBase)
        frame.pointer.pointee.width = Int32(width)
        frame.pointer.pointee.height = Int32(height)
        frame.pointer.pointee.format = pixelFormat.rawValue
        try FFmpegError.check(av_frame_get_buffer(frame.pointer, bufferAlignment))
        return frame
    }

    /// A new planar YUV 4:2:0 frame, the format the video encoder takes; its content is undefined.
    public static func yuv420p(width: Int, height: Int, timeBase: Rational = Rational(1, 90_000)) throws -> Frame {
        try video(width: width, height: height, pixelFormat: AV_PIX_FMT_YUV420P, timeBase: timeBase)
    }

    /// A new frame with writable buffers for `sampleCount` samples of audio.
    static func audio(sampleCount: Int, sampleRate: Int, channelCount: Int, sampleFormat: AVSampleFormat) throws -> Frame {
        let frame = try Frame(timeBase: Rational(1, Int32(sampleRate)))
        frame.pointer.pointee.nb_samples = Int32(sampleCount)
        frame.pointer.pointee.sample_rate = Int32(sampleRate)
        frame.pointer.pointee.format = sampleFormat.rawValue
        av_channel_layout_default(&frame.pointer.pointee.ch_layout, Int32(channelCount))
        try FFmpegError.check(av_frame_get_buffer(frame.pointer, bufferAlignment))
        return frame
    }

    /// A new frame for `sampleCount` samples of planar float audio, what the AAC encoder takes.
    static func fltp(sampleCount: Int, sampleRate: Int, channelCount: Int) throws -> Frame {
        try audio(sampleCount: sampleCount, sampleRate: sampleRate, channelCount: channelCount,
                  sampleFormat: AV_SAMPLE_FMT_FLTP)
    }

    /// Another reference to the same buffers, whose properties (pts, picture type) can change
    /// without touching this frame.
    public func newReference() throws -> Frame {
        guard let copy = av_frame_clone(pointer) else { throw FFmpegError.outOfMemory }
        return Frame(owning: copy, timeBase: timeBase)
    }

    var pixelFormat: AVPixelFormat { AVPixelFormat(rawValue: pointer.pointee.format) }

    /// yuv420p: what the encoders take without converting.
    public var isPlanarYUV420: Bool { pixelFormat == AV_PIX_FMT_YUV420P }

    /// Whether a pixel is as wide as it is high (or its shape is unknown).
    public var hasSquarePixels: Bool {
        let aspect = pointer.pointee.sample_aspect_ratio
        return aspect.num == 0 || aspect.num == aspect.den
    }
    var sampleFormat: AVSampleFormat { AVSampleFormat(rawValue: pointer.pointee.format) }

    /// Plane `index`'s first byte and the bytes from one row to the next.
    func plane(_ index: Int) -> (base: UnsafeMutablePointer<UInt8>, bytesPerRow: Int) {
        let base = withUnsafeMutablePointer(to: &pointer.pointee.data) {
            $0.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: Int(AV_NUM_DATA_POINTERS)) { $0[index]! }
        }
        let lineSize = withUnsafePointer(to: &pointer.pointee.linesize) {
            $0.withMemoryRebound(to: Int32.self, capacity: Int(AV_NUM_DATA_POINTERS)) { $0[index] }
        }
        return (base, Int(lineSize))
    }
}
