import Foundation
import HLSEngine
import HLSKit
import HLSMedia
import Testing

/// What a live plan decides from the opened sources' facts, and which encoder it takes.
@Suite struct PlanSourceTests {
    static let url = "rtsp://camera.local/stream"

    /// A copied source's keyframes cut its segments: the target duration each one keeps to, and what is said.
    @Test(arguments: [
        // Keyframes on every boundary: the segment duration.
        (2.0, 2.0, false, 2, nil),
        (2.0, 1.0, false, 2, nil),
        (2.0, 1.0, true, 3, "jitter"),
        (2.0, 0.5, true, 3, "jitter"),
        // Keyframes off the boundaries: the longest whole number of intervals.
        (2.0, 3.0, false, 3, "longer"),
        (2.0, 1.5, false, 3, "longer"),
        (2.0, 0.9, false, 3, "longer"),
        (6.0, 4.0, true, 8, "longer"),
        (2.0, 2.0, true, 2, nil),
        (1.5, 0.5, false, 2, nil),
        // No second keyframe within the search.
        (2.0, nil, false, 12, "unbounded"),
        (20.0, nil, true, 20, "unbounded"),
    ] as [(Double, Double?, Bool, Int, String?)])
    func copiedTargetDuration(segmentSeconds: Double, interval: Double?, stamped: Bool, target: Int, notice: String?) {
        let (seconds, said) = LivePlan.copiedTargetDuration(segmentSeconds: segmentSeconds, keyframeIntervalSeconds: interval,
                                                            input: "cam", stampedOnCapture: stamped)
        #expect(seconds == target)
        switch said {
        case .copiedSegmentsJitter(let input, let keyframe, let longest, let segment)?:
            #expect(notice == "jitter" && input == "cam" && keyframe == interval && segment == segmentSeconds)
            #expect(abs(longest - (interval ?? 0) - (segmentSeconds / (interval ?? 1) - 0.01).rounded(.up) * (interval ?? 0)) < 1e-9)
        case .copiedSegmentsLonger(let input, let keyframe, let longest, let segment)?:
            #expect(notice == "longer" && input == "cam" && keyframe == interval && segment == segmentSeconds)
            #expect(longest > segmentSeconds && Int((longest + 0.25).rounded()) == target)
        case .copiedSegmentsUnbounded(let input, let searched, let segment)?:
            #expect(notice == "unbounded" && input == "cam" && searched == 12 && segment == segmentSeconds)
        case nil:
            #expect(notice == nil)
        default:
            Issue.record("unexpected \(String(describing: said))")
        }
    }

    static func urlPlan(_ edit: @escaping @Sendable (inout LiveRequest) -> Void = { _ in }) throws -> LivePlan {
        try LiveCase("") {
            $0.video = .media(url)
            $0.audio = nil
            edit(&$0)
        }.request.plan()
    }

    static func copied(_ interval: Double?, size: (Int, Int) = (1920, 1081), framesPerSecond: Int? = 25) -> SourceFacts {
        var media = SourceFacts.Media(name: url)
        media.copiesVideo = true
        media.keyframeIntervalSeconds = interval
        media.videoSize = size
        media.videoFramesPerSecond = framesPerSecond
        var facts = SourceFacts()
        facts.media = [media]
        facts.copiesVideo = true
        return facts
    }

    @Test func aURLKeepsItsOwnSizeAndRateUnlessOthersAreAskedFor() throws {
        var plan = try Self.urlPlan()
        #expect(try plan.resolve(opened: Self.copied(2)).isEmpty)
        #expect(plan.configuration.size == OutputSize(width: 1920, height: 1080) && plan.configuration.framesPerSecond == 25)
        #expect(plan.configuration.targetDurationSeconds == 2)
        var asked = try Self.urlPlan { $0.size = OutputSize(width: 640, height: 360); $0.framesPerSecond = 30 }
        var facts = Self.copied(nil)
        facts.copiesVideo = false
        facts.media[0].copiesVideo = false
        _ = try asked.resolve(opened: facts)
        #expect(asked.configuration.size == OutputSize(width: 640, height: 360) && asked.configuration.framesPerSecond == 30)
        #expect(asked.configuration.targetDurationSeconds == nil)
        var tiny = try Self.urlPlan()
        _ = try tiny.resolve(opened: Self.copied(2, size: (1, 1), framesPerSecond: nil))
        #expect(tiny.configuration.size == OutputSize(width: 1280, height: 720) && tiny.configuration.framesPerSecond == 30)
    }

    @Test func aCopiedURLsKeyframesSetTheTargetDurationAndAreSaid() throws {
        var plan = try Self.urlPlan()
        let notices = try plan.resolve(opened: Self.copied(4))
        #expect(plan.configuration.targetDurationSeconds == 4)
        #expect(notices == [.copiedSegmentsLonger(input: Self.url, keyframeIntervalSeconds: 4, longestSeconds: 4, segmentSeconds: 2)])
    }

