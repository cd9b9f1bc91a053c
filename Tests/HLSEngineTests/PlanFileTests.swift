import Foundation
import HLSEngine
import HLSKit
import HLSMedia
import Testing

/// Every rule of `hlscap file` between its options, decided by `FilePlan`.
@Suite struct PlanFileTests {
    static let from = Date(timeIntervalSince1970: 1_796_119_320)
    static let to = from.addingTimeInterval(780)

    /// Each option that asks for an encoding, in the order a conflict names the first of them.
    static let encodingOptions: [(String, @Sendable (inout FileRequest) -> Void)] = [
        ("size", { $0.size = "1280x" }),
        ("fps", { $0.frameRate = Rational(30, 1) }),
        ("video-codec", { $0.videoCodec = .h264 }),
        ("ladder", { $0.ladder = [LadderRung(height: 480)] }),
        ("video-bitrate", { $0.videoBitrate = 1_000_000 }),
        ("preset", { $0.preset = "slow" }),
        ("audio-bitrate", { $0.audioBitrate = 96_000 }),
        ("audio-rate", { $0.audioSampleRate = 44_100 }),
        ("audio-channels", { $0.audioChannelCount = 1 }),
    ]

    @Test func withoutAModeEachInputIsDecidedAlone() throws {
        let plan = try FileCase("") { _ in }.plan()
        #expect(plan.mode == .automatic && plan.encodingOptions.isEmpty && plan.clip == nil)
        #expect(plan.transcodeSettings.segmentMilliseconds == 2000)
        #expect(try FileCase("") { $0.copy = true }.plan().mode == .copy)
        #expect(try FileCase("") { $0.transcode = true }.plan().mode == .transcode)
    }

