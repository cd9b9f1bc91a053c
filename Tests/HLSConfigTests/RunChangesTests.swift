import HLSConfig
import Testing

/// A reload's diff of two files' streams: added, removed, changed (continued or replaced) and untouched.
@Suite struct RunChangesTests {
    private let door = ["--video=rtsp://10.0.0.5/101", "--out=/srv/live/door"]
    private let yard = ["--video=test", "--ladder=source,360p", "--out=/srv/live/yard"]

    @Test func namesEachStreamAddedRemovedChangedOrUnchanged() {
        let changes = RunChanges(from: [("door", door), ("yard", yard), ("desk", ["--video=/dev/video0"])],
                                 to: [("gate", ["--video=test"]), ("door", door),
                                      ("desk", ["--video=/dev/video0", "--audio=default"])])
        #expect(changes.added == ["gate"])
        #expect(changes.removed == ["yard"])
        #expect(changes.changed == ["desk"])
        #expect(changes.replaced.isEmpty)
        #expect(changes.unchanged == ["door"])
        #expect(!changes.serverChanged)
        #expect(changes.summary == "reloaded: starting gate; stopping yard; restarting desk; unchanged door")
    }

    @Test func theSameWordsInAnotherPlaceOfTheFileLeaveAStreamAlone() {
        let changes = RunChanges(from: [("door", door), ("yard", yard)], to: [("yard", yard), ("door", door)])
        #expect(changes == RunChanges(from: [], to: []).with(unchanged: ["yard", "door"]))
    }

    @Test func otherRenditionsOrSegmentsStartANewStream() {
        let changes = RunChanges(from: [("yard", yard), ("door", door)],
                                 to: [("yard", ["--video=test", "--ladder=source,720p", "--out=/srv/live/yard"]),
                                      ("door", door + ["--segment-duration=4"])])
        #expect(changes.changed == ["yard", "door"])
        #expect(changes.replaced == ["yard", "door"])
        let bitRate = RunChanges(from: [("door", door)], to: [("door", door + ["--video-bitrate=2M"])])
        #expect(bitRate.changed == ["door"] && bitRate.replaced.isEmpty)
    }

    @Test func theServersSettingsAreComparedToo() {
        let changes = RunChanges(from: [("door", door)], to: [("door", door)],
                                 server: (["--listen=:8080"], ["--listen=:8081"]))
        #expect(changes.serverChanged && changes.unchanged == ["door"])
        #expect(RunChanges(from: [], to: []).summary == "reloaded: no streams")
    }
}

private extension RunChanges {
    func with(unchanged: [String]) -> RunChanges {
        var changes = self
        changes.unchanged = unchanged
        return changes
    }
}
