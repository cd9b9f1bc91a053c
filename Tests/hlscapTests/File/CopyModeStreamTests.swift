import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// Every copyable fixture, packaged by the built binary and checked with readers nobody here wrote
/// (ffmpeg, ffprobe) and with the test-only box reader.
@Suite struct CopyModeStreamTests {
    static let hevcFixtures = ["hevc-portrait.mov", "hevc-hlg.ts", "hevc-pq.mp4"]
    static let copyableFixtures = [
        "h264-aac.mp4", "h264-bframes-aac.mp4", "aac-priming-editlist.mp4", "h264-aac.mkv", "h264-aac.ts",
        "video-only.mp4", "audio-only.m4a", "long-gop.mp4", "flash-beep.mp4",
    ] + hevcFixtures

    @Test(arguments: copyableFixtures)
    func playlistFollowsTheRFC(fixture: String) throws {
        let stream = try PackagedStream.package(fixture)
        defer { stream.remove() }
        let playlist = try stream.playlist()
        #expect(playlist.version == 6)
        #expect(try String(contentsOf: stream.playlistURL, encoding: .utf8).contains("#EXT-X-VERSION:6\n"))
        #expect(playlist.playlistType == .vod)
        #expect(playlist.endList)
        #expect(playlist.independentSegments)
        #expect(playlist.mediaSequence == 1)
        #expect(!playlist.segments.isEmpty)
        for (index, segment) in playlist.segments.enumerated() {
            #expect(segment.uri == String(format: "seg/%06d.m4s", index + 1))
            #expect(segment.mapURI == "init.mp4")
            #expect(Int(segment.durationSeconds.rounded()) <= playlist.targetDurationSeconds)
            #expect(segment.durationSeconds > 0)
        }
        let tracks = try InitSection(stream.bytes("init.mp4"))
        let iFramePlaylist = tracks.videoTrackID != nil ? ["iframes.m3u8"] : []
        #expect(stream.files() == iFramePlaylist + ["init.mp4", "master.m3u8", "playlist.m3u8"]
                + playlist.segments.map(\.uri))

