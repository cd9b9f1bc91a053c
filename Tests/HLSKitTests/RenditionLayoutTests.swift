import Foundation
import HLSTestSupport
import Testing
@testable import HLSKit

private let avcConfiguration = try! AVCDecoderConfiguration(parsing: BitstreamAVCConfigurationTests.ffmpegHighRecord)

private func video(_ width: Int, _ height: Int, id: UInt32) -> TrackDescription {
    TrackDescription(trackID: id, timescale: 90_000,
                     format: .h264(H264Format(decoderConfiguration: avcConfiguration, width: width, height: height)))
}

private let aac = AudioSpecificConfig(bytes: [0x11, 0x90], objectType: 2, sampleRate: 48_000, channelCount: 2)
private func audio(id: UInt32, language: String = "und") -> TrackDescription {
    TrackDescription(trackID: id, timescale: 48_000, format: .aac(AACFormat(audioSpecificConfig: aac)), language: language)
}

private func sample(_ decodeTime: Int64, sync: Bool, bytes: Int) -> TimedSample {
    TimedSample(decodeTime: decodeTime, durationTicks: 3000, compositionOffset: 0, isSync: sync,
                data: [UInt8](repeating: 0xAB, count: bytes))
}

@Suite struct StreamLayoutTests {
    @Test func withoutALadderOrSeveralAudioTracksEverythingStaysInOnePlaylist() {
        let tracks = [video(1280, 720, id: 1), audio(id: 2)]
        #expect(StreamLayout.make(tracks: tracks, videoNames: nil) == .single(trackCount: 2))
    }

    @Test func aLadderGetsADirectoryPerRungAndOneForAudio() {
        let tracks = [video(1280, 720, id: 1), video(640, 360, id: 2), audio(id: 3)]
        let layout = StreamLayout.make(tracks: tracks, videoNames: ["720p", "360p"])
        #expect(layout.renditions.map(\.directory) == ["720p", "360p", "audio"])
        #expect(layout.renditions.map(\.trackIndexes) == [[0], [1], [2]])
        #expect(layout.tracks(of: 1, in: tracks).map(\.trackID) == [1])
        #expect(layout.isAudioRendition(2, in: tracks) && !layout.isAudioRendition(0, in: tracks))
    }

    @Test func severalAudioTracksAreNamedAfterTheirLanguagesOrNumbers() {
        let tracks = [video(1280, 720, id: 1), audio(id: 2), audio(id: 3), audio(id: 4)]
        let layout = StreamLayout.make(tracks: tracks, videoNames: nil, audioLanguages: ["eng", "fra", nil])
        #expect(layout.renditions.map(\.directory) == ["", "audio/eng", "audio/fra", "audio/3"])
        #expect(layout.renditions.map(\.language) == [nil, "en", "fr", nil])
        #expect(layout.renditions.map(\.name) == ["", "English", "Français", "Audio 3"])
    }

    @Test func splittingRenumbersEachRenditionsTracksFromOne() {
        let tracks = [video(1280, 720, id: 1), video(640, 360, id: 2), audio(id: 3)]
        let layout = StreamLayout.make(tracks: tracks, videoNames: ["720p", "360p"])
        let segment = Segment(sequenceNumber: 7, tracks: [
            FragmentTrack(trackID: 1, baseDecodeTime: 900_000, samples: [sample(900_000, sync: true, bytes: 10)]),
            FragmentTrack(trackID: 2, baseDecodeTime: 900_000, samples: [sample(900_000, sync: true, bytes: 5)]),
            FragmentTrack(trackID: 3, baseDecodeTime: 480_000, samples: [
                TimedSample(decodeTime: 480_000, durationTicks: 1024, compositionOffset: 0, isSync: true, data: [1]),
            ]),
        ], startTicks: 900_000, durationTicks: 3000, timescale: 90_000)
        let parts = layout.split(segment, timescales: tracks.map(\.timescale))
        #expect(parts.map { $0?.tracks.map(\.trackID) } == [[1], [1], [1]])
        #expect(parts.map { $0?.sequenceNumber } == [7, 7, 7])
        #expect(parts[2]?.timescale == 48_000)
        #expect(parts[2]?.durationTicks == 1024)
        #expect(parts[1]?.tracks[0].samples[0].data.count == 5)
    }
}

