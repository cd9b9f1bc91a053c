import Foundation
import HLSTestSupport
import Testing
@testable import HLSKit

/// The files a stream's segments make, in the order a writer stores them, without a store.
@Suite struct StreamRendererTests {
    static let audio = TrackDescription(
        trackID: 1, timescale: 48_000,
        format: .aac(AACFormat(audioSpecificConfig: AudioSpecificConfig(sampleRate: 48_000, channelCount: 2))))

    /// A 2 s audio-only segment (94 AAC frames of 1024 samples, a little over 2 s).
    static func audioSegment(_ number: Int) -> Segment {
        let base = Int64(number) * 96_256
        let samples = (0..<94).map { index in
            TimedSample(decodeTime: base + Int64(index) * 1024, durationTicks: 1024, compositionOffset: 0,
                        isSync: true, data: [0x21, UInt8(index)])
        }
        return Segment(sequenceNumber: number, tracks: [FragmentTrack(trackID: 1, baseDecodeTime: UInt64(base),
                                                                      samples: samples)],
                       startTicks: base, durationTicks: 96_256, timescale: 48_000)
    }

    /// A 2 s video segment: one IDR, then 49 predicted frames of 40 ms.
    static func videoSegment(_ number: Int) -> Segment {
        let base = Int64(number) * 180_000
        let samples = (0..<50).map { index in
            TimedSample(decodeTime: base + Int64(index) * 3600, durationTicks: 3600, compositionOffset: 0,
                        isSync: index == 0,
                        data: index == 0 ? MP4MediaFragmentTests.idrSample : MP4MediaFragmentTests.predictedSample)
        }
        return Segment(sequenceNumber: number, tracks: [FragmentTrack(trackID: 1, baseDecodeTime: UInt64(base),
                                                                      samples: samples)],
                       startTicks: base, durationTicks: 180_000, timescale: 90_000)
    }

    static func live(windowSize: Int, declared: [RenditionMeasure]? = nil) -> StreamRenderer {
        StreamRenderer(layout: .single(trackCount: 1), policy: .live(targetDurationSeconds: 2, windowSize: windowSize),
                       declared: declared)
    }

    static func text(_ file: StreamRenderer.File?) -> String {
        file.map { String(decoding: $0.bytes, as: UTF8.self) } ?? ""
    }

    @Test func theFirstSectionMakesTheInitSection() {
        var renderer = Self.live(windowSize: 2)
        let files = renderer.beginSection(tracks: [Self.audio])
        #expect(files == [StreamRenderer.File(path: "init.mp4", bytes: InitSegment.make(tracks: [Self.audio]))])
    }