        let master = try String(contentsOf: stream.directory.appendingPathComponent("master.m3u8"), encoding: .utf8)
        #expect(master.hasPrefix("#EXTM3U\n#EXT-X-VERSION:6\n#EXT-X-INDEPENDENT-SEGMENTS\n#EXT-X-STREAM-INF:BANDWIDTH="))
        #expect(master.contains("\nplaylist.m3u8\n"))
        #expect(master.hasSuffix(",URI=\"iframes.m3u8\"\n") == (tracks.videoTrackID != nil))
        #expect(master.contains("CODECS=\"\(tracks.videoSampleEntry ?? "avc1").") == (tracks.videoTrackID != nil))
        #expect(master.contains("mp4a.40.2") == (tracks.audioTrackID != nil))
        #expect(master.contains("RESOLUTION=") == (tracks.videoTrackID != nil))
    }

    @Test(arguments: copyableFixtures)
    func segmentsStartWithAnIDRAndDecodeTimesAreContinuous(fixture: String) throws {
        let stream = try PackagedStream.package(fixture)
        defer { stream.remove() }
        let problems = try stream.segmentProblems()
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test(arguments: copyableFixtures)
    func ffmpegDecodesEveryFrameWithoutError(fixture: String) throws {
        let stream = try PackagedStream.package(fixture)
        defer { stream.remove() }
        let input = ExternalTools.fixturesDirectory.appendingPathComponent(fixture).path
        #expect(try ExternalTools.ffmpegDecodeErrors(path: stream.playlistURL.path) == "")
        let tracks = try InitSection(stream.bytes("init.mp4"))
        if tracks.videoTrackID != nil {
            #expect(try ExternalTools.ffprobeFrameCount(path: stream.playlistURL.path, stream: "v:0")
                    == ExternalTools.ffprobeFrameCount(path: input, stream: "v:0"))
        }
        if tracks.audioTrackID != nil {
            // Every audio packet is carried, priming included (the input's edit list hides it from its
            // decoder, the output moves it before the first frame instead), and every one decodes.
            let outputFrames = try ExternalTools.ffprobeFrameCount(path: stream.playlistURL.path, stream: "a:0")
            #expect(try outputFrames == ExternalTools.ffprobePacketCount(path: input, stream: "a:0"))
            #expect(try outputFrames == ExternalTools.ffprobePacketCount(path: stream.playlistURL.path, stream: "a:0"))
        }
    }

    @Test func longGroupsOfPicturesAreCutOnlyAtKeyframes() throws {
        let stream = try PackagedStream.package("long-gop.mp4")
        defer { stream.remove() }
        let playlist = try stream.playlist()
        // Keyframes every 5 s in an 11 s file: segments of 5, 5 and 1 s, so the target duration is 5.
        #expect(playlist.segments.map { ($0.durationSeconds * 1000).rounded() } == [5000, 5000, 1000])
        #expect(playlist.targetDurationSeconds == 5)
    }

    @Test func segmentDurationOptionChangesTheCuts() throws {
        let stream = try PackagedStream.package("h264-aac.mp4", extraArguments: ["--segment-duration", "1"])
        defer { stream.remove() }
        // Keyframes every second in a 4 s file.
        #expect(try stream.playlist().segments.map { ($0.durationSeconds * 1000).rounded() }
                == [1000, 1000, 1000, 1000])
    }

    /// A phone's portrait recording keeps its display matrix in copy mode, so players turn it upright.
    @Test func copyModeKeepsTheRotationInTheTrackHeader() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let rotated = directory.appendingPathComponent("portrait.mp4").path
        let input = ExternalTools.fixturesDirectory.appendingPathComponent("h264-aac.mp4").path
        let made = try ExternalTools.run("ffmpeg", ["-nostdin", "-v", "error", "-i", input, "-c", "copy",
                                                    "-metadata:s:v", "rotate=270", rotated])
        #expect(made.succeeded, "\(made.stderr)")
        let output = directory.appendingPathComponent("out")
        let result = try ExternalTools.runHlscap(["file", rotated, "--copy", "--out", output.path])
        #expect(result.succeeded, "\(result.stderr)")
        try ExternalTools.validateStream(output)

        let moov = try #require(try MP4Box.parse(Array(Data(contentsOf: output.appendingPathComponent("init.mp4"))))
            .first("moov"))
        let video = try #require(try moov.all("trak").first { try $0.first("mdia/hdlr")?.handlerType() == "vide" })
        let header = try #require(try video.first("tkhd")?.trackHeader())
        // Turned a quarter clockwise: (0, 1, -1, 0) in 16.16, and w = 1 in 2.30.
        #expect(header.matrix == [0, 65_536, 0, -65_536, 0, 0, 0, 0, 1 << 30])
        let rotation = try ExternalTools.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                         "stream_side_data=rotation", "-of", "csv=p=0",
                                                         output.appendingPathComponent("init.mp4").path])
        #expect(rotation.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "-90")
    }

    /// An H.264 SPS that states its colour description gets a `colr` next to its `avcC`, and the master playlist
    /// a VIDEO-RANGE; the committed fixtures state none and get neither.
    @Test func copyModeKeepsAnH264ColourDescription() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("bt709.mp4").path
        try SyncClip.ffmpeg(["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-t", "1",
                             "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
                             "-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709", input])
        let output = directory.appendingPathComponent("out")
        let result = try ExternalTools.runHlscap(["file", input, "--copy", "--out", output.path])
        #expect(result.succeeded, "\(result.stderr)")
        let avc1 = try #require(try MP4Box.parse(Array(Data(contentsOf: output.appendingPathComponent("init.mp4"))))
            .first("moov/trak/mdia/minf/stbl/stsd/avc1"))
        #expect(avc1.children.map(\.type) == ["avcC", "colr"])
        #expect(try avc1.first("colr")?.colourInformation()
                == MP4Box.ColourInformation(primaries: 1, transferCharacteristics: 1, matrixCoefficients: 1,
                                            isFullRange: false))
        let master = try String(contentsOf: output.appendingPathComponent("master.m3u8"), encoding: .utf8)
        #expect(master.contains(",VIDEO-RANGE=SDR\n"), "\(master)")

        let plain = try PackagedStream.package("h264-aac.mp4")
        defer { plain.remove() }
        #expect(try MP4Box.parse(plain.bytes("init.mp4")).first("moov/trak/mdia/minf/stbl/stsd/avc1/colr") == nil)
        #expect(!(try String(contentsOf: plain.directory.appendingPathComponent("master.m3u8"), encoding: .utf8))
            .contains("VIDEO-RANGE"))
    }

    @Test func audioAndVideoStayInSync() throws {
        let stream = try PackagedStream.package("flash-beep.mp4")
        defer { stream.remove() }
        let sync = try ExternalTools.avSync(path: stream.playlistURL.path, maxOffsetMilliseconds: 1)
        #expect(sync.ok, "\(sync.report)")
    }

    @Test func firstFrameIsPresentedAtTenSecondsAndAudioPrimingPrecedesIt() throws {
        let stream = try PackagedStream.package("aac-priming-editlist.mp4")
        defer { stream.remove() }
        let tracks = try InitSection(stream.bytes("init.mp4"))
        let first = try MP4Box.parse(stream.bytes("seg/000001.m4s"))
        let moof = try #require(first.first("moof"))
        var starts: [UInt32: (decodeTime: UInt64, offset: Int32)] = [:]
        for traf in moof.all("traf") {
            let trackID = try #require(try traf.first("tfhd")?.trackFragmentTrackID())
            let run = try #require(try traf.first("trun")?.trackRun())
            starts[trackID] = (try #require(try traf.first("tfdt")?.baseDecodeTime()),
                               run.entries.first?.compositionOffset ?? 0)
        }
        let videoTrackID = try #require(tracks.videoTrackID)
        let audioTrackID = try #require(tracks.audioTrackID)
        let video = try #require(starts[videoTrackID])
        let audio = try #require(starts[audioTrackID])
        #expect(Int64(video.decodeTime) + Int64(video.offset) == 900_000)
        // The input's edit list skips 1024 priming samples: they sit just before 10 s.
        let audioRate = try #require(tracks.timescales[audioTrackID])
        #expect(Int64(audio.decodeTime) == 10 * Int64(audioRate) - 1024)
    }
}

/// The tracks an init segment declares, read with the test-only box reader.
struct InitSection {
    var videoTrackID: UInt32?
    /// `avc1` or `hvc1`.
    var videoSampleEntry: String?
    var audioTrackID: UInt32?
    var timescales: [UInt32: UInt32] = [:]
    var trackCount = 0

    init(_ bytes: [UInt8]) throws {
        let moov = try #require(try MP4Box.parse(bytes).first("moov"))
        for trak in moov.all("trak") {
            let trackID = try #require(try trak.first("tkhd")?.trackHeader().trackID)
            let handler = try #require(try trak.first("mdia/hdlr")?.handlerType())
            timescales[trackID] = try #require(try trak.first("mdia/mdhd")?.mediaTimescale())
            if handler == "vide" {
                videoTrackID = trackID
                videoSampleEntry = trak.first("mdia/minf/stbl/stsd")?.children.first?.type
            }
            if handler == "soun" { audioTrackID = trackID }
            trackCount += 1
        }
    }
}
