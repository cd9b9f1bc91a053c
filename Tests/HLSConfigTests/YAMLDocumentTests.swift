import HLSConfig
import Testing

@Suite struct YAMLDocumentTests {
    @Test func mappingsSequencesAndScalarsKeepWhereTheyStart() throws {
        let text = """
            # cameras
            out: /srv/live
            streams:
              door:
                video: "rtsp://10.0.0.5/1"
                reconnect: true
              yard: {video: test, ladder: [720p, 360p]}
            """
        let root = try #require(try YAMLDocument.read(text))
        guard case .mapping(let top) = root.content else { Issue.record("root \(root)"); return }
        #expect(root.mark == YAMLMark(line: 2, column: 1))
        #expect(top.map(\.key.scalar) == ["out", "streams"])
        #expect(top[0].value.content == .scalar("/srv/live", plain: true))
        #expect(top[0].value.mark == YAMLMark(line: 2, column: 6))
        guard case .mapping(let streams) = top[1].value.content else { Issue.record("streams \(top[1])"); return }
        #expect(streams[0].key.mark == YAMLMark(line: 4, column: 3))
        guard case .mapping(let door) = streams[0].value.content else { Issue.record("door"); return }
        #expect(door[0].value.content == .scalar("rtsp://10.0.0.5/1", plain: false))
        #expect(door[0].value.mark == YAMLMark(line: 5, column: 12))
        #expect(door[1].value.content == .scalar("true", plain: true))
        guard case .mapping(let yard) = streams[1].value.content,
              case .sequence(let rungs) = yard[1].value.content else { Issue.record("yard"); return }
        #expect(rungs.map(\.scalar) == ["720p", "360p"])
        #expect(rungs[1].mark == YAMLMark(line: 7, column: 38))
    }

    @Test func aSyntaxErrorHasLibyamlsWordsAndPlace() {
        #expect(throws: YAMLError.self) { try YAMLDocument.read("a: b\n  c: d\n") }
        do {
            _ = try YAMLDocument.read("streams:\n  door:\n    video: [test\n")
            Issue.record("an unclosed sequence was read")
        } catch {
            #expect(error.mark.line == 4)
            #expect(error.problem.contains("flow sequence"), "\(error)")
        }
        do {
            _ = try YAMLDocument.read("a: b\n  c: d\n")
        } catch {
            #expect(error.mark == YAMLMark(line: 2, column: 4))
            #expect(error.problem.contains("mapping values are not allowed"), "\(error)")
        }
    }

    @Test func aControlCharacterIsPlacedByItsOffset() {
        do {
            _ = try YAMLDocument.read("a: b\nc: \u{1}\n")
            Issue.record("a control character was read")
        } catch {
            #expect(error.mark == YAMLMark(line: 2, column: 4))
            #expect(error.problem.contains("control characters"), "\(error)")
        }
    }

    @Test func emptyAndCommentOnlyTextsHaveNoRoot() throws {
        #expect(try YAMLDocument.read("") == nil)
        #expect(try YAMLDocument.read("# nothing\n") == nil)
    }

    @Test func aliasesAreResolvedAndDuplicateKeysKept() throws {
        let root = try #require(try YAMLDocument.read("a: &x {k: v}\nb: *x\na: 1\n"))
        guard case .mapping(let pairs) = root.content else { Issue.record("root"); return }
        #expect(pairs.map(\.key.scalar) == ["a", "b", "a"])
        #expect(pairs[1].value.content == pairs[0].value.content)
    }

    @Test func aliasesThatMultiplyAreRefused() {
        var text = "a0: [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1..<9 {
            text = text.replacingOccurrences(of: "a\(level - 1): ", with: "a\(level - 1): &a\(level - 1) ")
            text += "a\(level): [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ") + "]\n"
        }
        #expect(throws: YAMLError.self) { try YAMLDocument.read(text) }
    }

    @Test func nullsAndQuotedWordsAreTold() throws {
        let root = try #require(try YAMLDocument.read("a:\nb: ~\nc: 'null'\n"))
        guard case .mapping(let pairs) = root.content else { Issue.record("root"); return }
        #expect(pairs.map(\.value.isNull) == [true, true, false])
    }
}
