import CFFmpeg

/// An owned `AVPacket`: allocated once and reused, its payload released by `unref()`.
public struct Packet: ~Copyable {
    let pointer: UnsafeMutablePointer<AVPacket>

    public init() throws(FFmpegError) {
        guard let pointer = av_packet_alloc() else { throw .outOfMemory }
        self.pointer = pointer
    }

    deinit {
        var packet: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&packet)
    }

    /// Releases the payload so the packet can be filled again.
    public mutating func unref() { av_packet_unref(pointer) }

    public var streamIndex: Int { Int(pointer.pointee.stream_index) }
    /// `nil` when FFmpeg has no timestamp (`AV_NOPTS_VALUE`).
    public var pts: Int64? { Self.timestamp(pointer.pointee.pts) }
    public var dts: Int64? { Self.timestamp(pointer.pointee.dts) }
    public var duration: Int64 { pointer.pointee.duration }
    public var isKeyframe: Bool { hasFlag(AV_PKT_FLAG_KEY) }
    public var isCorrupt: Bool { hasFlag(AV_PKT_FLAG_CORRUPT) }
    public var isDiscard: Bool { hasFlag(AV_PKT_FLAG_DISCARD) }
    public var size: Int { Int(pointer.pointee.size) }

    /// One copy of the payload bytes.
    public var bytes: [UInt8] {
        guard let data = pointer.pointee.data, pointer.pointee.size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }

    /// Samples a decoder should drop from the start of this audio packet (encoder priming),
    /// from the `AV_PKT_DATA_SKIP_SAMPLES` side data; 0 when there is none.
    public var skipSamplesAtStart: Int {
        var sideDataSize = 0
        guard let sideData = av_packet_get_side_data(pointer, AV_PKT_DATA_SKIP_SAMPLES, &sideDataSize),
              sideDataSize >= MemoryLayout<UInt32>.size else { return 0 }
        // The side data starts with the count as a little-endian 32-bit integer.
        let count = UnsafeRawPointer(sideData).loadUnaligned(as: UInt32.self)
        return Int(UInt32(littleEndian: count))
    }

    private func hasFlag(_ flag: Int32) -> Bool { pointer.pointee.flags & flag != 0 }

    private static func timestamp(_ value: Int64) -> Int64? {
        value == hlscap_nopts_value() ? nil : value
    }
}
