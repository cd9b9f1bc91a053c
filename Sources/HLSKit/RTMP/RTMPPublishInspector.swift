/// Reads what an RTMP publisher sends (the client's side of the connection, from its first byte) far
/// enough to learn which application it connects to and which stream it publishes: the stream key.
/// It parses the handshake's length, the chunk stream (basic and message headers, extended timestamps,
/// the chunk size the client sets) and AMF0 command messages; it answers nothing.
///
///     C0 C1 (1 + 1536 bytes)  C2 (1536)  chunks: set chunk size, connect {app}, …, publish "KEY"
public struct RTMPPublishInspector: Sendable {
    public enum Finding: Sendable, Equatable {
        /// The client asked to publish `streamName` to `app` (from its `connect`).
        case publish(app: String?, streamName: String)
    }

    public struct Malformed: Error, Equatable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    static let handshakeBytes = 1 + 1536 + 1536
    /// Commands are small; a message larger than this before `publish` is not a publisher's.
    static let largestCommandBytes = 64 * 1024

    private struct ChunkStream: Sendable {
        var length = 0
        var type: UInt8 = 0
        var extendedTimestamp = false
        var payload: [UInt8] = []
    }

    private var buffer: [UInt8] = []
    private var handshakeLeft = handshakeBytes
    private var chunkSize = 128
    private var streams: [Int: ChunkStream] = [:]
    private var app: String?

    public init() {}

    /// Takes the next bytes the client sent; returns what they revealed once the `publish` command is whole.
    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(Malformed) -> Finding? {
        buffer.append(contentsOf: bytes)
        if handshakeLeft > 0 {
            let taken = min(handshakeLeft, buffer.count)
            if handshakeLeft == Self.handshakeBytes, let version = buffer.first, version != 3 {
                throw Malformed(reason: "not an RTMP client (version byte \(version))")
            }
            buffer.removeFirst(taken)
            handshakeLeft -= taken
        }
        while handshakeLeft == 0, let finding = try nextChunk() {
            if let finding { return finding }
        }
        return nil
    }

    /// Parses one whole chunk from the buffer: nil when more bytes are needed; `.some(nil)` when it
    /// revealed nothing yet.
    private mutating func nextChunk() throws(Malformed) -> Finding?? {
        var reader = Cursor(buffer)
        guard let first = reader.byte() else { return nil }
        let format = first >> 6
        var id = Int(first & 0x3F)
        if id == 0 {
            guard let next = reader.byte() else { return nil }
            id = 64 + Int(next)
        } else if id == 1 {
            guard let low = reader.byte(), let high = reader.byte() else { return nil }
            id = 64 + Int(low) + 256 * Int(high)
        }
        var stream = streams[id] ?? ChunkStream()
        if format < 3 {
            // Type 0, 1 and 2 headers start a message; only type 3 continues one.
            guard stream.payload.isEmpty else {
                throw Malformed(reason: "a new message on chunk stream \(id) before its last one was whole")
            }
            guard let slice = reader.bytes(format == 0 ? 11 : format == 1 ? 7 : 3) else { return nil }
            let header = Array(slice)
            stream.extendedTimestamp = header[0] == 0xFF && header[1] == 0xFF && header[2] == 0xFF
            if format <= 1 {
                stream.length = Int(header[3]) << 16 | Int(header[4]) << 8 | Int(header[5])
                stream.type = header[6]
            }
        }
        if stream.extendedTimestamp {
            guard reader.bytes(4) != nil else { return nil }
        }
        guard stream.length <= Self.largestCommandBytes || stream.type == 8 || stream.type == 9 else {
            throw Malformed(reason: "a \(stream.length)-byte message of type \(stream.type) before publishing")
        }
        let wanted = min(chunkSize, stream.length - stream.payload.count)
        guard let payload = reader.bytes(wanted) else { return nil }
        buffer.removeFirst(reader.offset)
        stream.payload += payload
        guard stream.payload.count == stream.length else {
            streams[id] = stream
            return .some(nil)
        }
        let message = stream.payload
        stream.payload = []
        streams[id] = stream
        return .some(try take(type: stream.type, message))
    }

