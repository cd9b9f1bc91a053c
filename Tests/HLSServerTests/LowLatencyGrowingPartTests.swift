import Dispatch
import Foundation
import HLSKit
import Testing
@testable import HLSServer

/// A part asked for before it is whole (the preload hint's) is answered at its first chunk, with a body
/// that grows chunk by chunk and ends when the part is whole, or is cut when it never will be.
@Suite struct LowLatencyGrowingPartTests {
    static let first = LowLatencyPlaylist.Position(sequenceNumber: 1, part: 0)
    static let second = LowLatencyPlaylist.Position(sequenceNumber: 1, part: 1)

    static func growing(_ response: HTTPResponse?) -> GrowingBody? {
        guard case .growing(let body)? = response?.body else { return nil }
        return body
    }

    static func bytes(of body: GrowingBody) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: body.count)
        let read = buffer.withUnsafeMutableBytes { body.read(from: 0, into: $0) }
        return read == .bytes(buffer.count) ? buffer : []
    }

    @Test func theHintedPartIsAnsweredAtItsFirstChunkAndEndsWhole() throws {
        let stream = StreamServerTests.stream()
        let reply = stream.partReply(rendition: 0, position: Self.first)
        guard case .later = reply else {
            Issue.record("the part has no chunk yet: the request must wait")
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) {
            stream.addChunk(rendition: 0, position: Self.first, bytes: [1, 2, 3])
        }
        let response = StreamServerTests.answer(reply)
        #expect(response?.status == 200)
        #expect(response?.header("Content-Type") == StreamFileKind.segmentContentType)
        let body = try #require(Self.growing(response), "answered with the part's bytes so far, still growing")
        #expect(Self.bytes(of: body) == [1, 2, 3] && !body.isFinished)

        // A request that comes later reads the same body from its start.
        let later = StreamServerTests.answer(stream.partReply(rendition: 0, position: Self.first))
        #expect(Self.growing(later) === body)
        stream.addChunk(rendition: 0, position: Self.first, bytes: [4, 5])
        #expect(Self.bytes(of: body) == [1, 2, 3, 4, 5] && !body.isFinished)
        stream.addPart(rendition: 0, position: Self.first, durationSeconds: 0.2, independent: true,
                       bytes: [1, 2, 3, 4, 5])
        #expect(body.isFinished)
        #expect(body.read(from: 5, into: UnsafeMutableRawBufferPointer(start: nil, count: 0)) == .finished)
        // Once whole, the part is served from its bytes.
        let whole = StreamServerTests.answer(stream.partReply(rendition: 0, position: Self.first))
        #expect(whole?.body == .bytes([1, 2, 3, 4, 5]))
    }

    @Test func aPartThatIsNotItsChunksIsCutNotEnded() throws {
        let stream = StreamServerTests.stream()
        stream.addChunk(rendition: 0, position: Self.first, bytes: [1, 2, 3])
        let body = try #require(Self.growing(StreamServerTests.answer(stream.partReply(rendition: 0, position: Self.first))))
        stream.addPart(rendition: 0, position: Self.first, durationSeconds: 0.2, independent: true, bytes: [9, 9, 9, 9])
        #expect(!body.isFinished)
        #expect(body.read(from: 3, into: UnsafeMutableRawBufferPointer(start: nil, count: 0)) == .abandoned)
    }

    @Test func aPartLeftGrowingIsCutByTheNextPartOrTheEnd() throws {
        let stream = StreamServerTests.stream()
        stream.addChunk(rendition: 0, position: Self.first, bytes: [1])
        let left = try #require(Self.growing(StreamServerTests.answer(stream.partReply(rendition: 0, position: Self.first))))
        stream.addChunk(rendition: 0, position: Self.second, bytes: [2])
        #expect(left.read(from: 1, into: UnsafeMutableRawBufferPointer(start: nil, count: 0)) == .abandoned)

        let open = try #require(Self.growing(StreamServerTests.answer(stream.partReply(rendition: 0, position: Self.second))))
        var ended = MediaPlaylist(targetDurationSeconds: 2, mediaSequence: 1)
        ended.endList = true
        stream.update(rendition: 0, base: ended)
        #expect(open.read(from: 1, into: UnsafeMutableRawBufferPointer(start: nil, count: 0)) == .abandoned)
        // Chunks after the end are dropped: nothing grows again.
        stream.addChunk(rendition: 0, position: .init(sequenceNumber: 1, part: 2), bytes: [3])
        let after = StreamServerTests.answer(stream.partReply(rendition: 0, position: .init(sequenceNumber: 1, part: 2)))
        #expect(after?.status == 404)
    }
}
