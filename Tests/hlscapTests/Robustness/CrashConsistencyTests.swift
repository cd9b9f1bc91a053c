import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `kill -9` at seeded random instants of live runs (plain, published to an nginx origin, a ladder,
/// with a recording) and file runs. After each kill every listed file is complete and decodes, the
/// stream validates, a file run leaves no playlist, and `--resume` continues the live stream with a
/// discontinuity counted in EXT-X-DISCONTINUITY-SEQUENCE once it leaves the window.
@Suite(.serialized) struct CrashConsistencyTests {
    /// `make crash-campaign` sets 50 runs; the test suite runs one of each scenario.
    static let runs = Int(ProcessInfo.processInfo.environment["HLSCAP_CRASH_RUNS"] ?? "") ?? Scenario.allCases.count
    static let seed = UInt64(ProcessInfo.processInfo.environment["HLSCAP_CRASH_SEED"] ?? "") ?? 1
    /// Replays one run by its number, with the same kill instant.
    static let onlyRun = Int(ProcessInfo.processInfo.environment["HLSCAP_CRASH_RUN"] ?? "")
    /// The killed run dies between its start and this many seconds: before its first segment, mid-way
    /// through one, or after several have left the window.
    static let latestLiveKillSeconds = 9.0
    static let window = "3"
    /// A cleanly stopped run before the crash, so the crashed run's resume adds a discontinuity.
    static let firstRunSeconds = "2"
    /// The run that resumes the crashed stream: three segments push every crashed one out of the window.
    static let resumeSeconds = "6"

    enum Scenario: String, CaseIterable {
        case live, publish, ladder, record, file
    }

    @Test func killNineLeavesAConsistentStreamThatResumes() throws {
        var random = SeededGenerator(state: Self.seed)
        var passed: [Scenario: Int] = [:]
        var failures: [String] = []
        for run in 0..<Self.runs {
            let scenario = Scenario.allCases[run % Scenario.allCases.count]
            // A file run is killed at a share of the time a clean run of it takes.
            let killAt = scenario == .file ? Double.random(in: 0.02...0.98, using: &random)
                : Double.random(in: 0.2...Self.latestLiveKillSeconds, using: &random)
            let label = "run \(run) \(scenario.rawValue), kill after \(String(format: "%.2f", killAt))"
                + (scenario == .file ? " of a clean run" : " s")
            if let only = Self.onlyRun, only != run { continue }
            let issuesBefore = failures.count
            do {
                let problems = try scenario == .file ? Self.crashFileRun(killShare: killAt)
                    : Self.crashLiveRun(scenario, killSeconds: killAt)
                failures += problems.map { "\(label): \($0)" }
            } catch {
                failures.append("\(label): \(error)")
            }
            if failures.count == issuesBefore { passed[scenario, default: 0] += 1 }
            print("\(label): \(failures.count == issuesBefore ? "ok" : "FAILED")")
        }
        let total = passed.values.reduce(0, +)
        print("crash consistency: \(total) of \(Self.onlyRun == nil ? Self.runs : 1) runs consistent ("
              + Scenario.allCases.map { "\($0.rawValue) \(passed[$0, default: 0])" }.joined(separator: ", ") + ")")
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    // MARK: live

    /// A clean 2 s run, a `--resume` run killed after `killSeconds`, then a clean `--resume` run.
    static func crashLiveRun(_ scenario: Scenario, killSeconds: Double) throws -> [String] {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let origin = scenario == .publish ? try OriginFixture() : nil
        defer { origin?.stop() }
        let originStream = origin.map { $0.directory.appendingPathComponent("root/live") }

        var arguments = ["live", "--video", "test", "--audio", "test", "--quiet", "--window", window,
                         "--out", stream.path]
        switch scenario {
        case .ladder: arguments += ["--size", "640x360", "--ladder", "360p,240p"]
        case .publish: arguments += ["--size", "320x180", "--publish", try #require(origin).url + "live/"]
        default: arguments += ["--size", "320x180"]
        }
        var problems: [String] = []

        // Only the killed run is paced by the clock; the clean ones before and after it are made as fast as
        // they encode.
        let first = try ExternalTools.runHlscap(arguments + ["--no-realtime", "--duration", firstRunSeconds])
        guard first.succeeded else { return ["the first run failed (\(first.exitStatus)): \(first.stderr)"] }
        let beforeCrash = try mediaPlaylists(in: stream)

        let recording = directory.appendingPathComponent("rec.mp4")
        let crashed = try ExternalTools.startHlscap(arguments + ["--resume"]
            + (scenario == .record ? ["--record", recording.path, "--record-codec", "h264"] : []))
        Thread.sleep(forTimeInterval: killSeconds)
        guard crashed.isRunning else { return ["the killed run had already exited: \(crashed.finish(timeoutSeconds: 1).stderr)"] }
        crashed.send(SIGKILL)
        _ = crashed.finish(timeoutSeconds: LiveStream.stopSeconds)

        problems += try consistencyProblems(stream)
        let afterCrash = try mediaPlaylists(in: stream)
        problems += resumeProblems(before: beforeCrash, after: afterCrash)
        if let originStream {
            problems += try consistencyProblems(originStream).map { "origin: \($0)" }
        }
        if scenario == .record {
            problems += try recordingProblems(recording)
        }

        let resumed = try ExternalTools.runHlscap(arguments + ["--resume", "--no-realtime", "--duration", resumeSeconds])
        guard resumed.succeeded else { return problems + ["the resumed run failed (\(resumed.exitStatus)): \(resumed.stderr)"] }
        problems += try consistencyProblems(stream)
        let final = try mediaPlaylists(in: stream)
        problems += resumeProblems(before: afterCrash, after: final)
        problems += final.filter { !$0.value.endList }.map { "\($0.key) has no ENDLIST after a clean stop" }
        if let originStream {
            problems += try consistencyProblems(originStream).map { "origin: \($0)" }
            let published = try mediaPlaylists(in: originStream)
            if published.mapValues(\.segments) != final.mapValues(\.segments) {
                problems.append("the origin's playlists differ from the local ones after the drain")
            }
        }
        return problems
    }

    /// The media playlists below `stream` by their relative path (playlist.m3u8, 360p/playlist.m3u8, …).
    static func mediaPlaylists(in stream: URL) throws -> [String: MediaPlaylist] {
        var playlists: [String: MediaPlaylist] = [:]
        for path in PackagedStream.files(below: stream) where path.hasSuffix("playlist.m3u8") {
            playlists[path] = try MediaPlaylist.parse(String(contentsOf: stream.appendingPathComponent(path), encoding: .utf8))
        }
        return playlists
    }

    /// What is wrong with a stream directory no process writes any more: `hlscap validate` finds no
    /// error, and for every media playlist, its init section and every segment it lists decode
    /// without an error in ffmpeg.
    static func consistencyProblems(_ stream: URL) throws -> [String] {
        let playlists = try mediaPlaylists(in: stream)
        guard !playlists.isEmpty else {
            let files = PackagedStream.files(below: stream)
            return files.contains("master.m3u8") ? ["master.m3u8 without a media playlist: \(files)"] : []
        }
        var problems: [String] = []
        let validation = try ExternalTools.runHlscap(["validate", stream.path])
        if !validation.succeeded {
            problems.append("hlscap validate exits \(validation.exitStatus): \(validation.stdout)\(validation.stderr)")
        }
        for (path, playlist) in playlists.sorted(by: { $0.key < $1.key }) {
            let base = stream.appendingPathComponent(path).deletingLastPathComponent()
            var groups: [(mapURI: String, uris: [String])] = []
            for segment in playlist.segments {
                let mapURI = segment.mapURI ?? "init.mp4"
                if groups.last?.mapURI == mapURI { groups[groups.count - 1].uris.append(segment.uri) }
                else { groups.append((mapURI, [segment.uri])) }
            }
            for (index, group) in groups.enumerated() {
                var bytes = Data()
                for uri in [group.mapURI] + group.uris {
                    guard let file = FileManager.default.contents(atPath: base.appendingPathComponent(uri).path) else {
                        problems.append("\(path) lists \(uri), which is missing")
                        continue
                    }
                    bytes += file
                }
                let joined = FileManager.default.temporaryDirectory
                    .appendingPathComponent("crash-\(UUID().uuidString)-\(index).mp4")
                try bytes.write(to: joined)
                defer { try? FileManager.default.removeItem(at: joined) }
                let errors = try ExternalTools.ffmpegDecodeErrors(path: joined.path)
                if !errors.isEmpty {
                    problems.append("\(path): \(group.mapURI) + \(group.uris.joined(separator: " ")) do not decode: \(errors)")
                }
            }
        }
        return problems
    }

    /// What is wrong with `after`, a later version of each playlist in `before` written by the run that
    /// resumed it: segments still listed are unchanged, the resumed run's first segment carries the
    /// discontinuity, and the discontinuity sequence counts every discontinuity that left the window.
    static func resumeProblems(before: [String: MediaPlaylist], after: [String: MediaPlaylist]) -> [String] {
        var problems: [String] = []
        for (path, old) in before {
            guard let new = after[path] else {
                problems.append("\(path) disappeared")
                continue
            }
            let firstResumed = old.mediaSequence + old.segments.count
            if new.mediaSequence < old.mediaSequence {
                problems.append("\(path): media sequence went back from \(old.mediaSequence) to \(new.mediaSequence)")
                continue
            }
            // Did the resumed run's first segment get listed at all? A killed run may not reach it.
            let resumedAny = new.mediaSequence + new.segments.count > firstResumed
            func discontinuity(_ sequence: Int) -> Bool {
                sequence < firstResumed ? old.segments[sequence - old.mediaSequence].discontinuity
                    : sequence == firstResumed && !old.segments.isEmpty
            }
            for (offset, segment) in new.segments.enumerated() {
                let sequence = new.mediaSequence + offset
                if sequence < firstResumed, segment != old.segments[sequence - old.mediaSequence] {
                    problems.append("\(path): segment \(sequence) changed on resume")
                } else if resumedAny, segment.discontinuity != discontinuity(sequence) {
                    problems.append("\(path): segment \(sequence) (\(segment.uri)) has discontinuity \(segment.discontinuity)")
                }
            }
            let left = (old.mediaSequence..<new.mediaSequence).filter { discontinuity($0) }.count
            if new.discontinuitySequence != old.discontinuitySequence + left {
                problems.append("\(path): EXT-X-DISCONTINUITY-SEQUENCE \(new.discontinuitySequence), expected "
                                + "\(old.discontinuitySequence) + \(left) that left the window")
            }
        }
        return problems
    }

    /// What is wrong with a recording whose writer was killed: every complete fragment decodes.
    static func recordingProblems(_ recording: URL) throws -> [String] {
        guard let bytes = FileManager.default.contents(atPath: recording.path) else { return [] }
        let complete = completeFragmentsLength(Array(bytes))
        guard complete > 0 else { return [] }
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("crash-rec-\(UUID().uuidString).mp4")
        try bytes.prefix(complete).write(to: prefix)
        defer { try? FileManager.default.removeItem(at: prefix) }
        var problems: [String] = []
        let errors = try ExternalTools.ffmpegDecodeErrors(path: prefix.path)
        if !errors.isEmpty { problems.append("the recording's complete fragments do not decode: \(errors)") }
        let completeFrames = try ExternalTools.ffprobeFrameCount(path: prefix.path)
        let frames = try ExternalTools.ffprobeFrameCount(path: recording.path)
        if frames < completeFrames {
            problems.append("the recording decodes \(frames) frames, its complete fragments \(completeFrames)")
        }
        return problems
    }

    /// Bytes from the start of an fMP4 file to the end of its last complete moof + mdat pair; 0 when
    /// the moov or the first fragment is incomplete.
    static func completeFragmentsLength(_ bytes: [UInt8]) -> Int {
        var offset = 0
        var complete = 0
        var previousType = ""
        while offset + 8 <= bytes.count {
            var size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            if size == 1, offset + 16 <= bytes.count {
                size = bytes[offset + 8..<offset + 16].reduce(0) { $0 << 8 | Int($1) }
            }
            guard size >= 8, offset + size <= bytes.count else { break }
            offset += size
            if type == "mdat" && previousType == "moof" { complete = offset }
            previousType = type
        }
        return complete
    }

    // MARK: file

    /// A ladder from a file (two rungs and the audio rendition, about 2 s here), killed after
    /// `killShare` of the time a clean run of it took: no playlist, whatever else is left.
    static func crashFileRun(killShare: Double) throws -> [String] {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = ExternalTools.fixturesDirectory.appendingPathComponent("h264-bframes-aac.mp4").path
        let arguments = ["file", input, "--ladder", "720p,360p", "--quiet", "--out"]
        let started = Date()
        let clean = try ExternalTools.runHlscap(arguments + [directory.appendingPathComponent("clean").path])
        guard clean.succeeded else { return ["the clean run failed (\(clean.exitStatus)): \(clean.stderr)"] }
        let cleanSeconds = Date().timeIntervalSince(started)

        let stream = directory.appendingPathComponent("stream")
        let hlscap = try ExternalTools.startHlscap(arguments + [stream.path])
        Thread.sleep(forTimeInterval: killShare * cleanSeconds)
        let finished = !hlscap.isRunning
        hlscap.send(SIGKILL)
        let result = hlscap.finish(timeoutSeconds: LiveStream.stopSeconds)
        if finished {
            // Too late to kill: the run must have finished cleanly, with a stream that validates.
            print("  the file run had finished before the kill")
            guard result.succeeded else { return ["exited \(result.exitStatus) before the kill: \(result.stderr)"] }
            return try consistencyProblems(stream)
        }
        let left = PackagedStream.files(below: stream).filter { $0.hasSuffix(".m3u8") }
        guard !left.isEmpty else { return [] }
        // Killed after its last playlist went in place (while it still exited): then every playlist
        // must be there, listing what a clean run lists, with ENDLIST, and the stream must validate.
        let cleanStream = directory.appendingPathComponent("clean")
        let cleanPlaylists = PackagedStream.files(below: cleanStream).filter { $0.hasSuffix(".m3u8") }
        let killed = try mediaPlaylists(in: stream)
        let expected = try mediaPlaylists(in: cleanStream)
        let unlike = expected.keys.sorted().filter {
            killed[$0]?.segments.map(\.uri) != expected[$0]?.segments.map(\.uri) || killed[$0]?.endList != true
        }
        guard left == cleanPlaylists, unlike.isEmpty else {
            return ["a killed file run left \(left), unlike a clean run in \(unlike)"]
        }
        print("  the file run was killed after its last playlist")
        return try consistencyProblems(stream)
    }
}
