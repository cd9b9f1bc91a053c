import Foundation
import Testing
@testable import HLSKit

/// Retention over a simulated week of hourly files: which go, in what order, and why.
@Suite struct RecordingRetentionTests {
    private let start = Date(timeIntervalSince1970: 1_764_547_200)  // 2025-12-01 00:00 UTC
    private let megabyte: Int64 = 1 << 20

    private func file(_ hour: Int, megabytes: Int64 = 100) -> RecordingIndex.File {
        .init(path: String(format: "day-%d/%02d.mp4", hour / 24, hour % 24),
              end: start.addingTimeInterval(Double(hour + 1) * 3600), byteCount: megabytes * megabyte)
    }

    /// Ten days of hourly files with --keep 7d: once a file has ended more than seven days ago, the next
    /// rotation deletes it, one a rotation, oldest first; the index holds a week (and the file that ended
    /// exactly seven days ago).
    @Test func keepDeletesWhatCrossedTheAgeAtEachRotation() {
        let retention = RecordingRetention(keepSeconds: 7 * 86_400)
        var index = RecordingIndex()
        var deleted: [String] = []
        for hour in 0..<(10 * 24) {
            index.add(file(hour))
            // The next file starts as this one ends: that is when retention runs.
            let now = file(hour).end
            let gone = retention.deletions(from: &index, now: now, freeBytes: nil)
            #expect(gone.allSatisfy { $0.reason == .age })
            deleted += gone.map(\.file.path)
            if hour > 7 * 24 { #expect(gone.count == 1, "hour \(hour)") } else { #expect(gone.isEmpty, "hour \(hour)") }
        }
        #expect(deleted == (0..<71).map { file($0).path })
        #expect(index.count == 7 * 24 + 1 && index.oldest == file(71))
        #expect(index.totalBytes == Int64(7 * 24 + 1) * 100 * megabyte)
    }

    @Test func sizeAndFreeSpaceDeleteOldestFirstUntilTheyAreMet() {
        var index = RecordingIndex((0..<10).map { file($0) })
        let bySize = RecordingRetention(keepBytes: 650 * megabyte).deletions(from: &index, now: start, freeBytes: nil)
        #expect(bySize.map(\.file.path) == (0..<4).map { file($0).path } && bySize.allSatisfy { $0.reason == .size })
        #expect(index.totalBytes == 600 * megabyte)
        // 150 MB free, 400 MB asked: three files of 100 MB bring it to 450.
        let byFreeSpace = RecordingRetention(minimumFreeBytes: 400 * megabyte)
            .deletions(from: &index, now: start, freeBytes: 150 * megabyte)
        #expect(byFreeSpace.map(\.file.path) == (4..<7).map { file($0).path })
        #expect(byFreeSpace.allSatisfy { $0.reason == .freeSpace })
        // Nothing is kept past what the rules ask: the last file goes too if the disk stays full.
        let full = RecordingRetention(minimumFreeBytes: 10_000 * megabyte).deletions(from: &index, now: start, freeBytes: 0)
        #expect(full.count == 3 && index.count == 0 && index.totalBytes == 0)
    }

    /// Files found at start are ordered by when they ended, whatever order the folder listed them in.
    @Test func filesFoundAtStartAreOrderedByTheirEnd() {
        var index = RecordingIndex([file(5), file(1), file(3)])
        let gone = RecordingRetention(keepSeconds: 3600).deletions(from: &index, now: file(3).end, freeBytes: nil)
        #expect(gone.map(\.file.path) == [file(1).path])
        #expect(index.all.map(\.path) == [file(3).path, file(5).path])
    }

    /// A file another rule deleted (a retention shared with other streams) leaves the index wherever it is,
    /// its bytes with it; one that is not kept changes nothing.
    @Test func aFileDeletedElsewhereLeavesTheIndex() {
        var index = RecordingIndex((0..<4).map { file($0) })
        #expect(index.remove(path: file(2).path) == file(2))
        #expect(index.remove(path: file(0).path) == file(0))
        #expect(index.remove(path: file(0).path) == nil)
        #expect(index.all.map(\.path) == [file(1).path, file(3).path])
        #expect(index.count == 2 && index.totalBytes == 200 * megabyte && index.oldest == file(1))
        let gone = RecordingRetention(keepBytes: 100 * megabyte).deletions(from: &index, now: start, freeBytes: nil)
        #expect(gone.map(\.file.path) == [file(1).path])
    }

    /// A pass looks at the files it deletes and one more: 100,000 files kept, one deleted, costs one step.
    @Test func aPassCostsWhatItDeletes() {
        var index = RecordingIndex((0..<100_000).map { file($0, megabytes: 1) })
        let retention = RecordingRetention(keepSeconds: (100_000 - 2) * 3600)
        let clock = ContinuousClock()
        var gone: [RecordingRetention.Deletion] = []
        let elapsed = clock.measure { gone = retention.deletions(from: &index, now: file(99_999).end, freeBytes: nil) }
        #expect(gone.map(\.file.path) == [file(0).path])
        #expect(index.count == 99_999)
        print("retention: one pass over 100,000 kept files that deletes one took \(elapsed)")
    }
}

@Suite struct RecordingFileSummaryTests {
    /// prft carries NTP time (seconds since 1900, 32.32 fixed point): it goes there and back to the
    /// microsecond, and 1970 is 2,208,988,800 s after 1900.
    @Test func wallClockTimesGoToNTPAndBack() {
        #expect(RecordingFileSummary.ntp(Date(timeIntervalSince1970: 0)) == 2_208_988_800 << 32)
        let moment = Date(timeIntervalSince1970: 1_764_583_323.123456)
        let back = RecordingFileSummary.date(ntp: RecordingFileSummary.ntp(moment))
        #expect(abs(back.timeIntervalSince(moment)) < 1e-6)
    }
}

@Suite struct RecordingRangePlaylistTests {
    private let zero = Date(timeIntervalSince1970: 1_764_583_200)  // 2025-12-01 10:00:00 UTC

