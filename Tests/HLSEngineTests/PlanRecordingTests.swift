import Foundation
import HLSEngine
import HLSKit
import HLSMedia
import Testing

/// The recording beside a live stream: its options, its split by time and retention, where its files go.
@Suite struct PlanRecordingTests {
    static let refusals: [(LiveCase, PlanError)] = [
        (LiveCase("--record-size alone") { $0.recordSize = OutputSize(width: 640, height: 360) }, .needsRecording("record-size")),
        (LiveCase("--record-codec alone") { $0.recordCodec = .h264 }, .needsRecording("record-codec")),
        (LiveCase("--record-bitrate alone") { $0.recordBitrate = 1_000_000 }, .needsRecording("record-bitrate")),
        (LiveCase("--record-every alone") { $0.recordEvery = "1h" }, .needsRecording("record-every")),
        (LiveCase("--record-local-time alone") { $0.recordLocalTime = true }, .needsRecording("record-local-time")),
        (LiveCase("--keep alone") { $0.retention.keepSeconds = 86_400 }, .retentionWithoutSplit),
        (LiveCase("--keep-size with one file") { $0.record = "/r/rec.mp4"; $0.retention.keepBytes = 50 << 30 },
         .retentionWithoutSplit),
        (LiveCase("--min-free with placeholders but no period") {
            $0.record = "/r/%H-%M.mp4"
            $0.retention.minimumFreeBytes = 2 << 30
        }, .retentionWithoutSplit),
        (LiveCase("an unknown placeholder") { $0.record = "/r/%Q.mp4"; $0.recordEvery = "1h" },
         .recordingPattern(path: "/r/%Q.mp4", .unknownPlaceholder("%Q"))),
        (LiveCase("a period that does not divide a day") { $0.record = "/r/%H-%M.mp4"; $0.recordEvery = "7h" },
         .recordingPeriod(.notADivisorOfADay(25_200))),
        (LiveCase("an unreadable period") { $0.record = "/r/%H-%M.mp4"; $0.recordEvery = "hourly" },
         .recordingPeriod(.unreadable("hourly"))),
        (LiveCase("a split without a time in the name") { $0.record = "/r/rec.mp4"; $0.recordEvery = "1h" },
         .recordingNameWithoutTime(path: "/r/rec.mp4")),
        (LiveCase("daily names every hour") { $0.record = "/r/%Y-%m-%d.mp4"; $0.recordEvery = "1h" },
         .recordingNamesCollide(path: "/r/%Y-%m-%d.mp4", finestSeconds: 86_400, periodSeconds: 3600)),
        (LiveCase("--keep shorter than a file") {
            $0.record = "/r/%H-%M.mp4"
            $0.recordEvery = "1h"
            $0.retention.keepSeconds = 1800
        }, .keepShorterThanPeriod(keepSeconds: 1800, periodSeconds: 3600)),
    ]

    @Test(arguments: refusals)
    func refusal(_ item: LiveCase, _ error: PlanError) {
        #expect(throws: error) { try item.request.plan() }
    }

    @Test func theRecordingsOwnEncoding() throws {
        let plain = try #require(try LiveCase("") { $0.record = "rec.mp4" }.request.plan().recording)
        #expect(plain.codec == .hevc && plain.size == nil && plain.bitrate == nil && !plain.encodes)
        let own = try #require(try LiveCase("") {
            $0.record = "rec.mp4"
            $0.recordCodec = .h264
            $0.recordSize = OutputSize(width: 640, height: 360)
            $0.recordBitrate = 3_000_000
        }.request.plan().recording)
        #expect(own.codec == .h264 && own.size == OutputSize(width: 640, height: 360) && own.bitrate == 3_000_000)
        #expect(own.encodes)
    }

    static let start = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18T11:06:40Z

    @Test(arguments: [("rec/a.mp4", "rec", "a.mp4"), ("a.mp4", ".", "a.mp4"), ("/a.mp4", "/", "a.mp4"),
                      ("/srv/rec/%Y%m%d-%H%M.mp4", "/srv/rec", "20261118-1106.mp4")])
    func oneFile(path: String, directory: String, name: String) throws {
        let recording = try #require(try LiveCase("") { $0.record = path }.request.plan().recording)
        let layout = recording.layout(startingAt: Self.start)
        #expect(layout.directory == directory && layout.name == name && layout.split == nil)
    }

    @Test func aSplitGoesBelowTheFolderBeforeTheFirstPlaceholder() throws {
        let recording = try #require(try LiveCase("") {
            $0.record = "/srv/rec/%Y-%m-%d/%H-%M-%S.mp4"
            $0.recordEvery = "15m"
            $0.retention.keepSeconds = 7 * 86_400
            $0.retention.keepBytes = 50 << 30
        }.request.plan().recording)
        let layout = recording.layout(startingAt: Self.start)
        #expect(layout.directory == "/srv/rec" && layout.name == "%Y-%m-%d/%H-%M-%S.mp4")
        let split = try #require(layout.split)
        #expect(split.pattern == (try RecordingPattern("%Y-%m-%d/%H-%M-%S.mp4")))
        #expect(split.period.seconds == 900 && split.timeZone == TimeZone(identifier: "UTC"))
        #expect(split.retention.keepSeconds == 7 * 86_400 && split.retention.keepBytes == 50 << 30)
    }

    @Test func localTimeReckonsBoundariesAndNamesHere() throws {
        let recording = try #require(try LiveCase("") {
            $0.record = "%H.mp4"
            $0.recordEvery = "1h"
            $0.recordLocalTime = true
        }.request.plan().recording)
        #expect(recording.timeZone == TimeZone.current)
        #expect(recording.layout(startingAt: Self.start).split?.timeZone == TimeZone.current)
        #expect(recording.layout(startingAt: Self.start).directory == ".")
    }

    @Test func keepingExactlyOnePeriodIsEnough() throws {
        let recording = try #require(try LiveCase("") {
            $0.record = "/r/%H.mp4"
            $0.recordEvery = "1h"
            $0.retention.keepSeconds = 3600
        }.request.plan().recording)
        #expect(recording.period?.seconds == 3600 && recording.retention.keepSeconds == 3600)
    }
}
