import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// HEVC inputs copied by the built binary, checked with ffmpeg, GStreamer, the sync checker and the box
/// reader (Chromium on Linux has no HEVC decoder): a phone's portrait clip plays whole, turned and in sync
/// as its input; HDR inputs keep their colour description and get the right VIDEO-RANGE.
@Suite struct HEVCCopyTests {
    /// A phone's portrait recording: HEVC tagged `hvc1` in a MOV, stored landscape with a display matrix that
    /// turns it a quarter clockwise, a keyframe every second (CRA pictures after the first IDR), AAC.
    static let phoneClip = SyncClip(
        name: "hevc-phone.mov", seconds: 4, video: TranscodeInputs.video(640, 360, 30),
        audio: TranscodeInputs.stereo48k,
        encoding: ["-c:v", "libx265", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-tag:v", "hvc1",
                   "-x265-params", "log-level=error:keyint=30:min-keyint=30:scenecut=0"] + TranscodeInputs.aac,
        rotationDegrees: 90)
    /// Automatic mode: no --copy, so the test also shows that HEVC is no longer sent to the encoders.
    static let phoneCase = TranscodeCase(name: "hevc-phone-automatic", clips: [phoneClip], outputSize: (640, 360))
    static let maxSyncDifferenceMilliseconds = 1.0
    /// Slack for rounding in ffprobe's printed times and for resampling in GStreamer.
    static let timeSlackSeconds = 0.002

    private var phone: PackagedStream {
        get throws { try TranscodeWorkspace.shared.stream(Self.phoneCase) }
    }

    private var phoneInput: String {
        get throws { try TranscodeWorkspace.shared.input(Self.phoneClip).path }
    }

    @Test func automaticModeCopiesThePhoneClip() throws {
        let stream = try phone
        try ExternalTools.validateStream(stream.directory)
        #expect(stream.result.stdout.contains("mode copy ("), "\(stream.result.stdout)")
        #expect(stream.result.stderr.isEmpty, "\(stream.result.stderr)")
        #expect(try InitSection(stream.bytes("init.mp4")).videoSampleEntry == "hvc1")
        let master = try String(contentsOf: stream.directory.appendingPathComponent("master.m3u8"), encoding: .utf8)
        #expect(master.contains("CODECS=\"hvc1.1.6.L"), "\(master)")
        #expect(!master.contains("VIDEO-RANGE"), "the input states no colour description: \(master)")
    }