    /// A file of `count` 2 s fragments from `start` seconds after `zero`, 1,000 bytes of init section.
    private func file(_ uri: String, start: Double, count: Int) -> RecordingRangePlaylist.File {
        var summary = RecordingFileSummary()
        summary.initByteCount = 1000
        summary.fragments = (0..<count).map { index in
            .init(offset: 1000 + index * 500, byteCount: 500, start: zero.addingTimeInterval(start + Double(index) * 2),
                  durationSeconds: 2)
        }
        return .init(uri: uri, summary: summary)
    }

    @Test func aRangeListsTheFragmentsItOverlapsWithADiscontinuityAtEachFileAndGap() throws {
        // 10:00:00–10:00:10, then 10:00:10–10:00:20, a gap, 10:00:30–10:00:40.
        let files = [file("files/c.mp4", start: 30, count: 5), file("files/a.mp4", start: 0, count: 5),
                     file("files/b.mp4", start: 10, count: 5)]
        let playlist = try #require(RecordingRangePlaylist.make(files: files, from: zero.addingTimeInterval(7),
                                                                to: zero.addingTimeInterval(33)))
        #expect(playlist.segments.map(\.uri) == ["files/a.mp4", "files/a.mp4"] + Array(repeating: "files/b.mp4", count: 5)
                + ["files/c.mp4", "files/c.mp4"])
        #expect(playlist.segments.map(\.discontinuity) == [false, false, true, false, false, false, false, true, false])
        #expect(playlist.segments.first?.programDateTime == zero.addingTimeInterval(6))
        let text = playlist.render()
        #expect(text.contains("#EXT-X-MAP:URI=\"files/a.mp4\",BYTERANGE=\"1000@0\"\n#EXT-X-PROGRAM-DATE-TIME:2025-12-01T10:00:06.000Z\n#EXTINF:2.000,\n#EXT-X-BYTERANGE:500@2500\nfiles/a.mp4\n"),
                "\(text)")
        #expect(text.contains("#EXT-X-PLAYLIST-TYPE:VOD\n") && text.hasSuffix("#EXT-X-ENDLIST\n"))
        #expect(RecordingRangePlaylist.make(files: files, from: zero.addingTimeInterval(21), to: zero.addingTimeInterval(29)) == nil)
        #expect(RecordingRangePlaylist.make(files: files, from: zero.addingTimeInterval(-60), to: zero) == nil)
    }

    /// A start read to the millisecond from a fragment's start (as index.json and the playlists give it) starts
    /// the range at that fragment, even when the fragment starts a fraction of a millisecond later: the one
    /// before it, which ends there, is not listed.
    @Test func aStartReadFromAFragmentsPublishedStartBeginsThere() throws {
        let files = [file("files/a.mp4", start: 0.0003, count: 5)]
        let published = try #require(ProgramDateTime.parse(ProgramDateTime.format(zero.addingTimeInterval(4.0003))[...]))
        #expect(published < zero.addingTimeInterval(4.0003))
        let playlist = try #require(RecordingRangePlaylist.make(files: files, from: published, to: published.addingTimeInterval(3)))
        #expect(playlist.segments.map(\.byteRange?.offset) == [2000, 2500], "\(playlist.render())")
        // A moment a millisecond and more inside a fragment still lists it.
        let inside = try #require(RecordingRangePlaylist.make(files: files, from: zero.addingTimeInterval(3.998),
                                                              to: zero.addingTimeInterval(5)))
        #expect(inside.segments.map(\.byteRange?.offset) == [1500, 2000])
    }

    /// A day of hourly files of 2 s fragments: the playlist for one hour and for the whole day, built and
    /// rendered, with what it took printed for the record (not asserted: timing belongs to measurements).
    @Test func aDayOfFragmentsMakesADayLongPlaylist() throws {
        let files = (0..<24).map { hour in file("files/\(hour).mp4", start: Double(hour) * 3600, count: 1800) }
        let clock = ContinuousClock()
        var hourText = "", dayText = ""
        let hour = clock.measure {
            hourText = RecordingRangePlaylist.make(files: files, from: zero.addingTimeInterval(5 * 3600),
                                                   to: zero.addingTimeInterval(6 * 3600))?.render() ?? ""
        }
        let day = clock.measure {
            dayText = RecordingRangePlaylist.make(files: files, from: zero, to: zero.addingTimeInterval(86_400))?.render() ?? ""
        }
        #expect(hourText.components(separatedBy: "#EXTINF").count - 1 == 1800)
        #expect(dayText.components(separatedBy: "#EXTINF").count - 1 == 24 * 1800)
        #expect(dayText.components(separatedBy: "#EXT-X-DISCONTINUITY\n").count - 1 == 23)
        print("range playlist: one hour (1,800 fragments) \(hour), a day (43,200 fragments, \(dayText.utf8.count) bytes) \(day)")
    }
}