    @Test func whatASourceCannotCopyOrCarryIsSaid() throws {
        var facts = Self.copied(2)
        facts.media[0].copyRefusal = "its video is VP9, which HLS cannot carry copied; it is encoded"
        facts.media[0].otherStreams = ["subtitle", "data"]
        var copying = try Self.urlPlan()
        #expect(try copying.resolve(opened: facts) == [
            .copyRefused(input: Self.url, reason: "its video is VP9, which HLS cannot carry copied; it is encoded"),
            .streamsLeftOut(input: Self.url, streams: ["subtitle", "data"]),
        ])
        var encoding = try Self.urlPlan { $0.transcode = true }
        #expect(try encoding.resolve(opened: facts) == [.streamsLeftOut(input: Self.url, streams: ["subtitle", "data"])])
    }

    @Test func aCopiedCameraSetsTheModeAndTheTargetDuration() throws {
        var plan = try LiveCase("") { $0.video = .device("/dev/video0"); $0.audio = nil }.request.plan()
        var facts = SourceFacts()
        facts.cameraCopy = .init(name: "/dev/video0", keyframeIntervalSeconds: 1, width: 1281, height: 721, framesPerSecond: 15)
        facts.copiesVideo = true
        let notices = try plan.resolve(opened: facts)
        #expect(plan.configuration.size == OutputSize(width: 1280, height: 720) && plan.configuration.framesPerSecond == 15)
        #expect(plan.configuration.targetDurationSeconds == 3)
        #expect(notices == [.copiedSegmentsJitter(input: "/dev/video0", keyframeIntervalSeconds: 1, longestSeconds: 3,
                                                  segmentSeconds: 2)])
    }

    @Test func theSourceRungTakesTheSourcesHeight() throws {
        var plan = try Self.urlPlan { $0.ladder = [.source, LadderRung(height: 480), LadderRung(height: 360)] }
        #expect(try plan.resolve(opened: Self.copied(2, size: (1280, 720))).isEmpty)
        #expect(plan.configuration.ladder?.map(\.height) == [720, 480, 360])
        #expect(plan.configuration.ladder?.first?.isSource == true)
    }

    @Test func aRungNotBelowTheSourceIsRefused() throws {
        var plan = try Self.urlPlan { $0.ladder = [.source, LadderRung(height: 720)] }
        do {
            _ = try plan.resolve(opened: Self.copied(2, size: (1280, 720)))
            Issue.record("a 720p rung beside a 720-line source was planned")
        } catch {
            guard case .ladderSource(let reason) = error else { throw error }
            #expect(reason.description == "the 720p rung is not below the 720-line source; give rungs below it beside source")
        }
    }

    @Test func anEncodedSourceRungIsSaid() throws {
        var plan = try Self.urlPlan { $0.ladder = [.source, LadderRung(height: 360)]; $0.transcode = true }
        var facts = Self.copied(nil, size: (640, 480))
        facts.copiesVideo = false
        facts.media[0].copiesVideo = false
        #expect(try plan.resolve(opened: facts) == [.sourceRungEncoded(OutputSize(width: 640, height: 480))])
        #expect(plan.configuration.ladder?.map(\.height) == [480, 360])
    }

    typealias Refusals = [(kind: VideoEncoderKind, reason: String)]

    @Test func softwareAloneIsNotProbed() throws {
        var plan = try LiveCase("") { _ in }.request.plan()
        let notices = try plan.chooseEncoder { _, _ in
            Issue.record("probed")
            return (nil, [])
        }
        #expect(notices.isEmpty)
    }

    @Test func autoFallsBackToSoftwareSayingWhy() throws {
        var plan = try LiveCase("") { $0.encoder = "auto"; $0.videoCodec = .hevc }.request.plan()
        let notices = try plan.chooseEncoder { kinds, settings in
            #expect(kinds == VideoEncoderKind.hardware + [.software] && settings.codec == .hevc)
            return (.software, [(.vaapi, "no /dev/dri/renderD128"), (.v4l2m2m, "no /dev/video11"), (.nvenc, "no libcuda")])
        }
        #expect(notices == [.softwareEncoderFallback(
            why: "vaapi: no /dev/dri/renderD128; v4l2m2m: no /dev/video11; nvenc: no libcuda", encoder: "libx265")])
    }

    @Test func autoWithHardwareSaysNothing() throws {
        var plan = try LiveCase("") { $0.encoder = "auto" }.request.plan()
        #expect(try plan.chooseEncoder { _, _ in (.vaapi, []) }.isEmpty)
    }

    @Test(arguments: [(VideoCodec.h264, "x264"), (.hevc, "x265")])
    func aMissingHardwareEncoderIsUnavailable(codec: VideoCodec, software: String) throws {
        var plan = try LiveCase("") { $0.encoder = "nvenc"; $0.videoCodec = codec }.request.plan()
        #expect(throws: PlanError.encoderUnavailable(.nvenc, reason: "no libcuda", software: software)) {
            try plan.chooseEncoder { _, _ in (nil, [(.nvenc, "no libcuda")]) }
        }
    }

    /// `--input-format` against what the camera offers: refused with what it has and the kinds it does offer.
    @Test func aCameraWithoutTheFormatAskedForIsRefused() {
        let vivid: [(code: String, inputFormat: CameraInputFormat?)] = [("YUYV", .raw), ("RGB3", nil), ("NV12", nil)]
        #expect(CaptureInputs.missingFormat(.raw, device: "/dev/video0", formats: vivid) == nil)
        #expect(CaptureInputs.missingFormat(.h264, device: "/dev/video0", formats: vivid)
            == .cameraFormatMissing(device: "/dev/video0", asked: .h264, readable: ["YUYV"], unreadable: 2, offered: [.raw]))
        let both: [(code: String, inputFormat: CameraInputFormat?)] = [("MJPG", .mjpeg), ("YUYV", .raw)]
        #expect(CaptureInputs.missingFormat(.h264, device: "/dev/video2", formats: both)
            == .cameraFormatMissing(device: "/dev/video2", asked: .h264, readable: ["MJPG", "YUYV"], unreadable: 0,
                                    offered: CameraInputFormat.allCases.filter { $0 != .h264 }))
        #expect(CaptureInputs.missingFormat(.mjpeg, device: "/dev/video4", formats: [("Y10 ", nil)])
            == .cameraFormatMissing(device: "/dev/video4", asked: .mjpeg, readable: [], unreadable: 1, offered: []))
    }
}
