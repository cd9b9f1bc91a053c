import Foundation
import Glibc
import Testing
@testable import HLSKit
@testable import HLSOutput

@Suite struct StreamWriterTests {
    func audioTrack(sampleRate: Int = 48_000) -> TrackDescription {
        TrackDescription(trackID: 1, timescale: Timescale(sampleRate),
                         format: .aac(AACFormat(audioSpecificConfig: AudioSpecificConfig(sampleRate: sampleRate,
                                                                                          channelCount: 2))))
    }

    /// A 2 s audio-only segment (94 AAC frames of 1024 samples, a little over 2 s).
    func segment(_ number: Int, sampleBytes: Int = 2) -> Segment {
        let samples = (0..<94).map { index in
            TimedSample(decodeTime: Int64(index) * 1024, durationTicks: 1024, compositionOffset: 0, isSync: true,
                        data: [0x21, UInt8(index)] + [UInt8](repeating: 0x55, count: sampleBytes - 2))
        }
        return Segment(sequenceNumber: number,
                       tracks: [FragmentTrack(trackID: 1, baseDecodeTime: UInt64(number) * 96_256, samples: samples)],
                       startTicks: Int64(number) * 96_256, durationTicks: 96_256, timescale: 48_000)
    }

    func temporaryStore() throws -> MemoryStore {
        MemoryStore()
    }

    /// A live writer of one audio rendition that has begun its first section.
    func liveWriter(_ store: any StreamStore, tracks: [TrackDescription]? = nil, layout: StreamLayout? = nil,
                    targetDurationSeconds: Int = 2, windowSize: Int) throws -> StreamWriter {
        let tracks = tracks ?? [audioTrack()]
        var writer = StreamWriter(store: store, layout: layout ?? .single(trackCount: tracks.count),
                                  policy: .live(targetDurationSeconds: targetDurationSeconds, windowSize: windowSize))
        try writer.beginSection(tracks: tracks)
        return writer
    }

    func resumedWriter(_ store: any StreamStore, tracks: [TrackDescription], targetDurationSeconds: Int = 2,
                       windowSize: Int) throws -> StreamWriter {
        try StreamWriter(resuming: store, layout: .single(trackCount: tracks.count), tracks: tracks,
                         policy: .live(targetDurationSeconds: targetDurationSeconds, windowSize: windowSize), now: Date())
    }

    @Test func writesSegmentsBeforeTheRollingPlaylist() throws {
        let store = try temporaryStore()
        var writer = try liveWriter(store, windowSize: 2)
        var removals: [LivePlaylist.Removal] = []
        for number in 1...3 { removals += try writer.write(segment(number), programDateTime: nil).removals }
        let playlist = try MediaPlaylist.parse(String(decoding: try store.read("playlist.m3u8"), as: UTF8.self))
        #expect(playlist.segments.map(\.uri) == ["seg/000002.m4s", "seg/000003.m4s"])
        #expect(playlist.mediaSequence == 2)
        #expect(!playlist.endList)
        #expect(removals.map(\.uri) == ["seg/000001.m4s"])
        #expect(try store.exists("seg/000001.m4s"), "a removed segment stays until its retention time")
        try writer.finish()
        #expect(try MediaPlaylist.parse(String(decoding: try store.read("playlist.m3u8"), as: UTF8.self)).endList)
    }

    /// A copied camera's rate is a guess until measured: the master declares the first segment's, and is
    /// declared again once the average over the stream is more than a tenth off it, as Apple's authoring
    /// rule asks of AVERAGE-BANDWIDTH (a camera's first segment, its keyframe and the scene settling, is
    /// often the largest).
    @Test func aGuessedRateIsDeclaredAgainOnceTheAverageSettlesAwayFromIt() throws {
        let store = try temporaryStore()
        var guess = RenditionMeasure(tracks: [audioTrack()], peakBitrate: 1_000_000, averageBitrate: 1_000_000,
                                     framesPerSecond: nil, iFramePeakBitrate: 0, iFrameAverageBitrate: 0)
        guess.isEstimate = true
        var writer = StreamWriter(store: store, layout: .single(trackCount: 1),
                                  policy: .live(targetDurationSeconds: 2, windowSize: 0), declared: [guess])
        try writer.beginSection(tracks: [audioTrack()])
        func declaredAverage() throws -> Int {
            let master = String(decoding: try store.read("master.m3u8"), as: UTF8.self)
            let match = try #require(master.firstMatch(of: /AVERAGE-BANDWIDTH=(\d+)/))
            return try #require(Int(match.1))
        }
        var declarations: [Int] = []
        for number in 1...12 {
            let written = try writer.write(segment(number, sampleBytes: number == 1 ? 1200 : 700))
            if written.wroteMaster { declarations.append(try declaredAverage()) }
        }
        let measured = Double(1200 + 11 * 700) * 94 * 8 / (Double(12 * 96_256) / 48_000)
        #expect(declarations.count >= 2 && declarations.count <= 5, "\(declarations)")
        #expect(abs(Double(try declaredAverage()) - measured) <= measured / 10, "declared \(declarations), measured \(measured)")
        // The first declaration was the first segment's.
        let first = Double(1200 * 94 * 8) / (96_256.0 / 48_000)
        #expect(abs(Double(declarations[0]) - first) < first / 50, "\(declarations)")
    }

