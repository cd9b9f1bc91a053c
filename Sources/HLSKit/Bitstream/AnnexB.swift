/// H.264 byte-stream format (H.264 Annex B): NAL units separated by 00 00 01 or 00 00 00 01
/// start codes, as libx264 and MPEG-TS deliver them.
public enum AnnexB {
    /// Whether `bytes` starts with a start code. Length-prefixed data starts with a length instead;
    /// a 4-byte length of 1 would look the same, but a one-byte NAL unit holds only its header.
    public static func isAnnexB(_ bytes: some Collection<UInt8>) -> Bool {
        let head = Array(bytes.prefix(4))
        return head.starts(with: [0, 0, 1]) || head == [0, 0, 0, 1]
    }

    /// The NAL units between start codes, without the start codes. Bytes before the first start
    /// code are ignored; trailing zero bytes (trailing_zero_8bits, and the first byte of a 4-byte
    /// start code) are not part of the NAL unit before them.
    public static func nalUnits(in bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var units: [ArraySlice<UInt8>] = []
        var unitStart: Int?
        for startCode in startCodes(in: bytes) {
            if let start = unitStart {
                appendTrimmed(bytes[start..<startCode], to: &units)
            }
            unitStart = startCode + 3
        }
        if let start = unitStart {
            appendTrimmed(bytes[start...], to: &units)
        }
        return units
    }

    /// Where each 00 00 01 of `bytes` starts, in order, none overlapping. The scan looks at every third
    /// byte first: one above 1 cannot be in a start code with either of the two bytes before it, so the
    /// three go by at once (a camera's picture is tens of kilobytes, and every copied one is scanned).
    static func startCodes(in bytes: [UInt8]) -> [Int] {
        var found: [Int] = []
        bytes.withUnsafeBufferPointer { buffer in
            var index = 0
            while index + 2 < buffer.count {
                let third = buffer[index + 2]
                if third > 1 {
                    index += 3
                } else if third == 1 {
                    if buffer[index] == 0 && buffer[index + 1] == 0 { found.append(index) }
                    index += 3
                } else {
                    index += 1
                }
            }
        }
        return found
    }

    /// An access unit with every NAL unit behind a 4-byte big-endian length, as `mdat` samples
    /// need. Access unit delimiters and filler data are dropped: the container frames samples
    /// itself, and filler only pads a constant-bit-rate channel.
    public static func lengthPrefixed(_ accessUnit: [UInt8]) -> [UInt8] {
        var writer = ByteWriter(capacity: accessUnit.count)
        for unit in nalUnits(in: accessUnit) where !isDroppedInContainer(unit) {
            writer.write(UInt32(unit.count))
            writer.write(bytes: unit)
        }
        return writer.bytes
    }

    private static func isDroppedInContainer(_ unit: ArraySlice<UInt8>) -> Bool {
        let type = H264NALUnit.typeField(of: unit)
        return type == H264NALUnitType.accessUnitDelimiter.rawValue
            || type == H264NALUnitType.fillerData.rawValue
    }

    private static func appendTrimmed(_ unit: ArraySlice<UInt8>, to units: inout [ArraySlice<UInt8>]) {
        var end = unit.endIndex
        while end > unit.startIndex && unit[end - 1] == 0 {
            end -= 1
        }
        if end > unit.startIndex {
            units.append(unit[unit.startIndex..<end])
        }
    }
}

/// NAL units behind big-endian lengths of 1, 2 or 4 bytes, as in `avcC`-described samples.
public enum LengthPrefixed {
    public static let allowedLengthSizes: Set<Int> = [1, 2, 4]

    /// The NAL units of a length-prefixed sample, without their lengths.
    public static func nalUnits(in bytes: [UInt8], lengthSize: Int = 4) throws -> [ArraySlice<UInt8>] {
        guard allowedLengthSizes.contains(lengthSize) else {
            throw BitstreamError.invalidField(structure: "length-prefixed NAL units",
                                              field: "length size", value: lengthSize)
        }
        var units: [ArraySlice<UInt8>] = []
        var index = 0
        while index < bytes.count {
            guard index + lengthSize <= bytes.count else {
                throw BitstreamError.truncated(structure: "NAL unit length")
            }
            let length = bytes[index..<index + lengthSize].reduce(0) { ($0 << 8) | Int($1) }
            index += lengthSize
            guard length <= bytes.count - index else {
                throw BitstreamError.truncated(structure: "length-prefixed NAL unit")
            }
            units.append(bytes[index..<index + length])
            index += length
        }
        return units
    }

    /// Rewrites a sample with 1-, 2- or 4-byte lengths to 4-byte lengths, the size the init
    /// segment's `avcC` always declares.
    public static func withFourByteLengths(_ bytes: [UInt8], lengthSize: Int) throws -> [UInt8] {
        var writer = ByteWriter(capacity: bytes.count + bytes.count / 8)
        for unit in try nalUnits(in: bytes, lengthSize: lengthSize) {
            writer.write(UInt32(unit.count))
            writer.write(bytes: unit)
        }
        return writer.bytes
    }
}
