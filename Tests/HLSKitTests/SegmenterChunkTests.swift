import Testing
@testable import HLSKit

/// Parts handed out in chunks (`chunksParts`): a chunk per frame once its duration is known, before the
/// part, and together exactly the part's samples, so that a server can send a part as it is made.
@Suite struct SegmenterChunkTests {
    static let video = Segmenter.Track(timescale: 90_000, isVideo: true)
    static let audio = Segmenter.Track(timescale: 48_000, isVideo: false)

    /// Every piece handed out for `frames` frames of 30 fps video (an IDR every 2 s) and 48 kHz AAC,
    /// appended in time order with audio a little ahead, as an encoder's output comes; with the number of
    /// video frames appended when each piece was taken.
    static func pieces(frames: Int, tracks: [Segmenter.Track] = [video, audio], partMilliseconds: Int64 = 334,
                       chunks: Bool = true) -> [(piece: Segmenter.PartPiece, videoFramesIn: Int)] {
        var configuration = Segmenter.Configuration(tracks: tracks, partMilliseconds: partMilliseconds)
        configuration.chunksParts = chunks
        var segmenter = Segmenter(configuration: configuration)
        var pieces: [(piece: Segmenter.PartPiece, videoFramesIn: Int)] = []
        var audioIndex = 0
        for frame in 0..<frames {
            while tracks.count > 1, Int64(audioIndex) * 1024 * 90_000 <= Int64(frame + 2) * 3000 * 48_000 {
                _ = segmenter.append(EncodedSample(track: 1, decodeTime: Int64(audioIndex) * 1024, durationHint: 1024,
                                                   isSync: true, data: [0xA0, UInt8(audioIndex & 0xFF)]))
                pieces += segmenter.takePieces().map { ($0, frame) }
                audioIndex += 1
            }
            _ = segmenter.append(EncodedSample(track: 0, decodeTime: Int64(frame) * 3000, durationHint: 3000,
                                               isSync: frame % 60 == 0, data: [UInt8(frame & 0xFF)]))
            pieces += segmenter.takePieces().map { ($0, frame + 1) }
        }
        _ = segmenter.finish()
        return pieces + segmenter.takePieces().map { ($0, frames) }
    }

    static func samples(_ pieces: [Segment], track: UInt32) -> [TimedSample] {
        pieces.flatMap { piece in piece.tracks.filter { $0.trackID == track }.flatMap(\.samples) }
    }

    @Test func aPartIsTheChunksHandedOutBeforeIt() {
        let pieces = Self.pieces(frames: 200).map(\.piece)
        var open: [Segment] = []
        var partCount = 0
        for piece in pieces {
            switch piece {
            case .chunk(let chunk):
                open.append(chunk)
            case .part(let part):
                partCount += 1
                #expect(part.chunks == open, "part \(part.partIndex ?? -1) of segment \(part.sequenceNumber)")
                #expect(open.allSatisfy { $0.partIndex == part.partIndex && $0.sequenceNumber == part.sequenceNumber })
                for track: UInt32 in [1, 2] {
                    #expect(Self.samples(open, track: track) == Self.samples([part], track: track),
                            "track \(track) of part \(part.partIndex ?? -1), segment \(part.sequenceNumber)")
                }
                open = []
            }
        }
        #expect(open.isEmpty, "every chunk belongs to a part handed out after it")
        #expect(partCount >= 20)
    }

    @Test func chunksChangeNoPartAndAreNumberedOnThroughTheirSegment() {
        let chunked = Self.pieces(frames: 200).map(\.piece)
        let plain = Self.pieces(frames: 200, chunks: false).map(\.piece)
        let parts = chunked.compactMap { piece -> Segment? in
            guard case .part(var part) = piece else { return nil }
            part.chunks = []
            return part
        }
        #expect(parts == plain.compactMap { piece -> Segment? in
            guard case .part(let part) = piece else { return nil }
            return part
        })
        #expect(plain.allSatisfy { if case .part = $0 { true } else { false } }, "no chunks unless asked for")
        let chunks = chunked.compactMap { piece -> Segment? in
            guard case .chunk(let chunk) = piece else { return nil }
            return chunk
        }
        for sequenceNumber in Set(chunks.map(\.sequenceNumber)) {
            let own = chunks.filter { $0.sequenceNumber == sequenceNumber }
            #expect(own.map(\.chunkIndex) == own.indices.map { $0 }, "segment \(sequenceNumber)")
        }
    }

    /// A frame goes out as soon as the next one gives it its duration: one frame after it was appended.
    @Test func aFrameIsHandedOutWhenTheNextArrives() {
        var framesHanded = 0
        for (piece, framesIn) in Self.pieces(frames: 200) {
            guard case .chunk(let chunk) = piece, let video = chunk.tracks.first(where: { $0.trackID == 1 }) else {
                continue
            }
            #expect(video.samples.count == 1)
            framesHanded += 1
            let frame = Int(video.samples[0].decodeTime - video.samples[0].decodeTime % 3000)
            // Frame n (from 10 s, the start offset) went in as the (n+1)th and comes out with the (n+2)th;
            // the last, at the end.
            let index = (frame - 10 * 90_000) / 3000
            #expect(framesIn == min(index + 2, 200), "frame \(index)")
        }
        #expect(framesHanded == 200)
    }

    /// A ladder's other rungs are cut at their own IDRs: their samples wait for their part's last chunk.
    @Test func anotherVideoTrackComesWithItsPartsLastChunk() {
        var configuration = Segmenter.Configuration(tracks: [Self.video, Self.video], partMilliseconds: 200)
        configuration.chunksParts = true
        var segmenter = Segmenter(configuration: configuration)
        var pieces: [Segmenter.PartPiece] = []
        for index in 0..<300 {
            let frame = Int64(index / 2)
            _ = segmenter.append(EncodedSample(track: index % 2, decodeTime: frame * 3000, durationHint: 3000,
                                               isSync: frame % 60 == 0, data: [UInt8(index % 2)]))
            pieces += segmenter.takePieces()
        }
        _ = segmenter.finish()
        pieces += segmenter.takePieces()
        let parts = pieces.compactMap { piece -> Segment? in
            guard case .part(let part) = piece else { return nil }
            return part
        }
        #expect(parts.count >= 10)
        for part in parts {
            #expect(part.chunks.dropLast().allSatisfy { $0.tracks.map(\.trackID) == [1] })
            #expect(Self.samples(part.chunks, track: 2) == Self.samples([part], track: 2))
        }
    }
}