    /// A segment after a device came back follows EXT-X-DISCONTINUITY with the same init section, and the
    /// discontinuity sequence counts it once it leaves the window.
    @Test func aSegmentThatFollowsADiscontinuityIsListedAfterTheTag() throws {
        let store = try temporaryStore()
        var writer = try liveWriter(store, targetDurationSeconds: 3, windowSize: 2)
        func playlist() throws -> MediaPlaylist {
            try MediaPlaylist.parse(String(decoding: try store.read("playlist.m3u8"), as: UTF8.self))
        }
        for number in 1...2 {
            var next = segment(number)
            next.followsDiscontinuity = number == 2
            _ = try writer.write(next, programDateTime: nil)
        }
        #expect(try playlist().segments.map(\.discontinuity) == [false, true])
        #expect(try playlist().segments.map(\.mapURI) == ["init.mp4", "init.mp4"])
        for number in 3...4 { _ = try writer.write(segment(number), programDateTime: nil) }
        #expect(try playlist().segments.map(\.discontinuity) == [false, false])
        #expect(try playlist().discontinuitySequence == 1)
    }

    /// Two audio renditions cut into parts (LL-HLS), 5 s of them, as the engine hands them over: each call's
    /// parts, then its segments.
    func partedSegments() -> [(parts: [Segment], segments: [Segment])] {
        let rates: [Int64] = [48_000, 44_100]
        var segmenter = Segmenter(configuration: .init(
            tracks: rates.map { Segmenter.Track(timescale: Timescale($0), isVideo: false) }, partMilliseconds: 334))
        var samples = rates.indices.flatMap { track in
            (0..<(5 * rates[track] / 1024)).map { index in
                EncodedSample(track: track, decodeTime: index * 1024, durationHint: 1024, isSync: true,
                              data: [UInt8(track), UInt8(index & 0xFF)])
            }
        }
        samples.sort { $0.decodeTime * rates[$1.track] < $1.decodeTime * rates[$0.track] }
        var calls = samples.map { sample in
            let segments = segmenter.append(sample)
            return (parts: segmenter.takeParts(), segments: segments)
        }
        let last = segmenter.finish()
        calls.append((parts: segmenter.takeParts(), segments: last))
        return calls
    }

    @Test func aSegmentFileIsThePartsRenderedBeforeIt() throws {
        let tracks = [audioTrack(), audioTrack(sampleRate: 44_100)]
        let layout = StreamLayout.make(tracks: tracks, videoNames: nil)
        let served = try temporaryStore()
        let plain = try temporaryStore()
        var serving = try liveWriter(served, tracks: tracks, layout: layout, windowSize: 0)
        // Nothing renders this one's parts (LL-HLS without a server): it makes their fragments itself.
        var writing = try liveWriter(plain, tracks: tracks, layout: layout, windowSize: 0)
        var pieces: [StreamWriter.RenditionPart] = []
        var numbers: [Int] = []
        for call in partedSegments() {
            pieces += call.parts.flatMap { serving.render(part: $0) }
            for segment in call.segments {
                _ = try serving.write(segment, programDateTime: nil)
                _ = try writing.write(segment, programDateTime: nil)
                numbers.append(segment.sequenceNumber)
            }
        }
        #expect(numbers == [1, 2, 3])
        for (index, rendition) in layout.renditions.enumerated() {
            for number in numbers {
                let path = rendition.path(StreamLayout.segmentPath(number))
                let own = pieces.filter { $0.rendition == index && $0.sequenceNumber == number }
                #expect(try served.read(path) == own.flatMap(\.bytes), "\(path)")
                // Only the pieces of the segment's last part end it; a rendition may have none in that part.
                let lastPart = pieces.filter { $0.sequenceNumber == number }.map(\.partIndex).max()
                #expect(own.map(\.endsSegment) == own.map { $0.partIndex == lastPart }, "\(path)")
                #expect(try served.read(path) == plain.read(path), "\(path)")
            }
        }
    }

