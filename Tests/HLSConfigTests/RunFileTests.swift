import HLSConfig
import Testing

/// A run file's own problems, each with the line and column of what to change.
@Suite struct RunFileTests {
    static let schema = RunFileSchema(streamKeys: [
        "video": .value, "audio": .value, "out": .value, "record": .value, "size": .value, "reconnect": .flag,
        "ladder": .list, "header": .repeated,
    ])

    static func read(_ text: String) throws(RunFileError) -> RunFile {
        try RunFile(text: text, schema: schema)
    }

    /// The problems of `text`, as "LINE:COLUMN: message".
    static func problems(_ text: String) -> [String] {
        do {
            _ = try read(text)
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    @Test func streamsTakeTheDefaultsAndTheirOwnSettingsUnderOut() throws {
        let file = try Self.read("""
            out: /srv/live
            defaults:
              audio: none
              reconnect: true
            streams:
              door:
                video: rtsp://10.0.0.5/1
                reconnect: false
              yard:
                video: test
                ladder: [720p, 360p]
                header: ['A: 1', 'B: 2']
              garage:
              own:
                video: test
                out: /elsewhere/own
            server:
              listen: ":8080"
            recordings:
              min-free: 2G
            """)
        #expect(file.streams.map(\.name) == ["door", "yard", "garage", "own"])
        #expect(file.streams.map(\.outputFolder) == ["/srv/live/door", "/srv/live/yard", "/srv/live/garage", "/elsewhere/own"])
        let door = file.streams[0]
        #expect(door.setting("reconnect")?.value == .flag(false))
        #expect(door.setting("reconnect")?.mark == YAMLMark(line: 8, column: 5))
        #expect(door.setting("audio")?.value == .text("none"))
        #expect(door.setting("audio")?.mark == YAMLMark(line: 3, column: 3))
        #expect(door.mark == YAMLMark(line: 6, column: 3))
        #expect(file.streams[1].setting("ladder")?.value == .text("720p,360p"))
        #expect(file.streams[1].setting("header")?.value == .texts(["A: 1", "B: 2"]))
        #expect(file.streams[2].settings.map(\.key) == ["audio", "reconnect"])
        #expect(file.server == [Setting("listen", .text(":8080"), at: YAMLMark(line: 18, column: 3))])
        #expect(file.recordings.map(\.key) == ["min-free"])
    }

    /// `recordings:` holds the retention every stream's recordings share; `defaults:` may hold a stream's own.
    @Test func theRecordingsSectionIsReadWithItsMarks() throws {
        let file = try RunFile(text: """
            defaults:
              keep-size: 10G
            streams:
              a:
            recordings:
              keep-size: 50G
              min-free: 2G
            """, schema: RunFileSchema(streamKeys: ["keep-size": .value, "min-free": .value]))
        #expect(file.recordings == [Setting("keep-size", .text("50G"), at: YAMLMark(line: 6, column: 3)),
                                    Setting("min-free", .text("2G"), at: YAMLMark(line: 7, column: 3))])
        #expect(file.streams.first?.setting("keep-size")?.value == .text("10G"))
    }