    @Test func aSegmentComesBeforeThePlaylistThatListsIt() {
        var renderer = Self.live(windowSize: 2)
        _ = renderer.beginSection(tracks: [Self.audio])
        let segment = Self.audioSegment(1)
        let output = renderer.write(segment)
        #expect(output.files.map(\.path) == ["seg/000001.m4s", "playlist.m3u8"])
        #expect(output.segmentFileCount == 1)
        #expect(output.files[0].bytes == MediaFragment.make(sequenceNumber: 1, tracks: segment.tracks,
                                                            descriptions: [Self.audio]))
        #expect(output.renditionByteCounts == [output.files[0].bytes.count])
        #expect(output.removals.isEmpty)
        #expect(!output.rendersMaster, "a live stream without declared rates has no master playlist")
        #expect(Self.text(output.files.last).contains("#EXTINF:2.005,\nseg/000001.m4s\n"))
        #expect(renderer.nextSequenceNumber == 2)
    }

    @Test func theWindowRollsAndWhatLeavesItIsRetiredOldestFirst() throws {
        var renderer = Self.live(windowSize: 2)
        _ = renderer.beginSection(tracks: [Self.audio])
        var removals: [[String]] = []
        for number in 1...4 { removals.append(renderer.write(Self.audioSegment(number)).removals.map(\.uri)) }
        #expect(removals == [[], [], ["seg/000001.m4s"], ["seg/000002.m4s"]])
        let playlist = try MediaPlaylist.parse(Self.text(renderer.finish().first))
        #expect(playlist.mediaSequence == 3)
        #expect(playlist.segments.map(\.uri) == ["seg/000003.m4s", "seg/000004.m4s"])
    }

    /// An init section leaves with the last segment that named it, after that segment, and waits as long.
    @Test func anInitSectionIsRetiredAfterItsLastSegment() {
        var renderer = Self.live(windowSize: 1)
        _ = renderer.beginSection(tracks: [Self.audio])
        _ = renderer.write(Self.audioSegment(1))
        var changed = Self.audio
        changed.format = .aac(AACFormat(audioSpecificConfig: AudioSpecificConfig(sampleRate: 48_000, channelCount: 1)))
        #expect(renderer.beginSection(tracks: [changed]).map(\.path) == ["init-2.mp4"])
        let removals = renderer.write(Self.audioSegment(2)).removals
        #expect(removals.map(\.uri) == ["seg/000001.m4s", "init.mp4"])
        #expect(removals[1].retentionSeconds == removals[0].retentionSeconds)
    }

    @Test func aVideoRenditionHasAnIFramePlaylistAndTheMasterFollowsTheFirstSegment() throws {
        let video = try MP4MediaFragmentTests.video()
        let declared = [RenditionMeasure(tracks: [video], peakBitrate: 1_000_000, averageBitrate: 800_000,
                                         framesPerSecond: 25, iFramePeakBitrate: 100_000, iFrameAverageBitrate: 80_000)]
        var renderer = Self.live(windowSize: 0, declared: declared)
        _ = renderer.beginSection(tracks: [video])
        let first = renderer.write(Self.videoSegment(1))
        #expect(first.files.map(\.path) == ["seg/000001.m4s", "playlist.m3u8", "iframes.m3u8", "master.m3u8"])
        #expect(first.rendersMaster)
        let master = Self.text(first.files.last)
        #expect(master.contains("#EXT-X-STREAM-INF:BANDWIDTH=1000000,AVERAGE-BANDWIDTH=800000"))
        #expect(master.contains("#EXT-X-I-FRAME-STREAM-INF:"))
        let iFrames = Self.text(first.files[2])
        #expect(iFrames.contains("#EXT-X-I-FRAMES-ONLY"))
        #expect(iFrames.contains("#EXT-X-BYTERANGE:"))
        let second = renderer.write(Self.videoSegment(2))
        #expect(second.files.map(\.path) == ["seg/000002.m4s", "playlist.m3u8", "iframes.m3u8"],
                "the master playlist is rendered once")
    }

    /// An encrypted stream has no I-frame playlists; the segment file and its key are what `encrypt` made.
    @Test func anEncryptedSegmentIsListedWithItsKey() throws {
        let video = try MP4MediaFragmentTests.video()
        var renderer = Self.live(windowSize: 0)
        renderer.encryption = .aes128
        _ = renderer.beginSection(tracks: [video])
        let output = renderer.media(of: Self.videoSegment(1)) { media in
            media.bytes = media.bytes.reversed()
            media.key = MediaPlaylist.Key(uri: "../keys/1.key")
        }
        let listed = renderer.list(output)
        #expect(listed.files.map(\.path) == ["seg/000001.m4s", "playlist.m3u8"])
        #expect(listed.files[0].bytes == MediaFragment.make(sequenceNumber: 1, tracks: Self.videoSegment(1).tracks,
                                                            descriptions: [video]).reversed())
        #expect(Self.text(listed.files[1]).contains("#EXT-X-KEY:METHOD=AES-128,URI=\"../keys/1.key\"\n"))
    }

    @Test func aLiveStreamEndsWithEndList() throws {
        var renderer = Self.live(windowSize: 2)
        _ = renderer.beginSection(tracks: [Self.audio])
        let before = renderer.write(Self.audioSegment(1))
        #expect(!Self.text(before.files.last).contains("#EXT-X-ENDLIST"))
        let files = renderer.finish()
        #expect(files.map(\.path) == ["playlist.m3u8"])
        #expect(Self.text(files.first).hasSuffix("seg/000001.m4s\n#EXT-X-ENDLIST\n"))
    }

    /// A recording lists nothing while it is written, then every segment and its master playlist.
    @Test func aRecordingIsListedWholeAtTheEnd() throws {
        var renderer = StreamRenderer(layout: .single(trackCount: 1), policy: .vod)
        _ = renderer.beginSection(tracks: [Self.audio])
        for number in 1...3 {
            #expect(renderer.write(Self.audioSegment(number)).files.map(\.path) == [StreamLayout.segmentPath(number)])
        }
        let files = renderer.finish()
        #expect(files.map(\.path) == ["playlist.m3u8", "master.m3u8"])
        let playlist = try MediaPlaylist.parse(Self.text(files[0]))
        #expect(playlist.playlistType == .vod)
        #expect(playlist.endList)
        #expect(playlist.segments.count == 3)
        #expect(renderer.summary.segmentCount == 3)
    }

    /// A resumed rendition's init section is left out when the store already holds the same bytes.
    @Test func aResumedInitSectionThatIsStoredIsLeftOut() {
        var renderer = Self.live(windowSize: 0)
        _ = renderer.beginSection(tracks: [Self.audio])
        _ = renderer.write(Self.audioSegment(1))
        let previous = renderer.playlist
        var resumed = Self.live(windowSize: 0)
        resumed.resume(rendition: 0, from: previous, initName: "init.mp4")
        resumed.nextSequenceNumber = 2
        var asked: [String] = []
        let files = resumed.beginSection(tracks: [Self.audio]) { (file: StreamRenderer.File) throws(Never) in
            asked.append(file.path)
            return true
        }
        #expect(asked == ["init.mp4"])
        #expect(files.isEmpty)
        let text = Self.text(resumed.write(Self.audioSegment(2)).files.last)
        #expect(text.contains("#EXT-X-DISCONTINUITY\n"), "a resumed stream's first new segment follows a discontinuity")
    }
}
