import Testing
@testable import HLSKit

/// Parts (LL-HLS): cut as samples arrive, never longer than the part duration, handed out before the
/// segment that lists them all, and holding exactly the segment's samples.
@Suite struct SegmenterPartTests {
    static let video = Segmenter.Track(timescale: 90_000, isVideo: true)
    static let audio = Segmenter.Track(timescale: 48_000, isVideo: false)

    /// The parts of 30 fps video with an IDR every 2 s and 48 kHz AAC, interleaved by time, cut at
    /// 334 ms at most; grouped by segment.
    static func parts(frames: Int = 150) -> [[Segment]] {
        let parts = cutParts(frames: frames, audioFrames: frames * 1600 / 1024)
        return Dictionary(grouping: parts, by: \.sequenceNumber).sorted { $0.key < $1.key }.map(\.value)
    }

    /// Every part handed out for `frames` video frames from `videoStart` (90 kHz) and `audioFrames` AAC
    /// frames from 0, appended in time order.
    static func cutParts(frames: Int, videoStart: Int64 = 0, audioFrames: Int,
                         configuration: Segmenter.Configuration = .init(tracks: [video, audio], partMilliseconds: 334))
        -> [Segment] {
        var segmenter = Segmenter(configuration: configuration)
        var samples: [EncodedSample] = (0..<frames).map { index in
            EncodedSample(track: 0, decodeTime: videoStart + Int64(index) * 3000, durationHint: 3000,
                          isSync: index % 60 == 0, data: [UInt8(index & 0xFF)])
        }
        samples += (0..<audioFrames).map { index in
            EncodedSample(track: 1, decodeTime: Int64(index) * 1024, durationHint: 1024, isSync: true, data: [0xA0])
        }
        samples.sort { lhs, rhs in
            lhs.decodeTime * (rhs.track == 0 ? 90_000 : 48_000) < rhs.decodeTime * (lhs.track == 0 ? 90_000 : 48_000)
        }
        var parts: [Segment] = []
        for sample in samples {
            _ = segmenter.append(sample)
            parts += segmenter.takeParts()
        }
        _ = segmenter.finish()
        return parts + segmenter.takeParts()
    }

    @Test func partsAreTenFramesAndStartsOfSegmentsAreIndependent() {
        let parts = Self.parts()
        #expect(parts.count >= 2)
        for segmentParts in parts.dropLast() {
            #expect(segmentParts.count == 6, "\(segmentParts.map(\.durationTicks))")
            #expect(segmentParts.map(\.partIndex) == Array(0..<6))
            #expect(segmentParts.dropLast().allSatisfy { $0.durationTicks == 30_000 })
            #expect(segmentParts[0].isIndependent)
            #expect(segmentParts.dropFirst().allSatisfy { !$0.isIndependent })
        }
        #expect(parts.joined().allSatisfy { $0.durationTicks <= 334 * 90 })
    }

    /// Audio that starts before the first video frame (as captured audio often does) would give the first
    /// audio parts a frame more than the part duration holds; the audio's pieces stay within
    /// `longestPartSeconds`, which an audio rendition of its own declares as its PART-TARGET.
    @Test func audioPiecesNeverOutlastTheLongestPartEvenWhenAudioStartsFirst() throws {
        let configuration = Segmenter.Configuration(tracks: [Self.video, Self.audio], partMilliseconds: 334)
        // Video one AAC frame later than the audio, audio until the video's end (6.688 s).
        let parts = Self.cutParts(frames: 200, videoStart: 1024 * 90_000 / 48_000, audioFrames: 313,
                                  configuration: configuration)

        let longest = try #require(configuration.longestPartSeconds(track: 1, sampleTicks: 1024))
        #expect(abs(longest - 16.0 * 1024 / 48_000) < 1e-9, "16 AAC frames fill 334 ms")
        #expect(configuration.longestPartSeconds(track: 0, sampleTicks: 0) == 0.334)
        let audioPieces = parts.compactMap { part in part.tracks.first { $0.trackID == 2 } }
        #expect(audioPieces.count == 20)
        let ticks = audioPieces.map { $0.samples.reduce(0) { $0 + Int($1.durationTicks) } }
        #expect(ticks.allSatisfy { Double($0) / 48_000 <= longest }, "\(ticks.map { $0 / 1024 })")
    }

