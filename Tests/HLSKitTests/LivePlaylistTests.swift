import Testing
@testable import HLSKit

@Suite struct LivePlaylistTests {
    func segment(_ number: Int, _ seconds: Double = 2.0, map: String = "init.mp4") -> MediaPlaylist.Segment {
        MediaPlaylist.Segment(uri: StreamLayout.segmentPath(number), durationSeconds: seconds, mapURI: map)
    }

    @Test func slidingWindowAdvancesTheMediaSequenceAndReturnsRemovalsWithRetention() {
        var live = LivePlaylist(targetDurationSeconds: 2, windowSize: 3)
        var removals: [LivePlaylist.Removal] = []
        for number in 1...5 { removals += live.append(segment(number)) }
        #expect(live.playlist.mediaSequence == 3)
        #expect(live.playlist.segments.map(\.uri) == ["seg/000003.m4s", "seg/000004.m4s", "seg/000005.m4s"])
        // Each removed segment stays for its 2 s plus the 8 s playlist that held it (4 segments).
        // Each names its init section, which leaves once no listed segment names it.
        #expect(removals == [.init(uri: "seg/000001.m4s", mapURI: "init.mp4", retentionSeconds: 10),
                             .init(uri: "seg/000002.m4s", mapURI: "init.mp4", retentionSeconds: 10)])
        #expect(live.playlist.playlistType == nil)
        #expect(live.nextSequenceNumber == 6)
        #expect(!live.render().contains("#EXT-X-PLAYLIST-TYPE"))
        #expect(live.render().contains("#EXT-X-MEDIA-SEQUENCE:3\n"))
    }

    @Test func windowZeroKeepsEverythingAsAnEventPlaylist() {
        var live = LivePlaylist(targetDurationSeconds: 2, windowSize: 0)
        for number in 1...20 { #expect(live.append(segment(number)).isEmpty) }
        #expect(live.playlist.segments.count == 20)
        #expect(live.render().contains("#EXT-X-PLAYLIST-TYPE:EVENT\n"))
        live.end()
        #expect(live.render().hasSuffix("#EXT-X-ENDLIST\n"))
    }

    @Test func resumingMarksADiscontinuityAndCountsItWhenItLeaves() throws {
        var first = LivePlaylist(targetDurationSeconds: 2, windowSize: 2)
        for number in 1...3 { _ = first.append(segment(number)) }
        first.end()
        let parsed = try MediaPlaylist.parse(first.render())
        var resumed = LivePlaylist(resuming: parsed, windowSize: 2)
        #expect(resumed.nextSequenceNumber == 4)
        #expect(!resumed.playlist.endList)
        _ = resumed.append(segment(4, map: "init-2.mp4"))
        let text = resumed.render()
        #expect(text.contains("#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI=\"init-2.mp4\"\n"))
        // Stated though 0: Apple's authoring rules want it wherever there is a discontinuity.
        #expect(text.contains("#EXT-X-MEDIA-SEQUENCE:3\n#EXT-X-DISCONTINUITY-SEQUENCE:0\n"))
        _ = resumed.append(segment(5, map: "init-2.mp4"))
        _ = resumed.append(segment(6, map: "init-2.mp4"))
        #expect(resumed.playlist.discontinuitySequence == 1)
        #expect(resumed.render().contains("#EXT-X-DISCONTINUITY-SEQUENCE:1\n"))
    }
}

@Suite struct KeyframeScheduleTests {
    /// Frame times in 90 kHz ticks since the first frame.
    func keyframes(_ times: [Int64], segmentMilliseconds: Int64 = 2000) -> [Int64] {
        var schedule = KeyframeSchedule(segmentMilliseconds: segmentMilliseconds, timescale: 90_000)
        return times.filter { schedule.isKeyframe(ticksSinceStart: $0) }
    }

    @Test func constantRateForcesTheFirstFrameOfEveryTwoSeconds() {
        let frames = (0..<180).map { Int64($0) * 3000 }
        #expect(keyframes(frames) == [0, 180_000, 360_000])
    }

    @Test func ntscRateForcesTheFirstFrameAtOrAfterTheBoundary() {
        let frames = (0..<130).map { Int64($0) * 3003 }
        // 2 s = 59.94 frames: frame 60 (180 180 ticks) is the first at or after 180 000.
        #expect(keyframes(frames) == [0, 180_180, 360_360])
    }

    @Test func droppedFramesAtABoundaryForceTheNextFrameAndSkipNoSegment() {
        let frames: [Int64] = [0, 3000, 174_000, 186_000, 189_000, 400_000, 403_000]
        #expect(keyframes(frames) == [0, 186_000, 400_000])
    }
}
