import CFFmpeg

extension Frame {
    /// The largest absolute sample value of a planar float frame, 0…1 (full scale); 0 for other formats.
    public func peakLevel() -> Float {
        guard sampleFormat == AV_SAMPLE_FMT_FLTP, sampleCount > 0 else { return 0 }
        var peak: Float = 0
        for channel in 0..<channelCount {
            guard let plane = pointer.pointee.extended_data[channel] else { continue }
            let samples = UnsafeRawPointer(plane).assumingMemoryBound(to: Float.self)
            for index in 0..<sampleCount { peak = max(peak, abs(samples[index])) }
        }
        return peak
    }
}
