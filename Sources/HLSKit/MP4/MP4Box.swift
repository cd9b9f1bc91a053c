/// A box read from ISO-BMFF bytes (ISO/IEC 14496-12 4.2), written independently of HLSKit's writer
/// so that tests check the writer against a second reading of the specification; the validator
/// reads any stream with it.
public struct MP4Box: Sendable, Equatable {
    public let type: String
    /// Offset of the box's first byte (its size field) in the parsed buffer.
    public let offset: Int
    public let size: Int
    /// The bytes after the size and type (and largesize) fields.
    public let payload: ArraySlice<UInt8>
    public let children: [MP4Box]

    /// Boxes whose payload is only child boxes.
    static let containers: Set<String> = [
        "moov", "trak", "mdia", "minf", "dinf", "stbl", "mvex", "moof", "traf", "edts", "udta", "mfra",
        "sinf", "schi",
    ]
    /// Boxes with fields before their children, and how many payload bytes those fields take.
    static let childOffsets: [String: Int] = [
        "stsd": 8,  // full box header, entry_count
        "dref": 8,
        "avc1": 78,  // SampleEntry 8 + VisualSampleEntry 70
        "avc3": 78,
        "hvc1": 78,
        "hev1": 78,
        "encv": 78,
        "mp4a": 28,  // SampleEntry 8 + AudioSampleEntry 20
        "enca": 28,
    ]
    /// Deeper nesting than any real file has; bounds the recursion on hostile input.
    static let maximumDepth = 16

    /// Parses every box in `bytes`, top level first.
    public static func parse(_ bytes: [UInt8]) throws(MP4ReadError) -> [MP4Box] {
        try parseSequence(bytes[...], depth: 0)
    }

    /// Parses the boxes of `bytes`, whose indices are offsets in the whole buffer.
    public static func parse(_ bytes: ArraySlice<UInt8>) throws(MP4ReadError) -> [MP4Box] {
        try parseSequence(bytes, depth: 0)
    }

    static func parseSequence(_ bytes: ArraySlice<UInt8>, depth: Int) throws(MP4ReadError) -> [MP4Box] {
        guard depth < maximumDepth else {
            throw MP4ReadError.unexpected(box: "box tree", detail: "nested deeper than \(maximumDepth) levels")
        }
        var boxes: [MP4Box] = []
        var position = bytes.startIndex
        while position < bytes.endIndex {
            let box = try parseBox(bytes, at: position, depth: depth)
            boxes.append(box)
            position += box.size
        }
        return boxes
    }

    private static func parseBox(_ bytes: ArraySlice<UInt8>, at start: Int, depth: Int) throws(MP4ReadError) -> MP4Box {
        var reader = MP4Reader(bytes[start...], box: "box header")
        var size = Int(try reader.uint32())
        let type = try reader.fourCC()
        var headerSize = 8
        if size == 1 {
            let largeSize = try reader.uint64()
            guard largeSize <= UInt64(Int.max) else {
                throw MP4ReadError.badBoxSize(type: type, offset: start, size: -1)
            }
            size = Int(largeSize)
            headerSize = 16
        } else if size == 0 {
            size = bytes.endIndex - start  // extends to the end of the file
        }
        guard size >= headerSize, size <= bytes.endIndex - start else {
            throw MP4ReadError.badBoxSize(type: type, offset: start, size: size)
        }
        let payload = bytes[(start + headerSize)..<(start + size)]
        var children: [MP4Box] = []
        if containers.contains(type) {
            children = try parseSequence(payload, depth: depth + 1)
        } else if let childOffset = childOffsets[type] {
            guard payload.count >= childOffset else { throw MP4ReadError.truncated(box: type) }
            children = try parseSequence(payload.dropFirst(childOffset), depth: depth + 1)
        }
        return MP4Box(type: type, offset: start, size: size, payload: payload, children: children)
    }

    /// The first descendant at a slash-separated path of types, e.g. `traf/tfdt`.
    public func first(_ path: String) -> MP4Box? {
        all(path).first
    }

    /// Every descendant at a slash-separated path of types.
    public func all(_ path: String) -> [MP4Box] {
        [self].all(path: path.split(separator: "/").map(String.init), includingSelf: false)
    }

    /// Full-box version and flags, the first four payload bytes.
    public var version: UInt8 { payload.first ?? 0 }
    public var flags: UInt32 {
        payload.dropFirst().prefix(3).reduce(0) { ($0 << 8) | UInt32($1) }
    }
}

extension Array where Element == MP4Box {
    /// The first box at a slash-separated path from these top-level boxes, e.g. `moof/traf/tfdt`.
    public func first(_ path: String) -> MP4Box? {
        all(path).first
    }

    public func all(_ path: String) -> [MP4Box] {
        all(path: path.split(separator: "/").map(String.init), includingSelf: true)
    }

    fileprivate func all(path: [String], includingSelf: Bool) -> [MP4Box] {
        guard let head = path.first else { return self }
        let level = includingSelf ? self : flatMap(\.children)
        return level.filter { $0.type == head }.all(path: [String](path.dropFirst()), includingSelf: false)
    }
}

/// Why bytes are not the boxes they should be; offsets are from the start of the parsed buffer.
public enum MP4ReadError: Error, Sendable, Equatable, CustomStringConvertible {
    case badBoxSize(type: String, offset: Int, size: Int)
    case truncated(box: String)
    case missingBox(String)
    case unexpected(box: String, detail: String)

    public var description: String {
        switch self {
        case .badBoxSize(let type, let offset, let size): "box '\(type)' at \(offset) has bad size \(size)"
        case .truncated(let box): "'\(box)' ends before its fields"
        case .missingBox(let path): "no box at \(path)"
        case .unexpected(let box, let detail): "'\(box)': \(detail)"
        }
    }
}

/// Big-endian reads from a box payload.
public struct MP4Reader {
    private var bytes: ArraySlice<UInt8>
    private let box: String

    public init(_ bytes: ArraySlice<UInt8>, box: String) {
        self.bytes = bytes
        self.box = box
    }

    public var remaining: Int { bytes.count }

    public mutating func take(_ count: Int) throws(MP4ReadError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= bytes.count else { throw MP4ReadError.truncated(box: box) }
        defer { bytes = bytes.dropFirst(count) }
        return bytes.prefix(count)
    }

    public mutating func skip(_ count: Int) throws(MP4ReadError) { _ = try take(count) }

    public mutating func uint(_ byteCount: Int) throws(MP4ReadError) -> UInt64 {
        try take(byteCount).reduce(0) { ($0 << 8) | UInt64($1) }
    }

    public mutating func uint8() throws(MP4ReadError) -> UInt8 { UInt8(try uint(1)) }
    public mutating func uint16() throws(MP4ReadError) -> UInt16 { UInt16(try uint(2)) }
    public mutating func uint24() throws(MP4ReadError) -> UInt32 { UInt32(try uint(3)) }
    public mutating func uint32() throws(MP4ReadError) -> UInt32 { UInt32(try uint(4)) }
    public mutating func uint64() throws(MP4ReadError) -> UInt64 { try uint(8) }
    public mutating func int32() throws(MP4ReadError) -> Int32 { Int32(bitPattern: try uint32()) }

    public mutating func fourCC() throws(MP4ReadError) -> String {
        String(decoding: try take(4), as: UTF8.self)
    }
}