    @Test func resumingContinuesNumberingPastUnlistedSegmentsAfterADiscontinuity() throws {
        let store = try temporaryStore()
        var first = try liveWriter(store, windowSize: 0)
        for number in 1...2 { _ = try first.write(segment(number), programDateTime: nil) }
        // A crash after segment 3 was stored but before the playlist listed it.
        try store.write([0], to: "seg/000003.m4s")

        var resumed = try resumedWriter(store, tracks: [audioTrack()], windowSize: 0)
        #expect(resumed.nextSequenceNumber == 4)
        #expect(resumed.initName == "init.mp4", "same tracks keep the init section")
        try resumed.beginSection(tracks: [audioTrack()])
        _ = try resumed.write(segment(4), programDateTime: nil)
        let text = String(decoding: try store.read("playlist.m3u8"), as: UTF8.self)
        #expect(text.contains("seg/000002.m4s\n#EXT-X-DISCONTINUITY\n#EXTINF:2.005,\nseg/000004.m4s\n"))
    }

    @Test func resumingWithOtherTracksStartsANewInitSection() throws {
        let store = try temporaryStore()
        var first = try liveWriter(store, windowSize: 0)
        _ = try first.write(segment(1), programDateTime: nil)

        var resumed = try resumedWriter(store, tracks: [audioTrack(sampleRate: 44_100)], windowSize: 0)
        #expect(resumed.initName == "init-2.mp4")
        try resumed.beginSection(tracks: [audioTrack(sampleRate: 44_100)])
        _ = try resumed.write(segment(2), programDateTime: nil)
        let playlist = try MediaPlaylist.parse(String(decoding: try store.read("playlist.m3u8"), as: UTF8.self))
        #expect(playlist.segments.map(\.mapURI) == ["init.mp4", "init-2.mp4"])
        #expect(playlist.segments.map(\.discontinuity) == [false, true])
        #expect(try store.read("init.mp4") != store.read("init-2.mp4"))
    }

    @Test func resumingDeletesWhatNoPlaylistListsAndNeverReusesAnInitName() throws {
        let store = try temporaryStore()
        // A window of 2 over 4 segments (1 and 2 left it), then a run with other tracks (init-2), stopped.
        var first = try liveWriter(store, windowSize: 2)
        for number in 1...4 { _ = try first.write(segment(number), programDateTime: nil) }
        var second = try resumedWriter(store, tracks: [audioTrack(sampleRate: 44_100)], windowSize: 2)
        try second.beginSection(tracks: [audioTrack(sampleRate: 44_100)])
        for number in 5...6 { _ = try second.write(segment(number), programDateTime: nil) }
        try second.finish()
        #expect(try store.list("seg") == ["000003.m4s", "000004.m4s", "000005.m4s", "000006.m4s"],
                "the second run deleted 1 and 2; 3 and 4 left its window and wait for their retention")

