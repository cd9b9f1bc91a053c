import CFFmpeg

extension Frame {
    /// 0 lets FFmpeg choose the alignment its SIMD code needs.
    private static let bufferAlignment: Int32 = 0

    /// A yuv420p picture with freshly allocated planes, timed in microseconds.
    static func capturedVideo(width: Int, height: Int) throws -> Frame {
        let frame = try Frame(timeBase: MonotonicClock.timeBase)
        frame.pointer.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        frame.pointer.pointee.width = Int32(width)
        frame.pointer.pointee.height = Int32(height)
        try FFmpegError.check(av_frame_get_buffer(frame.pointer, bufferAlignment))
        return frame
    }

    /// An audio block of `samples` samples per channel with its buffers allocated, timed in microseconds.
    static func capturedAudio(samples: Int, sampleRate: Int, channels: Int, format: AVSampleFormat) throws -> Frame {
        let frame = try Frame(timeBase: MonotonicClock.timeBase)
        frame.pointer.pointee.format = format.rawValue
        frame.pointer.pointee.sample_rate = Int32(sampleRate)
        frame.pointer.pointee.nb_samples = Int32(samples)
        av_channel_layout_default(&frame.pointer.pointee.ch_layout, Int32(channels))
        try FFmpegError.check(av_frame_get_buffer(frame.pointer, bufferAlignment))
        return frame
    }

    /// Plane `index` of a picture as rows: the base address and the bytes from one row to the next.
    func plane(_ index: Int) -> (base: UnsafeMutablePointer<UInt8>, stride: Int) {
        let data = withUnsafePointer(to: pointer.pointee.data) {
            $0.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: Int(AV_NUM_DATA_POINTERS)) { $0[index] }
        }
        let stride = withUnsafePointer(to: pointer.pointee.linesize) {
            $0.withMemoryRebound(to: Int32.self, capacity: Int(AV_NUM_DATA_POINTERS)) { $0[index] }
        }
        guard let data else { preconditionFailure("frame has no plane \(index)") }
        return (data, Int(stride))
    }
}
