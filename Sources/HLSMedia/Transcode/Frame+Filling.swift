import CFFmpeg

extension Frame {
    /// `sampleCount` samples of silence in planar float.
    static func silence(sampleCount: Int, sampleRate: Int, channelCount: Int) throws -> Frame {
        let frame = try Frame.fltp(sampleCount: sampleCount, sampleRate: sampleRate, channelCount: channelCount)
        av_samples_set_silence(frame.pointer.pointee.extended_data, 0, Int32(sampleCount), Int32(channelCount),
                               AV_SAMPLE_FMT_FLTP)
        return frame
    }

    /// A planar float frame without its first `count` samples.
    func droppingLeadingSamples(_ count: Int) throws -> Frame {
        let kept = sampleCount - count
        let frame = try Frame.fltp(sampleCount: kept, sampleRate: sampleRate, channelCount: channelCount)
        try FFmpegError.check(av_samples_copy(frame.pointer.pointee.extended_data, pointer.pointee.extended_data,
                                              0, Int32(count), Int32(kept), Int32(channelCount), AV_SAMPLE_FMT_FLTP))
        frame.timeBase = timeBase
        return frame
    }

    /// A black yuv420p picture.
    static func black(width: Int, height: Int) throws -> Frame {
        let frame = try Frame.yuv420p(width: width, height: height)
        for index in 0..<3 {
            let plane = frame.plane(index)
            let rows = index == 0 ? height : (height + 1) / 2
            plane.base.update(repeating: index == 0 ? Scaler.blackLuma : Scaler.neutralChroma,
                              count: rows * plane.bytesPerRow)
        }
        return frame
    }
}
