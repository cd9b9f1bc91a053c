import CFFmpeg

extension Packet {
    /// Fills this packet with a copy of `demuxed`: payload, timestamps, flags and the
    /// skip-samples side data a decoder needs to drop encoder priming.
    mutating func fill(from demuxed: DemuxedPacket) throws(FFmpegError) {
        unref()
        try FFmpegError.check(av_new_packet(pointer, Int32(demuxed.data.count)))
        if !demuxed.data.isEmpty {
            demuxed.data.withUnsafeBufferPointer { pointer.pointee.data.update(from: $0.baseAddress!, count: $0.count) }
        }
        pointer.pointee.pts = demuxed.pts ?? hlscap_nopts_value()
        pointer.pointee.dts = demuxed.dts ?? hlscap_nopts_value()
        pointer.pointee.duration = demuxed.duration
        var flags: Int32 = 0
        if demuxed.isKeyframe { flags |= AV_PKT_FLAG_KEY }
        if demuxed.isCorrupt { flags |= AV_PKT_FLAG_CORRUPT }
        if demuxed.isDiscard { flags |= AV_PKT_FLAG_DISCARD }
        pointer.pointee.flags = flags
        if demuxed.skipSamplesAtStart > 0 {
            try addSkipSamples(demuxed.skipSamplesAtStart)
        }
    }

    /// AV_PKT_DATA_SKIP_SAMPLES: samples to skip at the start and at the end (32-bit little
    /// endian each), then two bytes of reasons.
    private static let skipSamplesSideDataSize = 10

    private func addSkipSamples(_ count: Int) throws(FFmpegError) {
        guard let data = av_packet_new_side_data(pointer, AV_PKT_DATA_SKIP_SAMPLES, Self.skipSamplesSideDataSize) else {
            throw .outOfMemory
        }
        let raw = UnsafeMutableRawPointer(data)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: Self.skipSamplesSideDataSize)
        raw.storeBytes(of: UInt32(count).littleEndian, as: UInt32.self)
    }
}