        let third = try resumedWriter(store, tracks: [audioTrack(sampleRate: 32_000)], windowSize: 2)
        #expect(try store.list("seg") == ["000005.m4s", "000006.m4s"])
        #expect(try store.list("") == ["init-2.mp4", "playlist.m3u8", "seg"], "init.mp4 is no longer listed")
        #expect(third.initName == "init-3.mp4")
        #expect(third.nextSequenceNumber == 7)
    }

    @Test func resumingRefusesALongerTargetDurationAndUnreadablePlaylists() throws {
        let store = try temporaryStore()
        var first = try liveWriter(store, windowSize: 0)
        _ = try first.write(segment(1), programDateTime: nil)
        #expect(throws: StreamWriter.ResumeError.self) {
            try resumedWriter(store, tracks: [audioTrack()], targetDurationSeconds: 4, windowSize: 0)
        }
        try store.write(Array("not a playlist".utf8), to: "playlist.m3u8")
        #expect(throws: StreamWriter.ResumeError.self) {
            try resumedWriter(store, tracks: [audioTrack()], windowSize: 0)
        }
    }

    // MARK: Recordings (the VOD policy)

    /// Two audio renditions (`audio/1`, `audio/2`) written as a recording of `sections` joined inputs,
    /// two segments each.
    func recording(_ store: any StreamStore, sections: [[TrackDescription]]) throws -> StreamWriter {
        let layout = StreamLayout.make(tracks: sections[0], videoNames: nil)
        var writer = StreamWriter(store: store, layout: layout, policy: .vod)
        var number = 1
        for tracks in sections {
            try writer.beginSection(tracks: tracks)
            for _ in 0..<2 {
                var next = segment(number)
                next.tracks.append(FragmentTrack(trackID: 2, baseDecodeTime: next.tracks[0].baseDecodeTime,
                                                 samples: next.tracks[0].samples))
                _ = try writer.write(next)
                number += 1
            }
        }
        return writer
    }

    @Test func aRecordingIsListedOnceItsMediaIsSyncedAndEachSectionFollowsADiscontinuity() throws {
        let store = MemoryStore()
        var writer = try recording(store, sections: [[audioTrack(), audioTrack()],
                                                     [audioTrack(), audioTrack(sampleRate: 44_100)]])
        #expect(!store.writeLog.contains { $0.hasSuffix(".m3u8") }, "nothing is listed before the end")
        #expect(store.durableFiles.isEmpty, "media waits for one sync")
        let summary = try writer.finish()
        #expect(Set(store.durableFiles.keys) == Set(store.files.keys), "the sync came before the playlists")
        let log = store.writeLog
        #expect(log.suffix(3) == ["audio/1/playlist.m3u8", "audio/2/playlist.m3u8", "master.m3u8"])
        #expect(summary.segmentCount == 4)
        let first = try MediaPlaylist.parse(store.text("audio/1/playlist.m3u8") ?? "")
        let second = try MediaPlaylist.parse(store.text("audio/2/playlist.m3u8") ?? "")
        #expect(first.playlistType == .vod && first.endList)
        #expect(first.segments.map(\.discontinuity) == [false, false, true, false])
        #expect(first.segments.map(\.mapURI) == ["init.mp4", "init.mp4", "init.mp4", "init.mp4"],
                "an unchanged rendition keeps its init section")
        #expect(second.segments.map(\.mapURI) == ["init.mp4", "init.mp4", "init-2.mp4", "init-2.mp4"])
        #expect(store.files["audio/2/init-2.mp4"] != nil && store.files["audio/1/init-2.mp4"] == nil)
    }

    @Test func aFailedRecordingTakesBackWhatItStoredAndReportsWhatItCouldNot() throws {
        let store = MemoryStore()
        let writer = try recording(store, sections: [[audioTrack(), audioTrack()]])
        store.inject(.init(.remove, errno: EACCES) { $0 == "audio/2/seg/000002.m4s" })
        let failures = writer.removeWrittenFiles()
        #expect(failures == [StoreError(operation: .remove, path: "memory/audio/2/seg/000002.m4s", errno: EACCES)])
        #expect(Array(store.files.keys) == ["audio/2/seg/000002.m4s"], "everything else went")
    }

    @Test func replacingAStreamRemovesEveryRenditionTheMasterNames() throws {
        let store = MemoryStore()
        var writer = try recording(store, sections: [[audioTrack(), audioTrack()]])
        try writer.finish()
        try store.write([0], to: "notes.txt")
        #expect(try StreamWriter.holdsStream(store))
        try StreamWriter.removeStream(in: store)
        #expect(Array(store.files.keys) == ["notes.txt"])
        #expect(try !StreamWriter.holdsStream(store))
    }

    /// Without its master playlist the rendition folders cannot be found: replacing must fail rather than
    /// leave their media under a new stream.
    @Test func aMasterPlaylistThatCannotBeReadStopsTheReplacement() throws {
        let store = MemoryStore()
        var writer = try recording(store, sections: [[audioTrack(), audioTrack()]])
        try writer.finish()
        store.inject(.init(.read, errno: EIO) { $0 == StreamLayout.masterPlaylistName })
        #expect(throws: StoreError(operation: .read, path: "memory/master.m3u8", errno: EIO)) {
            try StreamWriter.removeStream(in: store)
        }
        #expect(store.files["audio/1/seg/000001.m4s"] != nil)
    }
}
