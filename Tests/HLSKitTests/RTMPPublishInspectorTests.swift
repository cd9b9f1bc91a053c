import Foundation
import Testing
@testable import HLSKit

/// The stream key of an RTMP publisher, read from what it sends.
@Suite struct RTMPPublishInspectorTests {
    /// AMF0: a string, a number, null, an object of strings.
    private static func string(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        return [0x02, UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
    }
    private static func number(_ value: Double) -> [UInt8] {
        [0x00] + withUnsafeBytes(of: value.bitPattern.bigEndian) { Array($0) }
    }
    private static func object(_ properties: [(String, [UInt8])]) -> [UInt8] {
        var bytes: [UInt8] = [0x03]
        for (key, value) in properties {
            let name = Array(key.utf8)
            bytes += [UInt8(name.count >> 8), UInt8(name.count & 0xFF)] + name + value
        }
        return bytes + [0x00, 0x00, 0x09]
    }

    /// A message as chunks of `chunkSize` on chunk stream `id`: a type-0 header, then type-3 ones.
    private static func chunks(_ message: [UInt8], type: UInt8, id: UInt8 = 3, chunkSize: Int) -> [UInt8] {
        let length = message.count
        var bytes: [UInt8] = [id, 0, 0, 0, UInt8(length >> 16), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, 0, 0, 0, 0]
        var offset = 0
        while offset < length {
            if offset > 0 { bytes.append(0xC0 | id) }
            let end = min(length, offset + chunkSize)
            bytes += message[offset..<end]
            offset = end
        }
        return bytes
    }

    private static func publisher(app: String, key: String) -> [UInt8] {
        var bytes: [UInt8] = [3] + Array(repeating: 0x11, count: 1536) + Array(repeating: 0x22, count: 1536)
        // Set Chunk Size 4096, then connect (longer than 128 bytes, so in several chunks at the default size
        // if it came first), createStream and publish at the new size.
        bytes += chunks([0, 0, 0x10, 0], type: 1, id: 2, chunkSize: 128)
        let connect = string("connect") + number(1) + object([("app", string(app)), ("type", string("nonprivate")),
                                                             ("flashVer", string(String(repeating: "F", count: 200))),
                                                             ("tcUrl", string("rtmp://127.0.0.1:1935/\(app)"))])
        bytes += chunks(connect, type: 20, chunkSize: 4096)
        bytes += chunks(string("createStream") + number(2) + [0x05], type: 20, chunkSize: 4096)
        bytes += chunks(string("publish") + number(3) + [0x05] + string(key) + string("live"), type: 20, id: 8, chunkSize: 4096)
        return bytes
    }

    @Test func thePublishCommandNamesTheAppAndTheStreamKey() throws {
        let bytes = Self.publisher(app: "live", key: "s3cret")
        // Fed a few bytes at a time, as a socket delivers them: the finding comes with the last byte.
        var inspector = RTMPPublishInspector()
        var findings: [RTMPPublishInspector.Finding] = []
        for start in stride(from: 0, to: bytes.count, by: 97) {
            if let finding = try inspector.feed(bytes[start..<min(bytes.count, start + 97)]) { findings.append(finding) }
        }
        #expect(findings == [.publish(app: "live", streamName: "s3cret")])
    }

    @Test func commandsSplitIntoDefaultSizeChunksAreJoined() throws {
        var bytes: [UInt8] = [3] + Array(repeating: 0, count: 3072)
        let connect = Self.string("connect") + Self.number(1) + Self.object([("app", Self.string("cams")),
                                                             ("flashVer", Self.string(String(repeating: "x", count: 300)))])
        bytes += Self.chunks(connect, type: 20, chunkSize: 128)
        bytes += Self.chunks(Self.string("publish") + Self.number(2) + [0x05] + Self.string("door") + Self.string("live"), type: 20, chunkSize: 128)
        var inspector = RTMPPublishInspector()
        #expect(try inspector.feed(bytes) == .publish(app: "cams", streamName: "door"))
    }

    @Test func whatIsNotAnRTMPPublisherIsMalformed() {
        var http = RTMPPublishInspector()
        #expect(throws: RTMPPublishInspector.Malformed.self) { try http.feed(Array("GET / HTTP/1.1\r\n".utf8)) }
        var huge = RTMPPublishInspector()
        let header: [UInt8] = [3, 0, 0, 0, 0x10, 0, 0, 20, 0, 0, 0, 0]
        #expect(throws: RTMPPublishInspector.Malformed.self) { try huge.feed([3] + Array(repeating: 0, count: 3072) + header) }
    }

    /// A message header in the middle of a message on the same chunk stream, here shorter than what
    /// already came, is malformed; the inspector took it for a negative number of bytes still to read
    /// and trapped (found by fuzz-rtmp-publish).
    @Test func aNewMessageBeforeTheLastOneIsWholeIsMalformed() {
        var inspector = RTMPPublishInspector()
        let handshake: [UInt8] = [3] + Array(repeating: 0, count: 3072)
        // 300 bytes announced, the first 128 sent, then a type-1 header saying 50.
        let first: [UInt8] = [3, 0, 0, 0, 0, 0x01, 0x2C, 20, 0, 0, 0, 0] + Array(repeating: 0x05, count: 128)
        let second: [UInt8] = [0x43, 0, 0, 0, 0, 0, 50, 20] + Array(repeating: 0x05, count: 50)
        #expect(throws: RTMPPublishInspector.Malformed(reason: "a new message on chunk stream 3 before its last one was whole")) {
            try inspector.feed(handshake + first + second)
        }
    }
}