    @Test func aSyntaxErrorIsOneProblemAtLibyamlsMark() {
        #expect(Self.problems("streams:\n  door:\n    video: test\n   audio: none\n")
                    == ["4:4: did not find expected key (while parsing a block mapping that starts at line 2)"])
    }

    @Test func anUnknownKeyNamesTheNearestKnownOne() {
        #expect(Self.problems("""
            streams:
              door:
                video: test
                ladders: 720p
                colour: red
              yard:
                video: test
                tls-cert: a.pem
            stream:
              x: 1
            """) == [
                "4:5: stream door: unknown key 'ladders'; did you mean 'ladder'?",
                "5:5: stream door: unknown key 'colour'",
                "8:5: stream yard: unknown key 'tls-cert'; it is the server's: put it under server:",
                "9:1: unknown key 'stream'; did you mean 'streams'?",
            ])
        #expect(Self.problems("video: test\nstreams:\n  a:\n") == [
            "1:1: unknown key 'video'; a stream's setting goes under streams: NAME: (or defaults: for every stream)",
        ])
        #expect(Self.problems("streams:\n  a: {serve: ':80'}\n") == [
            "2:7: stream a: unknown key 'serve'; every stream is served by the file's one server: give its address as "
                + "server: listen",
        ])
        #expect(Self.problems("streams:\n  a:\nserver:\n  listn: ':80'\n")
                    == ["4:3: server: unknown key 'listn'; did you mean 'listen'?"])
        #expect(Self.problems("streams:\n  a:\nrecordings:\n  keep-size: 50G\n  keep: 7d\n") == [
            "5:3: recordings: unknown key 'keep'; how long recordings are kept is each stream's: put it under "
                + "defaults: (or a stream)",
        ])
    }

    @Test func aWrongTypeSaysWhatTheKeyTakes() {
        #expect(Self.problems("""
            out: [a, b]
            streams:
              door:
                video: {url: x}
                reconnect: yes
                record:
                ladder: [720p, [360p]]
              yard: test
            """) == [
                "1:6: the file: 'out' takes a value, not a sequence",
                "4:12: stream door: 'video' takes a value, not a mapping",
                "5:16: stream door: 'reconnect' takes true or false, not 'yes'",
                "6:12: stream door: 'record' has no value; give it one or leave the key out",
                "7:20: stream door: 'ladder' takes a value, not a sequence",
                "8:9: stream yard takes a mapping (keys and their values), not a value",
            ])
        #expect(Self.problems("- a\n- b\n")
                    == ["1:1: the file takes a mapping (out, defaults, streams, server and recordings), not a sequence"])
        #expect(Self.problems("streams: [a, b]\n")
                    == ["1:10: streams takes a mapping (stream names, each with its settings), not a sequence"])
    }

    @Test func aFileWithoutStreamsIsRefused() {
        #expect(Self.problems("") == ["1:1: the file lists no stream; add streams: with a name and its settings"])
        #expect(Self.problems("out: x\n") == ["1:1: the file lists no stream; add streams: with a name and its settings"])
        #expect(Self.problems("streams: {}\n") == ["1:10: streams lists no stream; add a name and its settings"])
    }

    @Test func aDuplicateStreamOrKeyIsRefusedWhereItIsWrittenAgain() {
        #expect(Self.problems("""
            streams:
              door:
                video: test
                video: /dev/video0
              door:
                video: test
            """) == [
                "4:5: stream door: 'video' is given twice (first at line 3); keep one",
                "5:3: streams: 'door' is given twice (first at line 2); keep one",
            ])
    }

    @Test func streamNamesAreFolderNames() {
        #expect(Self.problems("out: o\nstreams:\n  front door:\n  ../up:\n  ok_1-2:\n") == [
            "3:3: stream name 'front door' is also its folder's name: use letters, digits, '-' and '_' only",
            "4:3: stream name '../up' is also its folder's name: use letters, digits, '-' and '_' only",
        ])
    }

    @Test func twoStreamsInOneFolderOrOneRecordingAreRefused() {
        #expect(Self.problems("""
            out: /srv/live
            streams:
              a:
                record: /srv/rec/a.mp4
              b:
                out: /srv/live/a/
              c:
                out: /srv/other/../live/a
                record: /srv/rec/./a.mp4
            """) == [
                "6:5: stream b writes /srv/live/a, as stream a (line 3) does; give one of them its own out",
                "8:5: stream c writes /srv/live/a, as stream a (line 3) does; give one of them its own out",
                "9:5: stream c records into /srv/rec/a.mp4, as stream a (line 3) does; give each stream its own record path",
            ])
    }

    @Test func theNearestKeyIsFoundByEditDistance() {
        #expect(RunFileSchema.nearest(to: "ladders", among: ["ladder", "loop", "listen"]) == "ladder")
        #expect(RunFileSchema.nearest(to: "recrod", among: ["record", "reconnect"]) == "record")
        #expect(RunFileSchema.nearest(to: "zzzzzz", among: ["record", "reconnect"]) == nil)
    }
}