@Suite struct IFramePlaylistTests {
    /// The byte range of a segment's I-frame runs from the moof (after the 24-byte styp) through the end of
    /// that sample's bytes, and each entry lasts until the next I-frame or its segment's end.
    @Test func rangesCoverTheMoofAndTheSampleAndDurationsRunToTheNextIFrame() throws {
        let track = video(640, 360, id: 1)
        let samples = (0..<60).map { sample(900_000 + Int64($0) * 3000, sync: $0 == 0, bytes: 100 + $0) }
        let run = FragmentTrack(trackID: 1, baseDecodeTime: 900_000, samples: samples)
        let bytes = MediaFragment.make(sequenceNumber: 1, tracks: [run], descriptions: [track])
        let segment = Segment(sequenceNumber: 1, tracks: [run], startTicks: 900_000, durationTicks: 180_000,
                              timescale: 90_000)
        var index = IFrameIndex()
        index.add(segment: segment, uri: "seg/000001.m4s", mapURI: "init.mp4", discontinuity: false, video: track,
                  fragmentSize: bytes.count)
        let playlist = index.playlist(playlistType: .vod)
        #expect(playlist.iFramesOnly && playlist.version == 5)
        let range = try #require(playlist.segments.first?.byteRange)
        #expect(playlist.segments.count == 1 && range.offset == 24)
        let dataStart = bytes.count - samples.reduce(0) { $0 + $1.data.count }
        #expect(range.length == dataStart + 100 - 24)
        #expect(playlist.segments.map(\.durationSeconds) == [2.0])
        let text = playlist.render()
        #expect(text.contains("#EXT-X-I-FRAMES-ONLY\n"))
        #expect(text.contains("#EXTINF:2.000,\n#EXT-X-BYTERANGE:\(range.length)@24\nseg/000001.m4s\n"))
        // The moof and the first sample, read from the bytes themselves.
        #expect(Array(bytes[28..<32]) == Array("moof".utf8))
    }

    /// A camera's keyframe inside a segment (every 0.8 s in 2 s segments) gets no entry: a range from the
    /// moof through it would hold every picture before it too. Each segment's own I-frame lasts to the next.
    @Test func keyframesInsideASegmentAreLeftOut() throws {
        let track = video(640, 360, id: 1)
        let audioTrack = audio(id: 2)
        var index = IFrameIndex()
        for number in 1...2 {
            let start = 900_000 + Int64(number - 1) * 180_000
            let samples = (0..<60).map { sample(start + Int64($0) * 3000, sync: $0 % 24 == 0, bytes: 100 + $0) }
            let sound = FragmentTrack(trackID: 2, baseDecodeTime: UInt64(start / 90 * 48),
                                      samples: (0..<94).map { sample(start / 90 * 48 + Int64($0) * 1024, sync: true, bytes: 20) })
            let tracks = [sound, FragmentTrack(trackID: 1, baseDecodeTime: UInt64(start), samples: samples)]
            let bytes = MediaFragment.make(sequenceNumber: UInt32(number), tracks: tracks, descriptions: [track, audioTrack])
            index.add(segment: Segment(sequenceNumber: number, tracks: tracks, startTicks: start, durationTicks: 180_000,
                                       timescale: 90_000),
                      uri: "seg/00000\(number).m4s", mapURI: "init.mp4", discontinuity: false, video: track,
                      fragmentSize: bytes.count)
            let entry = try #require(index.playlist(playlistType: .vod).segments.last?.byteRange)
            let dataStart = bytes.count - tracks.reduce(0) { $0 + $1.samples.reduce(0) { $0 + $1.data.count } }
            // Through the sound that precedes the picture in the mdat, and the picture alone.
            #expect(entry.length == dataStart + 94 * 20 + 100 - 24)
        }
        let playlist = index.playlist(playlistType: .vod)
        #expect(playlist.segments.map(\.uri) == ["seg/000001.m4s", "seg/000002.m4s"])
        #expect(playlist.segments.map(\.durationSeconds) == [2.0, 2.0])
    }

    @Test func aLiveWindowDropsTheEntriesOfRemovedSegments() {
        let track = video(640, 360, id: 1)
        var index = IFrameIndex()
        for number in 1...4 {
            let start = 900_000 + Int64(number - 1) * 180_000
            let run = FragmentTrack(trackID: 1, baseDecodeTime: UInt64(start),
                                    samples: (0..<60).map { sample(start + Int64($0) * 3000, sync: $0 == 0, bytes: 10) })
            let segment = Segment(sequenceNumber: number, tracks: [run], startTicks: start, durationTicks: 180_000,
                                  timescale: 90_000)
            index.add(segment: segment, uri: "seg/00000\(number).m4s", mapURI: "init.mp4", discontinuity: false,
                      video: track, fragmentSize: 2000)
        }
        index.remove(segmentURIs: ["seg/000001.m4s"])
        let playlist = index.playlist(playlistType: nil, targetDurationSeconds: 2)
        #expect(playlist.mediaSequence == 2)
        #expect(playlist.segments.map(\.uri) == ["seg/000002.m4s", "seg/000003.m4s", "seg/000004.m4s"])
    }

