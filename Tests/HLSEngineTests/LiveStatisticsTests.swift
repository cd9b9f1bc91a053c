import Testing
@testable import HLSEngine

/// The summary line a live run prints at its end.
@Suite struct LiveStatisticsTests {
    @Test func theSummaryNamesDevicesThatCameBackAndThoseStillAwayAtTheStop() {
        let statistics = LiveStatistics()
        statistics.countOutage(device: "/dev/video0", seconds: 1.5)
        statistics.countOutage(device: "/dev/video0", seconds: 2.7)
        statistics.noteAwayAtStop(device: "hw:Loopback,1,0", seconds: 4.04)
        let summary = statistics.summary()
        #expect(summary.contains(", /dev/video0 reconnected 2 times after 4.2 s without it"), "\(summary)")
        #expect(summary.hasSuffix(", hw:Loopback,1,0 still away at the stop (lost 4.0 s before it)"), "\(summary)")
    }

    @Test func aRunWithoutOutagesSaysNothingOfDevices() {
        let summary = LiveStatistics().summary()
        #expect(summary == "0 segments, 0.000 s, 0 kb/s, 0 frames, 0 dropped, mode live", "\(summary)")
    }

    /// Retention's deletions are on the status line and in the snapshot `/metrics` is made from, by rule.
    @Test func recordingsDeletedAreCountedByRule() {
        let statistics = LiveStatistics()
        #expect(!statistics.statusLine().contains("recordings deleted"))
        statistics.countRecordingRemoved(reason: .age, byteCount: 1_500_000)
        statistics.countRecordingRemoved(reason: .age, byteCount: 500_000)
        statistics.countRecordingRemoved(reason: .freeSpace, byteCount: 1_000_000)
        #expect(statistics.statusLine().contains("recordings deleted 3 (3.0 MB)"), "\(statistics.statusLine())")
        let removals = statistics.snapshot().recordingRemovals
        #expect(removals == [.age: .init(files: 2, bytes: 2_000_000), .freeSpace: .init(files: 1, bytes: 1_000_000)])
    }
}