    private mutating func take(type: UInt8, _ message: [UInt8]) throws(Malformed) -> Finding? {
        switch type {
        case 1:
            // Set Chunk Size: 31 bits.
            guard message.count >= 4 else { throw Malformed(reason: "a short Set Chunk Size") }
            let size = Int(message[0] & 0x7F) << 24 | Int(message[1]) << 16 | Int(message[2]) << 8 | Int(message[3])
            guard size >= 1 else { throw Malformed(reason: "a chunk size of 0") }
            chunkSize = size
        case 17, 20:
            // AMF3 commands start with one byte (0) and are AMF0 after it.
            var values = AMF0Reader(type == 17 ? Array(message.dropFirst()) : message)
            guard case .string(let name)? = try values.next() else { return nil }
            if name == "connect" {
                _ = try values.next()  // transaction id
                if case .object(let properties)? = try values.next(), case .string(let connected)? = properties["app"] {
                    app = connected
                }
            } else if name == "publish" {
                _ = try values.next()  // transaction id
                _ = try values.next()  // null
                guard case .string(let streamName)? = try values.next() else {
                    throw Malformed(reason: "a publish command without a stream name")
                }
                return .publish(app: app, streamName: streamName)
            }
        default:
            break
        }
        return nil
    }

    private struct Cursor {
        let bytes: [UInt8]
        var offset = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        mutating func byte() -> UInt8? { bytes(1)?.first }
        mutating func bytes(_ count: Int) -> ArraySlice<UInt8>? {
            guard offset + count <= bytes.count else { return nil }
            defer { offset += count }
            return bytes[offset..<(offset + count)]
        }
    }
}

/// AMF0 values (Adobe's Action Message Format), as RTMP commands carry them; only what a publisher's
/// commands hold is decoded, the rest skipped by its size.
struct AMF0Reader {
    indirect enum Value: Equatable {
        case number(Double), boolean(Bool), string(String), object([String: Value]), null, other
    }

    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The next value, nil at the end.
    mutating func next() throws(RTMPPublishInspector.Malformed) -> Value? {
        guard offset < bytes.count else { return nil }
        return try value(depth: 0)
    }

    private mutating func take(_ count: Int) throws(RTMPPublishInspector.Malformed) -> ArraySlice<UInt8> {
        guard count >= 0, offset + count <= bytes.count else {
            throw RTMPPublishInspector.Malformed(reason: "an AMF0 value runs past its message")
        }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    private mutating func unsigned(_ count: Int) throws(RTMPPublishInspector.Malformed) -> Int {
        try take(count).reduce(0) { $0 << 8 | Int($1) }
    }

    private mutating func string(lengthBytes: Int) throws(RTMPPublishInspector.Malformed) -> String {
        String(decoding: try take(try unsigned(lengthBytes)), as: UTF8.self)
    }

    private mutating func properties(depth: Int) throws(RTMPPublishInspector.Malformed) -> [String: Value] {
        var properties: [String: Value] = [:]
        while true {
            let key = try string(lengthBytes: 2)
            if key.isEmpty, bytes.indices.contains(offset), bytes[offset] == 0x09 {
                offset += 1
                return properties
            }
            properties[key] = try value(depth: depth + 1)
        }
    }

    private mutating func value(depth: Int) throws(RTMPPublishInspector.Malformed) -> Value {
        guard depth < 16 else { throw RTMPPublishInspector.Malformed(reason: "AMF0 values nested too deep") }
        let marker = try take(1).first!
        switch marker {
        case 0x00:
            return .number(Double(bitPattern: try take(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }))
        case 0x01:
            return .boolean(try take(1).first! != 0)
        case 0x02:
            return .string(try string(lengthBytes: 2))
        case 0x03:
            return .object(try properties(depth: depth))
        case 0x05, 0x06:
            return .null
        case 0x08:
            _ = try take(4)  // the ECMA array's count, which writers do not always fill in
            return .object(try properties(depth: depth))
        case 0x0A:
            for _ in 0..<(try unsigned(4)) { _ = try value(depth: depth + 1) }
            return .other
        case 0x0B:
            _ = try take(10)
            return .other
        case 0x0C:
            _ = try string(lengthBytes: 4)
            return .other
        default:
            throw RTMPPublishInspector.Malformed(reason: "an AMF0 value of unknown type \(marker)")
        }
    }
}