    /// A live I-frame playlist renders each entry's lines once its duration is known; its text is, at every
    /// update, what rendering the whole playlist gives: several I-frames a segment, discontinuities, a
    /// sliding window.
    @Test func aLiveIFramePlaylistRendersAsTheWholePlaylistWould() {
        let track = video(640, 360, id: 1)
        var random = SeededGenerator(state: 42)
        var index = IFrameIndex()
        var uris: [String] = []
        for number in 1...60 {
            let start = 900_000 + Int64(number - 1) * 180_000
            let keyframes = Set((0..<3).map { _ in Int.random(in: 0..<60, using: &random) } + [0])
            let run = FragmentTrack(trackID: 1, baseDecodeTime: UInt64(start),
                                    samples: (0..<60).map { sample(start + Int64($0) * 3000, sync: keyframes.contains($0),
                                                                   bytes: 10 + $0) })
            let segment = Segment(sequenceNumber: number, tracks: [run], startTicks: start, durationTicks: 180_000,
                                  timescale: 90_000)
            let uri = String(format: "seg/%06d.m4s", number)
            uris.append(uri)
            index.add(segment: segment, uri: uri, mapURI: "init.mp4", discontinuity: number % 17 == 0, video: track,
                      fragmentSize: 4000, programDateTime: Date(timeIntervalSince1970: 1_764_000_000 + Double(number) * 2))
            if uris.count > 10 { index.remove(segmentURIs: [uris.removeFirst()]) }
            for ended in [false, true] {
                var whole = index.playlist(playlistType: nil, targetDurationSeconds: 2, firstSequenceNumber: 1)
                whole.endList = ended
                #expect(index.render(playlistType: nil, targetDurationSeconds: 2, firstSequenceNumber: 1, endList: ended)
                        == whole.render(), "segment \(number)")
            }
        }
    }
}

@Suite struct MasterPlaylistBuilderTests {
    @Test func variantsCarryTheAudioGroupAndTheOneNearTwoMegabitsComesFirst() {
        let tracks = [video(1280, 720, id: 1), video(854, 480, id: 2), video(640, 360, id: 3), audio(id: 4)]
        let layout = StreamLayout.make(tracks: tracks, videoNames: ["720p", "480p", "360p"])
        let rates = [(3_300_000, 3_000_000), (1_600_000, 1_400_000), (450_000, 400_000), (140_000, 128_000)]
        let measured = tracks.indices.map { index in
            RenditionMeasure(tracks: [tracks[index]], peakBitrate: rates[index].0, averageBitrate: rates[index].1,
                             framesPerSecond: tracks[index].isVideo ? 30 : nil, iFramePeakBitrate: 90_000,
                             iFrameAverageBitrate: 80_000)
        }
        let master = MasterPlaylistBuilder(layout: layout, allTracks: tracks, measured: measured).make(version: 6)
        #expect(master.variants.map(\.uri) == ["480p/playlist.m3u8", "720p/playlist.m3u8", "360p/playlist.m3u8"])
        #expect(master.variants[0].bandwidthBitsPerSecond == 1_740_000)
        #expect(master.variants[0].averageBandwidthBitsPerSecond == 1_528_000)
        #expect(master.variants.allSatisfy { $0.audioGroup == "audio" && $0.codecs?.last == "mp4a.40.2" })
        #expect(master.audioRenditions.map(\.uri) == ["audio/playlist.m3u8"])
        #expect(master.iFrameStreams.map(\.uri) == ["720p/iframes.m3u8", "480p/iframes.m3u8", "360p/iframes.m3u8"])
        let text = master.render()
        #expect(text.contains("#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio\",NAME=\"Audio 1\",DEFAULT=YES,AUTOSELECT=YES,"
            + "CHANNELS=\"2\",URI=\"audio/playlist.m3u8\"\n"))
        #expect(text.contains("RESOLUTION=854x480,FRAME-RATE=30.000,AUDIO=\"audio\"\n480p/playlist.m3u8\n"))
        #expect(text.contains("#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=90000,AVERAGE-BANDWIDTH=80000,CODECS=\"avc1.64001e\","
            + "RESOLUTION=640x360,URI=\"360p/iframes.m3u8\"\n"))
    }
}