@Suite struct RecordingClipTests {
    private let zero = Date(timeIntervalSince1970: 1_764_583_200)  // 2025-12-01 10:00:00 UTC

    /// A file of 2 s fragments whose capture times are `starts` seconds after `zero`.
    private func file(_ path: String, starts: [Double]) -> (path: String, summary: RecordingFileSummary) {
        var summary = RecordingFileSummary()
        summary.initByteCount = 1000
        summary.fragments = starts.enumerated().map { index, start in
            .init(offset: 1000 + index * 500, byteCount: 500, start: zero.addingTimeInterval(start), durationSeconds: 2)
        }
        return (path, summary)
    }

    /// A start read to the millisecond from a fragment's published start (index.json, `hlscap recordings`) cuts
    /// the clip at that fragment's first frame, even when the fragment starts a fraction of a millisecond later,
    /// not 2 s earlier at the keyframe before; and a file that ends there is not part of it.
    @Test func aStartReadFromAPublishedStartCutsThere() throws {
        let files = [file("a", starts: [0.0003, 2.0003, 4.0003, 6.0003, 8.0003]),
                     file("b", starts: [10.0003, 12.0003, 14.0003])]
        let published = { (seconds: Double) throws -> Date in
            try #require(ProgramDateTime.parse(ProgramDateTime.format(zero.addingTimeInterval(seconds))[...]))
        }
        let inside = RecordingClip.parts(files: files, from: try published(4.0003), to: zero.addingTimeInterval(6))
        #expect(inside.map(\.path) == ["a"] && inside.map(\.startSeconds) == [4])
        let atFileStart = RecordingClip.parts(files: files, from: try published(10.0003), to: zero.addingTimeInterval(13))
        #expect(atFileStart.map(\.path) == ["b"] && atFileStart.map(\.startSeconds) == [0], "\(atFileStart)")
    }

    @Test func aRangeIsThePartsOfTheFilesThatHoldItInFileTime() {
        // a: 10:00:00–10:00:10; b: 10:00:10–10:00:20, its clock 0.5 s behind from the third fragment on;
        // a gap; c: 10:00:30–10:00:40.
        let files = [file("c", starts: [30, 32, 34, 36, 38]), file("a", starts: [0, 2, 4, 6, 8]),
                     file("b", starts: [10, 12, 14.5, 16.5, 18.5])]
        let parts = RecordingClip.parts(files: files, from: zero.addingTimeInterval(7), to: zero.addingTimeInterval(33))
        #expect(parts.map(\.path) == ["a", "b", "c"])
        #expect(parts.map(\.startSeconds) == [7, 0, 0])
        #expect(parts.map(\.endSeconds) == [nil, nil, 3])
        #expect(parts.map(\.gapBeforeSeconds) == [0, 0, 9.5])
        // Inside b, a time after its clock moved is found through the fragment that holds it.
        let late = RecordingClip.parts(files: files, from: zero.addingTimeInterval(15), to: zero.addingTimeInterval(17))
        #expect(late.map(\.startSeconds) == [4.5] && late.map(\.endSeconds) == [6.5])
        #expect(RecordingClip.parts(files: files, from: zero.addingTimeInterval(22), to: zero.addingTimeInterval(28)).isEmpty)
    }
}
