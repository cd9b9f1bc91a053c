import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `/snapshot.jpg` and `/recordings/thumbnail.jpg`: the stream's keyframes as JPEGs, checked against
/// what ffmpeg decodes from the same segment.
@Suite(.serialized) struct ServedPictureTests {
    /// The first picture of `path` as 8-bit grey, full range, as ffmpeg decodes and converts it.
    static func greyPlane(_ path: String, in work: URL) throws -> [UInt8] {
        let output = work.appendingPathComponent("grey-\(UUID().uuidString).raw")
        let result = try ExternalTools.run("ffmpeg", ["-v", "error", "-y", "-i", path, "-frames:v", "1",
                                                      "-vf", "scale=out_range=full,format=gray", "-f", "rawvideo", output.path])
        try #require(result.succeeded, "\(result.stderr)")
        return Array(try Data(contentsOf: output))
    }

    /// Mean absolute difference of two grey planes of the same size, 0 to 255.
    static func meanDifference(_ first: [UInt8], _ second: [UInt8]) throws -> Double {
        try #require(first.count == second.count && !first.isEmpty, "planes of \(first.count) and \(second.count) bytes")
        let total = zip(first, second).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
        return Double(total) / Double(first.count)
    }

    /// The init section and `segment` of a stream as one file ffmpeg reads.
    static func joined(_ stream: URL, segment: String, into work: URL) throws -> String {
        let path = work.appendingPathComponent("joined-\(UUID().uuidString).mp4")
        let bytes = try Data(contentsOf: stream.appendingPathComponent("init.mp4"))
            + Data(contentsOf: stream.appendingPathComponent(segment))
        try bytes.write(to: path)
        return path.path
    }

    static func picturesMade(_ served: ServedStream) throws -> Double {
        try #require(try served.metrics()["hlscap_pictures_made_total"])
    }

    @Test(arguments: ["h264", "hevc"]) func theSnapshotIsTheNewestSegmentsKeyframe(codec: String) throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // testsrc2 moves: every segment starts with a different picture.
        let stream = try ServeCommandTests.packaged(["--segment-duration", "1", "--video-codec", codec], in: directory)
        let playlistURL = stream.appendingPathComponent("playlist.m3u8")
        let playlist = try MediaPlaylist.parse(String(contentsOf: playlistURL, encoding: .utf8))
        try #require(playlist.segments.count >= 3, "\(playlist.segments.count) segments")
        let served = try ServedStream.start(["serve", stream.path, "--listen", "127.0.0.1:0"])
        defer { served.process.send(SIGTERM) }