    @Test func ffmpegDecodesEveryFrame() throws {
        let stream = try phone
        #expect(try ExternalTools.ffmpegDecodeErrors(path: stream.playlistURL.path) == "")
        let inputFrames = try ExternalTools.ffprobeFrameCount(path: phoneInput, stream: "v:0")
        #expect(inputFrames == 120)
        #expect(try ExternalTools.ffprobeFrameCount(path: stream.playlistURL.path, stream: "v:0") == inputFrames)
        #expect(try ExternalTools.ffprobeFrameCount(path: stream.playlistURL.path, stream: "a:0")
                == ExternalTools.ffprobePacketCount(path: phoneInput, stream: "a:0"))
    }

    @Test func gstreamerDecodesEveryFrame() throws {
        let stream = try phone
        let decoded = try ExternalTools.gstreamerDecode(directory: stream.directory)
        #expect(decoded.ok, "\(decoded.report)")
        #expect(try decoded.videoFrames == ExternalTools.ffprobeFrameCount(path: phoneInput, stream: "v:0"),
                "\(decoded.report)")
        let audioSeconds = try ExternalTools.presentationSpanSeconds(path: stream.playlistURL.path, stream: "a:0")
        #expect(abs(decoded.audioSeconds - audioSeconds) <= Self.timeSlackSeconds, "\(decoded.report)")
    }

    @Test func rotationStaysInTheTrackHeader() throws {
        let stream = try phone
        let inputMatrix = try Self.ffprobeDisplayMatrix(phoneInput)
        // rotate=90: a quarter turn clockwise, (0, −1, 1, 0) in 16.16, and w = 1 in 2.30.
        #expect(inputMatrix == [0, -65_536, 0, 65_536, 0, 0, 0, 0, 1 << 30])
        #expect(try Self.videoTrackHeader(stream.bytes("init.mp4")).matrix == inputMatrix)
        #expect(try Self.ffprobeDisplayMatrix(stream.playlistURL.path) == inputMatrix)
        let inputRotation = try Self.ffprobeVideo(phoneInput, entries: "stream_side_data=rotation")
        #expect(inputRotation == "90")
        #expect(try Self.ffprobeVideo(stream.playlistURL.path, entries: "stream_side_data=rotation") == inputRotation)
    }

    @Test func audioAndVideoAreAsInSyncAsTheInput() throws {
        let stream = try phone
        let pairs = Self.phoneCase.syncPairs
        let input = try ExternalTools.avSync(path: phoneInput, minimumPairs: pairs)
        let output = try ExternalTools.avSync(path: stream.playlistURL.path, minimumPairs: pairs)
        #expect(input.ok, "\(input.report)")
        #expect(output.ok, "\(output.report)")
        let inputOffsets = try Self.syncOffsets(input.report)
        let outputOffsets = try Self.syncOffsets(output.report)
        #expect(inputOffsets.count == outputOffsets.count, "input \(input.report), output \(output.report)")
        for (before, after) in zip(inputOffsets, outputOffsets) {
            #expect(abs(before - after) <= Self.maxSyncDifferenceMilliseconds,
                    "input \(input.report), output \(output.report)")
        }
    }

    @Test func segmentsStartWithAnIRAPPictureAndDecodeTimesAreContinuous() throws {
        let problems = try phone.segmentProblems()
        #expect(problems.isEmpty, "\(problems)")
    }

    /// The committed HDR fixtures: HLG in MPEG-TS (parameter sets in-band) and full-range PQ in an `hev1` MP4.
    @Test(arguments: [
        ("hevc-hlg.ts", MP4Box.ColourInformation(primaries: 9, transferCharacteristics: 18, matrixCoefficients: 9,
                                                 isFullRange: false), "HLG"),
        ("hevc-pq.mp4", MP4Box.ColourInformation(primaries: 9, transferCharacteristics: 16, matrixCoefficients: 9,
                                                 isFullRange: true), "PQ"),
    ])
    func hdrInputKeepsItsColourDescription(fixture: String, colour: MP4Box.ColourInformation, range: String) throws {
        let stream = try PackagedStream.package(fixture)
        defer { stream.remove() }
        let moov = try #require(try MP4Box.parse(stream.bytes("init.mp4")).first("moov"))
        let hvc1 = try #require(moov.all("trak/mdia/minf/stbl/stsd/hvc1").first)
        #expect(try hvc1.first("colr")?.colourInformation() == colour)
        let input = ExternalTools.fixturesDirectory.appendingPathComponent(fixture).path
        let inputColour = try Self.ffprobeColour(input)
        #expect(inputColour.contains("bt2020"), "\(inputColour)")
        #expect(try Self.ffprobeColour(stream.playlistURL.path) == inputColour)
        let master = try String(contentsOf: stream.directory.appendingPathComponent("master.m3u8"), encoding: .utf8)
        #expect(master.contains(",VIDEO-RANGE=\(range)\n"), "\(master)")
        #expect(try ExternalTools.ffmpegDecodeErrors(path: stream.playlistURL.path) == "")
        let inputFrames = try ExternalTools.ffprobeFrameCount(path: input, stream: "v:0")
        #expect(try ExternalTools.ffprobeFrameCount(path: stream.playlistURL.path, stream: "v:0") == inputFrames)
        let decoded = try ExternalTools.gstreamerDecode(directory: stream.directory)
        #expect(decoded.ok, "\(decoded.report)")
        #expect(decoded.videoFrames == inputFrames, "\(decoded.report)")
    }

    @Test func pictureWithoutAColourDescriptionGetsNoColr() throws {
        let stream = try PackagedStream.package("hevc-portrait.mov")
        defer { stream.remove() }
        let moov = try #require(try MP4Box.parse(stream.bytes("init.mp4")).first("moov"))
        let hvc1 = try #require(moov.all("trak/mdia/minf/stbl/stsd/hvc1").first)
        #expect(hvc1.children.map(\.type) == ["hvcC"])
    }

    static func videoTrackHeader(_ file: [UInt8]) throws -> MP4Box.TrackHeader {
        let moov = try #require(try MP4Box.parse(file).first("moov"))
        let video = try #require(try moov.all("trak").first { try $0.first("mdia/hdlr")?.handlerType() == "vide" })
        return try #require(try video.first("tkhd")?.trackHeader())
    }

    /// The display matrix ffprobe reads (a MOV's `tkhd`, or the HLS stream's init section), nine values
    /// printed three to a line behind a row number.
    static func ffprobeDisplayMatrix(_ path: String) throws -> [Int32] {
        let arguments = ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream_side_data=displaymatrix",
                         "-of", "default=noprint_wrappers=1:nokey=1", path]
        let result = try ExternalTools.run("ffprobe", arguments)
        guard result.succeeded else {
            throw ExternalToolError.failed(command: "ffprobe " + arguments.joined(separator: " "), result: result)
        }
        let rows = result.stdout.split(separator: "\n").filter { $0.contains(":") }.prefix(3)
        return rows.flatMap { $0.split(separator: " ").dropFirst().compactMap { Int32($0) } }
    }

    /// Range, matrix, transfer and primaries as ffprobe names them.
    static func ffprobeColour(_ path: String) throws -> String {
        try ffprobeVideo(path, entries: "stream=color_range,color_space,color_transfer,color_primaries")
    }

    /// The first line ffprobe prints for `entries` of the first video stream (the HLS demuxer lists it twice).
    static func ffprobeVideo(_ path: String, entries: String) throws -> String {
        let arguments = ["-v", "error", "-select_streams", "v:0", "-show_entries", entries, "-of", "csv=p=0", path]
        let result = try ExternalTools.run("ffprobe", arguments)
        guard result.succeeded else {
            throw ExternalToolError.failed(command: "ffprobe " + arguments.joined(separator: " "), result: result)
        }
        return result.stdout.split(separator: "\n").first.map(String.init) ?? ""
    }

    /// The flash-to-beep offsets in an av_sync.py report line.
    static func syncOffsets(_ report: String) throws -> [Double] {
        let line = report.split(separator: "\n").first { $0.hasPrefix("{") }.map(String.init) ?? ""
        let fields = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        return try #require(fields?["offsets_ms"] as? [Double], "\(report)")
    }
}