    @Test func theLastPartOfEverySegmentAndOnlyItEndsTheSegment() {
        for segmentParts in Self.parts() {
            #expect(segmentParts.map(\.endsSegment) == segmentParts.indices.map { $0 == segmentParts.count - 1 },
                    "segment \(segmentParts[0].sequenceNumber)")
        }
    }

    @Test func everySegmentListsExactlyThePartsHandedOutBeforeIt() {
        var segmenter = Segmenter(configuration: .init(tracks: [Self.video, Self.audio], partMilliseconds: 334))
        var handed: [Segment] = []
        var segments: [Segment] = []
        var frame = 0
        var audioIndex = 0
        while frame < 200 {
            // Audio runs a little ahead of video, as an encoder's output does.
            while Int64(audioIndex) * 1024 * 90_000 <= Int64(frame + 2) * 3000 * 48_000 {
                segments += segmenter.append(EncodedSample(track: 1, decodeTime: Int64(audioIndex) * 1024,
                                                           durationHint: 1024, isSync: true, data: [0xA0]))
                handed += segmenter.takeParts()
                audioIndex += 1
            }
            let made = segmenter.append(EncodedSample(track: 0, decodeTime: Int64(frame) * 3000, durationHint: 3000,
                                                      isSync: frame % 60 == 0, data: [UInt8(frame & 0xFF)]))
            let taken = segmenter.takeParts()
            handed += taken
            for segment in made {
                // Each part came out before its segment, the last (which ends it) with it.
                #expect(segment.parts.allSatisfy { part in handed.contains(part) })
                #expect(segment.parts.last.map { taken.contains($0) && $0.endsSegment } == true)
            }
            segments += made
            frame += 1
        }
        segments += segmenter.finish()
        handed += segmenter.takeParts()
        #expect(segments.count == 4)
        for segment in segments {
            #expect(segment.parts == handed.filter { $0.sequenceNumber == segment.sequenceNumber })
            for track in segment.tracks {
                let fromParts = segment.parts.flatMap { part in
                    part.tracks.filter { $0.trackID == track.trackID }.flatMap(\.samples)
                }
                #expect(fromParts == track.samples, "track \(track.trackID) of segment \(segment.sequenceNumber)")
            }
        }
    }

    /// A ladder (a second rung with IDRs on the same grid) and audio in 4 s segments of 200 ms parts:
    /// every other track's samples go to the part during which they start, however long the segment.
    @Test func everyTrackIsSplitWhereTheLeadTracksPartsEnd() {
        let scales: [Int64] = [90_000, 90_000, 48_000]
        var segmenter = Segmenter(configuration: .init(tracks: [Self.video, Self.video, Self.audio],
                                                       segmentMilliseconds: 4000, partMilliseconds: 200))
        var samples: [EncodedSample] = (0..<600).map { index in
            let frame = Int64(index / 2)
            return EncodedSample(track: index % 2, decodeTime: frame * 3000, durationHint: 3000, isSync: frame % 120 == 0,
                                 data: [UInt8(index % 2), UInt8(frame & 0xFF)])
        }
        samples += (0..<(300 * 1600 / 1024)).map { (index: Int) -> EncodedSample in
            EncodedSample(track: 2, decodeTime: Int64(index) * 1024, durationHint: 1024, isSync: true, data: [0xA0])
        }
        samples.sort { (lhs: EncodedSample, rhs: EncodedSample) -> Bool in
            lhs.decodeTime * scales[rhs.track] < rhs.decodeTime * scales[lhs.track]
        }
        var segments: [Segment] = []
        for sample in samples { segments += segmenter.append(sample) }
        segments += segmenter.finish()
        #expect(segments.count == 3)
        for segment in segments {
            for track in segment.tracks {
                let fromParts = segment.parts.flatMap { part in
                    part.tracks.filter { $0.trackID == track.trackID }.flatMap(\.samples)
                }
                #expect(fromParts == track.samples, "track \(track.trackID) of segment \(segment.sequenceNumber)")
            }
            for (part, next) in zip(segment.parts, segment.parts.dropFirst()) {
                let end = next.tracks[0].samples[0].decodeTime
                let startsBeforeEnd = { (track: FragmentTrack, sample: TimedSample) in
                    sample.decodeTime * 90_000 < end * scales[Int(track.trackID) - 1]
                }
                for track in part.tracks.dropFirst() {
                    #expect(track.samples.allSatisfy { startsBeforeEnd(track, $0) }, "part \(part.partIndex ?? -1)")
                }
                for track in next.tracks.dropFirst() {
                    #expect(!startsBeforeEnd(track, track.samples[0]), "part \(next.partIndex ?? -1)")
                }
            }
        }
    }

    @Test func withoutAPartDurationNoPartsAreCut() {
        var segmenter = Segmenter(configuration: .init(tracks: [Self.video]))
        var segments: [Segment] = []
        for index in 0..<130 {
            segments += segmenter.append(EncodedSample(track: 0, decodeTime: Int64(index) * 3000, durationHint: 3000,
                                                       isSync: index % 60 == 0, data: [1]))
            #expect(segmenter.takeParts().isEmpty)
        }
        segments += segmenter.finish()
        #expect(segments.count == 3 && segments.allSatisfy(\.parts.isEmpty))
    }
}