        let reply = try served.get("snapshot.jpg")
        #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
        #expect(reply.headers["content-type"] == "image/jpeg" && reply.headers["cache-control"] == "no-cache")
        let tag = try #require(reply.headers["etag"])
        let snapshot = directory.appendingPathComponent("snapshot.jpg")
        try reply.body.write(to: snapshot)
        let probed = try ExternalTools.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,width,height",
                                                       "-of", "csv=p=0", snapshot.path])
        let size = try ExternalTools.ffprobeVideoSize(path: stream.appendingPathComponent("init.mp4").path)
        #expect(probed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "mjpeg,\(size.width),\(size.height)",
                "\(probed.stdout) \(probed.stderr)")

        // The picture is the last segment's first frame, not the one before.
        let last = try #require(playlist.segments.last?.uri)
        let before = playlist.segments[playlist.segments.count - 2].uri
        let picture = try Self.greyPlane(snapshot.path, in: directory)
        let lastFrame = try Self.greyPlane(Self.joined(stream, segment: last, into: directory), in: directory)
        let earlierFrame = try Self.greyPlane(Self.joined(stream, segment: before, into: directory), in: directory)
        let difference = try Self.meanDifference(picture, lastFrame)
        let fromEarlier = try Self.meanDifference(picture, earlierFrame)
        #expect(difference < 3, "mean difference \(difference) from the last segment's first frame")
        #expect(fromEarlier > difference * 3 && fromEarlier > 5, "\(fromEarlier) from the earlier segment's, \(difference) from the last's")

        // Asked again for the same segment: the same bytes, not made again, and 304 for the same tag.
        let made = try Self.picturesMade(served)
        #expect(made == 1)
        let again = try served.get("snapshot.jpg")
        #expect(again.body == reply.body && again.headers["etag"] == tag)
        #expect(try served.get("snapshot.jpg", headers: ["If-None-Match": tag]).status == 304)
        #expect(try Self.picturesMade(served) == made)

        // A playlist whose newest segment is another: another picture, that segment's.
        let text = try String(contentsOf: playlistURL, encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        let lastLine = try #require(lines.lastIndex(of: last))
        let shorter = lines[..<(lastLine - 1)].joined(separator: "\n") + "\n"
        try shorter.write(to: playlistURL, atomically: true, encoding: .utf8)
        let older = try served.get("snapshot.jpg")
        #expect(older.status == 200 && older.headers["etag"] != tag)
        try older.body.write(to: snapshot)
        let olderPicture = try Self.greyPlane(snapshot.path, in: directory)
        let olderDifference = try Self.meanDifference(olderPicture, earlierFrame)
        #expect(olderDifference < 3, "mean difference \(olderDifference) from \(before)'s first frame")
        #expect(try Self.picturesMade(served) == made + 1)
    }

    @Test func noSegmentYetIs404AndATokenIsAskedFor() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A live stream that has not written its first segment: a playlist that lists none.
        let empty = directory.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        try "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:0\n"
            .write(to: empty.appendingPathComponent("playlist.m3u8"), atomically: true, encoding: .utf8)
        let waiting = try ServedStream.start(["serve", empty.path, "--listen", "127.0.0.1:0"])
        defer { waiting.process.send(SIGTERM) }
        let none = try waiting.get("snapshot.jpg")
        let reason = String(decoding: none.body, as: UTF8.self)
        #expect(none.status == 404 && reason.hasPrefix("no segment yet") && reason.split(separator: "\n").count == 1, "\(reason)")

        // Behind a token, like every file of the stream.
        let stream = try ServeCommandTests.packaged([], in: directory)
        let token = "viewer-\(UUID().uuidString)"
        let served = try ServedStream.start(["serve", stream.path, "--listen", "127.0.0.1:0", "--auth-token", token])
        defer { served.process.send(SIGTERM) }
        #expect(try served.get("snapshot.jpg").status == 401)
        #expect(try served.get("snapshot.jpg?token=wrong").status == 403)
        let allowed = try served.get("snapshot.jpg?token=" + token)
        #expect(allowed.status == 200 && allowed.headers["content-type"] == "image/jpeg")
        #expect(try served.get("snapshot.jpg", headers: ["Authorization": "Bearer " + token]).status == 200)
    }

    /// A recording of `source` (`--video` and `--audio` and their options), `seconds` long in files of 5 s,
    /// and what `hlscap recordings --json` says of it.
    static func record(_ source: [String], seconds: Int, codec: String, in directory: URL) throws -> (folder: URL, files: [[String: Any]]) {
        let folder = directory.appendingPathComponent("rec")
        let made = try ExternalTools.runHlscap(["live"] + source + ["--no-realtime", "--duration", String(seconds),
                                                "--out", directory.appendingPathComponent("stream").path, "--quiet",
                                                "--record", folder.path + "/%H-%M-%S.mp4", "--record-every", "5s",
                                                "--record-codec", codec], timeoutSeconds: 180)
        try #require(made.succeeded, "\(made.stderr)")
        let listed = try ExternalTools.runHlscap(["recordings", folder.path, "--json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
        return (folder, try #require(document["files"] as? [[String: Any]]))
    }

    static func date(_ text: Any?) throws -> Date { try #require(ProgramDateTime.parse(Substring(text as? String ?? ""))) }

    @Test func thumbnailsOfTheRecordingsAreMadeOnceAFragment() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A moving picture (testsrc2 looped: the test source's keyframes are all its white flash), recorded
        // at 640x480 in HEVC, the recorder's default codec.
        let fixture = ExternalTools.fixturesDirectory.appendingPathComponent("h264-aac.mp4").path
        let (folder, files) = try Self.record(["--video", fixture, "--loop", "--record-size", "640x480"], seconds: 12,
                                              codec: "hevc", in: directory)
        try #require(files.count >= 2, "\(files)")
        let served = try ServedStream.start(["serve", directory.appendingPathComponent("stream").path,
                                             "--recordings", folder.path, "--listen", "127.0.0.1:0"])
        defer { served.process.send(SIGTERM) }

        // The index lists what hlscap recordings lists: the same files, starts and ends.
        let index = try served.get("recordings/index.json")
        #expect(index.status == 200 && index.headers["content-type"] == "application/json")
        let listed = try #require(try JSONSerialization.jsonObject(with: index.body) as? [String: Any])
        let indexed = try #require(listed["files"] as? [[String: Any]])
        #expect(indexed.map { $0["path"] as? String } == files.map { $0["path"] as? String })
        #expect(indexed.map { $0["start"] as? String } == files.map { $0["start"] as? String })
        #expect(indexed.map { $0["end"] as? String } == files.map { $0["end"] as? String })
        #expect(listed["directory"] == nil, "the folder's own path stays on the server")

        // A moment inside the second file: the fragment holding it, 320 wide, its picture the fragment's first.
        let file = files[1]
        let fragments = try #require(file["fragments"] as? [[String: Any]])
        try #require(fragments.count >= 2)
        let fragmentStart = try Self.date(fragments[1]["start"])
        let at = fragmentStart.addingTimeInterval(0.3)
        let reply = try served.get("recordings/thumbnail.jpg?at=" + ProgramDateTime.format(at))
        #expect(reply.status == 200 && reply.headers["content-type"] == "image/jpeg",
                "\(String(decoding: reply.body, as: UTF8.self))")
        let thumbnail = directory.appendingPathComponent("thumbnail.jpg")
        try reply.body.write(to: thumbnail)
        let probed = try ExternalTools.run("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,width,height",
                                                       "-of", "csv=p=0", thumbnail.path])
        #expect(probed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "mjpeg,320,240", "\(probed.stdout)")
        // ffmpeg keeps the first frame at or after -ss: a hundredth of a second early, as the times given are
        // rounded to the millisecond and a frame lasts 33 ms.
        let recording = folder.appendingPathComponent(file["path"] as! String).path
        func firstPicture(of fragment: [String: Any], named name: String) throws -> [UInt8] {
            let offsetSeconds = max(0, try Self.date(fragment["start"]).timeIntervalSince(try Self.date(file["start"])) - 0.01)
            let reference = directory.appendingPathComponent(name)
            let decoded = try ExternalTools.run("ffmpeg", ["-v", "error", "-y", "-i", recording,
                                                           "-ss", String(format: "%.3f", offsetSeconds), "-frames:v", "1",
                                                           "-vf", "scale=320:240", reference.path])
            try #require(decoded.succeeded, "\(decoded.stderr)")
            return try Self.greyPlane(reference.path, in: directory)
        }
        let reference = try firstPicture(of: fragments[1], named: "reference.png")
        let difference = try Self.meanDifference(try Self.greyPlane(thumbnail.path, in: directory), reference)
        #expect(difference < 5, "mean difference \(difference) from the fragment's first frame")

        // The same fragment again, by another moment in it: from the cache.
        #expect(try Self.picturesMade(served) == 1)
        let again = try served.get("recordings/thumbnail.jpg?at=" + ProgramDateTime.format(at.addingTimeInterval(0.2)))
        #expect(again.status == 200 && again.body == reply.body && again.headers["etag"] == reply.headers["etag"])
        #expect(try Self.picturesMade(served) == 1)
        // The start of a file exactly as the index gives it, to the millisecond, is inside it.
        #expect(try served.get("recordings/thumbnail.jpg?at=" + (files[0]["start"] as! String)).status == 200)
        #expect(try Self.picturesMade(served) == 2)
        // Another fragment, another picture: that fragment's own first frame. (Two fragments of the looped
        // clip can start on pictures that are nearly alike, so it is compared with its own frame, and is
        // asked to be nearer to it than to the other fragment's.)
        let other = try served.get("recordings/thumbnail.jpg?at=" + (fragments[0]["start"] as! String))
        #expect(other.status == 200 && other.body != reply.body)
        #expect(try Self.picturesMade(served) == 3)
        try other.body.write(to: thumbnail)
        let otherPicture = try Self.greyPlane(thumbnail.path, in: directory)
        let ownDifference = try Self.meanDifference(otherPicture, try firstPicture(of: fragments[0], named: "reference0.png"))
        let otherDifference = try Self.meanDifference(otherPicture, reference)
        #expect(ownDifference < 5 && ownDifference < otherDifference,
                "mean difference \(ownDifference) from its fragment's first frame, \(otherDifference) from the other fragment's")

        let outside = try served.get("recordings/thumbnail.jpg?at=2020-01-01T00:00:00Z")
        #expect(outside.status == 404 && String(decoding: outside.body, as: UTF8.self) == "no recording at 2020-01-01T00:00:00.000Z\n")
        let bad = try served.get("recordings/thumbnail.jpg?at=yesterday")
        #expect(bad.status == 400 && String(decoding: bad.body, as: UTF8.self).hasPrefix("at=yesterday is not a date-time"))
        #expect(try served.get("recordings/thumbnail.jpg").status == 400)
    }

    @Test func thePreviewPageShowsTheRecordingsAndPlaysOneFromAThumbnail() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // H.264, which Chromium's Media Source plays.
        let (folder, files) = try Self.record(["--video", "test", "--audio", "test", "--size", "640x360"], seconds: 12,
                                              codec: "h264", in: directory)
        try #require(files.count >= 3, "\(files)")
        let token = "viewer-\(UUID().uuidString)"
        let served = try ServedStream.start(["serve", directory.appendingPathComponent("stream").path,
                                             "--recordings", folder.path, "--listen", "127.0.0.1:0", "--auth-token", token])
        defer { served.process.send(SIGTERM) }
        #expect(try served.get("recordings/thumbnail.jpg?at=" + (files[0]["start"] as! String)).status == 401)

        // One at each file's start and one at every whole minute inside a file (a 12 s recording may cross one),
        // but not a minute in the second another file starts (one moment, one thumbnail), each carrying the token.
        var expected: [String] = []
        let startSeconds = Set(try files.map { try Self.date($0["start"]).timeIntervalSince1970.rounded(.down) })
        for file in files {
            let start = try Self.date(file["start"]), end = try Self.date(file["end"])
            expected.append(file["start"] as? String ?? "")
            var minute = (start.timeIntervalSince1970 / 60).rounded(.down) * 60 + 60
            while minute < end.timeIntervalSince1970 {
                if !startSeconds.contains(minute) { expected.append(ProgramDateTime.format(Date(timeIntervalSince1970: minute))) }
                minute += 60
            }
        }
        // The thumbnail of the second file's start is clicked (after a whole minute inside the first, if any).
        let secondFile = try #require(expected.firstIndex(of: files[1]["start"] as? String ?? ""))
        let page = try ExternalTools.runJSONTool("preview_timeline.py", [served.base.absoluteString + "?token=" + token,
                                                                         "--click", String(secondFile), "--seconds", "2"],
                                                 timeoutSeconds: 120)
        #expect(page.ok, "\(page.text)")
        let thumbnails = try #require(page.report["thumbnails"] as? [[String: Any]])
        #expect(thumbnails.map { $0["at"] as? String } == expected, "\(thumbnails)")
        #expect(thumbnails.allSatisfy { $0["naturalWidth"] as? Int == 320 }, "\(thumbnails)")
        #expect(thumbnails.allSatisfy { ($0["src"] as? String ?? "").contains("token=" + token) }, "\(thumbnails)")
        // The clicked thumbnail (a whole file) plays the recordings from its moment, not the live stream from
        // its start: the range playlist, with the token, and what is on screen dated just after that moment.
        let playing = try #require(page.report["playing"] as? String)
        #expect(playing.contains("/recordings/playlist.m3u8?start=") && playing.contains("token=" + token), "\(playing)")
        let clicked = try Self.date(page.report["clickedAt"])
        #expect(page.report["clickedAt"] as? String == files[1]["start"] as? String)
        let shown = Date(timeIntervalSince1970: try #require(page.report["shownDate"] as? Double) / 1000)
        let played = try #require(page.report["playedSeconds"] as? Double)
        #expect(shown >= clicked && shown.timeIntervalSince(clicked) < played + 1, "\(page.text)")
    }
}