    @Test func eachEncodingOptionTranscodesAndConflictsWithCopy() throws {
        for (option, edit) in Self.encodingOptions {
            let plan = try FileCase(option, edit).plan()
            #expect(plan.mode == .transcode && plan.encodingOptions == [option], "\(option)")
            #expect(throws: PlanError.copyConflict(option), "\(option)") {
                try FileCase(option) { $0.copy = true; edit(&$0) }.plan()
            }
        }
        #expect(throws: PlanError.copyConflict("transcode")) {
            try FileCase("") { $0.copy = true; $0.transcode = true; $0.preset = "slow" }.plan()
        }
        #expect(throws: PlanError.copyConflict("fps")) {
            try FileCase("") { $0.copy = true; $0.audioChannelCount = 1; $0.frameRate = Rational(25, 1) }.plan()
        }
    }

    @Test func theEncodingsSettings() throws {
        let plan = try FileCase("") {
            $0.size = "x720"
            $0.frameRate = Rational(30_000, 1001)
            $0.videoCodec = .hevc
            $0.preset = "slow"
            $0.audioBitrate = 96_000
            $0.audioSampleRate = 44_100
            $0.audioChannelCount = 1
            $0.audioTracks = [2, 3]
            $0.segmentMilliseconds = 4000
        }.plan()
        let settings = plan.transcodeSettings
        #expect(settings.size == "x720" && settings.frameRate == Rational(30_000, 1001) && settings.videoCodec == .hevc)
        #expect(settings.preset == "slow" && settings.audio.bitrate == 96_000 && settings.audio.sampleRate == 44_100)
        #expect(settings.audio.channelCount == 1 && settings.audioTracks == .numbers([2, 3]))
        #expect(settings.segmentMilliseconds == 4000)
        // Choosing audio tracks is no encoding of its own.
        #expect(try FileCase("") { $0.audioTracks = [1]; $0.copy = true }.plan().mode == .copy)
    }

    static let refusals: [(FileCase, PlanError)] = [
        (FileCase("--ladder source") { $0.ladder = [.source, LadderRung(height: 360)] }, .ladderSourceInFile),
        (FileCase("--ladder with --size") { $0.ladder = [LadderRung(height: 480)]; $0.size = "640x360" }, .ladderConflict("size")),
        (FileCase("--ladder with --video-bitrate") { $0.ladder = [LadderRung(height: 480)]; $0.videoBitrate = 1_000_000 },
         .ladderConflict("video-bitrate")),
        (FileCase("--segment-duration 0.1") { $0.segmentMilliseconds = 100 }, .segmentDuration),
        (FileCase("--segment-duration 61") { $0.segmentMilliseconds = 61_000 }, .segmentDuration),
        (FileCase("no --out or --publish") { $0.outputDirectory = nil }, .noDestination),
        (FileCase("no input") { $0.inputs = [] }, .noInputFile),
        (FileCase("--to without --from") { $0.clipTo = to }, .clipStartMissing),
        (FileCase("--duration without --from") { $0.clipDurationSeconds = 60 }, .clipStartMissing),
        (FileCase("--from alone") { $0.clipFrom = from }, .clipEndMissing),
        (FileCase("--to and --duration") { $0.clipFrom = from; $0.clipTo = to; $0.clipDurationSeconds = 60 }, .clipEndTwice),
        (FileCase("--to before --from") { $0.clipFrom = to; $0.clipTo = from }, .clipEndNotAfterStart(from: to, to: from)),
        (FileCase("--to at --from") { $0.clipFrom = from; $0.clipTo = from }, .clipEndNotAfterStart(from: from, to: from)),
        (FileCase("-o without a clip") { $0.outputFile = "clip.mp4" }, .clipFileWithoutClip("clip.mp4")),
        (FileCase("-o not .mp4") { $0.clipFrom = from; $0.clipTo = to; $0.outputDirectory = nil; $0.outputFile = "clip.mov" },
         .clipFileName("clip.mov")),
        (FileCase("-o with --out") { $0.clipFrom = from; $0.clipTo = to; $0.outputFile = "clip.mp4" }, .clipFileAndStream("out")),
        (FileCase("-o with --publish") {
            $0.clipFrom = from; $0.clipTo = to; $0.outputDirectory = nil; $0.publishing = true; $0.outputFile = "clip.mp4"
        }, .clipFileAndStream("publish")),
        (FileCase("a clip with --transcode") { $0.clipFrom = from; $0.clipTo = to; $0.transcode = true; $0.preset = "slow" },
         .clipEncoded("transcode")),
        (FileCase("a clip with --size") { $0.clipFrom = from; $0.clipTo = to; $0.size = "640x360" }, .clipEncoded("size")),
        (FileCase("a clip with --cut-at") { $0.clipFrom = from; $0.clipTo = to; $0.cutMicroseconds = [1_000_000] }, .clipCuts),
        (FileCase("-o with --encrypt") {
            $0.clipFrom = from; $0.clipTo = to; $0.outputDirectory = nil; $0.outputFile = "clip.mp4"
            $0.encryption.method = .aes128; $0.encryption.keyDirectory = "/var/keys"
        }, .clipFileEncrypted("clip.mp4")),
        (FileCase("a clip of files") { $0.clipFrom = from; $0.clipTo = to; $0.inputs = ["a.mp4", "b.mp4"] },
         .clipNeedsFolder(["a.mp4", "b.mp4"])),
    ]

    @Test(arguments: refusals)
    func refusal(_ item: FileCase, _ error: PlanError) {
        #expect(throws: error) { try item.plan() }
    }

    @Test func aFolderIsAClipOfRecordings() throws {
        let folders: Set = ["/srv/rec"]
        #expect(throws: PlanError.folderWithoutClip("/srv/rec")) {
            try FileCase("") { $0.inputs = ["/srv/rec"] }.plan(folders: folders)
        }
        #expect(throws: PlanError.clipNeedsFolder(["/srv/rec", "/srv/rec"])) {
            try FileCase("") { $0.inputs = ["/srv/rec", "/srv/rec"]; $0.clipFrom = Self.from; $0.clipTo = Self.to }
                .plan(folders: folders)
        }
        let stream = try FileCase("") { $0.inputs = ["/srv/rec"]; $0.clipFrom = Self.from; $0.clipTo = Self.to }
            .plan(folders: folders)
        #expect(stream.clip == .init(from: Self.from, to: Self.to))
        let file = try FileCase("") {
            $0.inputs = ["/srv/rec"]
            $0.clipFrom = Self.from
            $0.clipDurationSeconds = 780
            $0.outputDirectory = nil
            $0.outputFile = "clip.mp4"
        }.plan(folders: folders)
        #expect(file.clip == .init(from: Self.from, to: Self.to))
    }
}
