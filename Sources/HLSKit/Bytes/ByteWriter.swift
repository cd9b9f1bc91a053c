/// Appends big-endian values to a byte array and writes ISO-BMFF boxes as nested closures.
///
/// `write…` verbs append; `set…(at:)` verbs patch bytes already written, for fields whose
/// value is known only later (a box size, a `trun` data offset).
public struct ByteWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    /// The number of bytes written so far, which is also the offset of the next byte.
    public var count: Int { bytes.count }

    public mutating func write(_ value: UInt8) {
        bytes.append(value)
    }

    public mutating func write(_ value: UInt16) {
        appendBigEndian(UInt64(value), byteCount: 2)
    }

    public mutating func write(_ value: UInt32) {
        appendBigEndian(UInt64(value), byteCount: 4)
    }

    public mutating func write(_ value: UInt64) {
        appendBigEndian(value, byteCount: 8)
    }

    public mutating func write(_ value: Int16) {
        write(UInt16(bitPattern: value))
    }

    public mutating func write(_ value: Int32) {
        write(UInt32(bitPattern: value))
    }

    public mutating func write(_ value: Int64) {
        write(UInt64(bitPattern: value))
    }

    /// Writes the low 24 bits of `value`, as full-box flags and descriptor sizes need.
    public mutating func write(uint24 value: UInt32) {
        precondition(value <= 0xFF_FFFF, "\(value) does not fit in 24 bits")
        appendBigEndian(UInt64(value), byteCount: 3)
    }

    public mutating func write(bytes other: some Sequence<UInt8>) {
        bytes.append(contentsOf: other)
    }

    public mutating func write(zeros count: Int) {
        bytes.append(contentsOf: repeatElement(0, count: count))
    }

    public mutating func write(fourCC: FourCC) {
        write(fourCC.rawValue)
    }

    public mutating func set(_ value: UInt32, at offset: Int) {
        for index in 0..<4 {
            bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * index))
        }
    }

    public mutating func set(_ value: Int32, at offset: Int) {
        set(UInt32(bitPattern: value), at: offset)
    }

    /// Writes a box: reserves the 32-bit size, writes the type, runs `body` for the content,
    /// then patches the size. Returns the offset of the box's first byte.
    @discardableResult
    public mutating func box(_ type: FourCC, _ body: (inout ByteWriter) throws -> Void) rethrows -> Int {
        let start = count
        write(UInt32(0))
        write(fourCC: type)
        try body(&self)
        let size = count - start
        precondition(size <= Int(UInt32.max), "box '\(type)' of \(size) bytes needs a 64-bit size")
        set(UInt32(size), at: start)
        return start
    }

    /// Writes a full box: a box whose content starts with an 8-bit version and 24-bit flags.
    @discardableResult
    public mutating func fullBox(_ type: FourCC, version: UInt8, flags: UInt32,
                                 _ body: (inout ByteWriter) throws -> Void) rethrows -> Int {
        try box(type) { writer in
            writer.write(version)
            writer.write(uint24: flags)
            try body(&writer)
        }
    }

    private mutating func appendBigEndian(_ value: UInt64, byteCount: Int) {
        for index in stride(from: byteCount - 1, through: 0, by: -1) {
            bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index)))
        }
    }
}
