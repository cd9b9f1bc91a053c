import Foundation
import HLSBase
import HLSKit
import HLSMedia
import HLSOutput
import HLSTestSupport
import Testing
@testable import HLSEngine

/// The live engine given video already encoded (a network camera's, copied) beside sound it encodes.
@Suite(.serialized) struct LiveEngineCopyTests {
    /// Copied pictures are written as they are, cut at their own keyframes, the sound encoded beside them:
    /// a valid stream of 1 s segments.
    @Test func copiedVideoIsCutAtItsKeyframesBesideEncodedSound() throws {
        let run = EngineRun(seconds: 4)
        let source = try EncodedSource(run.test, keyframeIntervalFrames: 30)
        let outcome = try run.makeEngine(sources: [source]).run()
        #expect(outcome.failure == nil)
        #expect(outcome.summary.contains("video copied"), "\(outcome.summary)")
        let playlist = try run.playlist()
        #expect(playlist.endList && playlist.segments.count == 4, "\(playlist.render())")
        #expect(playlist.segments.allSatisfy { abs($0.durationSeconds - 1) < 0.04 }, "\(playlist.segments)")
        try run.expectListedFilesStored()
        #expect(try run.validationErrors() == [])
        // The init section describes the camera's own H.264 and the AAC the engine made.
        let initSection = try run.store.read(StreamLayout.initName)
        #expect(initSection.count > 0 && source.encodedFrames == 120, "\(source.encodedFrames) frames encoded")
    }

    /// A live camera's copied samples are written by its own thread when none waits before them: every
    /// picture it sent within the duration is in the stream, a valid one of 1 s segments.
    @Test func aLiveCopiedCameraIsWrittenAsItSends() throws {
        let run = EngineRun(seconds: 3, realtime: true)
        let source = try EncodedSource(run.test, keyframeIntervalFrames: 30)
        let engine = try run.makeEngine(sources: [source])
        let outcome = try engine.run()
        #expect(outcome.failure == nil)
        let playlist = try run.playlist()
        #expect(playlist.endList && playlist.segments.count >= 2, "\(playlist.render())")
        var pictures = 0
        for segment in playlist.segments {
            let moof = try #require(try MP4Box.parse(try run.store.read(segment.uri)).first("moof"))
            // The video track is the first.
            pictures += try #require(try moof.all("traf").first?.first("trun")?.trackRun()).entries.count
        }
        // Every picture of the duration (3 s at 30 fps); what came past its end is left out by design.
        #expect(pictures == 3 * run.test.framesPerSecond && source.handedOn >= pictures,
                "\(pictures) pictures written of \(source.handedOn) handed on")
        #expect(try run.validationErrors() == [])
    }

    /// Keyframes 1.5 s apart for 1 s segments: the engine cuts only at them, never between.
    @Test func segmentsStartOnlyAtTheSourcesKeyframes() throws {
        var run = EngineRun(seconds: 6)
        run.configuration.targetDurationSeconds = 2
        let source = try EncodedSource(run.test, keyframeIntervalFrames: 45)
        _ = try run.makeEngine(sources: [source]).run()
        let playlist = try run.playlist()
        #expect(playlist.segments.dropLast().allSatisfy { abs($0.durationSeconds - 1.5) < 0.04 }, "\(playlist.segments)")
        #expect(try run.validationErrors() == [])
    }
}

/// A ladder whose top rung is the copied video (`--ladder source,…`).
@Suite(.serialized) struct LiveEngineSourceLadderTests {
    /// Keyframes 1.5 s apart for 1 s segments: the copied rung is cut at them, the rung below is encoded
    /// from the decoded pictures with an IDR at exactly those pictures, so both list the same segments,
    /// each starting with a sync sample at the same time, and the rung below holds every picture.
    @Test func theRungsBelowACopiedSourceTakeItsKeyframes() throws {
        var run = EngineRun(seconds: 6)
        run.configuration.targetDurationSeconds = 2
        run.configuration.ladder = [LadderRung.source, LadderRung(height: 48, bitrate: 60_000)]
        run.configuration.ladder = try Ladder.resolvingSource(run.configuration.ladder!, sourceHeight: 96)
        let source = try EncodedSource(run.test, keyframeIntervalFrames: 45)
        let outcome = try run.makeEngine(sources: [source]).run()
        #expect(outcome.failure == nil && outcome.summary.contains("video copied"), "\(outcome.summary)")
        let top = try run.playlist("96p/" + StreamLayout.playlistName)
        let lower = try run.playlist("48p/" + StreamLayout.playlistName)
        #expect(top.segments.count == 4 && top.segments.map(\.uri) == lower.segments.map(\.uri), "\(top.segments)")
        #expect(top.segments.dropLast().allSatisfy { abs($0.durationSeconds - 1.5) < 0.04 }, "\(top.segments)")
        #expect(zip(top.segments, lower.segments).allSatisfy { abs($0.durationSeconds - $1.durationSeconds) < 0.001 })
        var topFrames = 0, lowerFrames = 0
        for segment in top.segments.map(\.uri) {
            let starts = try ["96p", "48p"].map { rung in try Self.videoStart(try run.store.read(rung + "/" + segment)) }
            #expect(starts[0].0 == starts[1].0 && starts[0].1 && starts[1].1, "\(segment): \(starts)")
            topFrames += starts[0].2
            lowerFrames += starts[1].2
        }
        #expect(topFrames == 180 && lowerFrames == topFrames, "\(topFrames) copied, \(lowerFrames) encoded")
        #expect(try run.validationErrors(StreamLayout.masterPlaylistName) == [])
    }

    /// A live source that sends faster than the rung below it is encoded (here everything at once, as a
    /// camera would to a machine too slow for the ladder) is held back once `copiedSamplesWaitingAtMost` of
    /// its samples wait, which is said once; none of its samples is dropped.
    @Test func aLiveSourceFasterThanTheRungsIsHeldBackNotQueuedWithoutBound() throws {
        var run = EngineRun(seconds: 6)
        run.test.audio = false
        run.configuration.targetDurationSeconds = 2
        run.configuration.copiedSamplesWaitingAtMost = 8
        run.configuration.ladder = try Ladder.resolvingSource([LadderRung.source, LadderRung(height: 48, bitrate: 60_000)],
                                                              sourceHeight: 96)
        let source = try BurstSource(run.test, keyframeIntervalFrames: 45)
        let engine = try run.makeEngine(sources: [source])
        let outcome = try engine.run()
        #expect(outcome.failure == nil, "\(outcome.summary)")
        #expect(source.handedOn == 180)
        #expect(engine.copiedSamplesWaitingAtMost == 8, "at most \(engine.copiedSamplesWaitingAtMost) waited")
        let heldBack = run.messages.all.compactMap { entry -> (String, Int)? in
            if case .copiedSourceHeldBack(let name, let waiting) = entry.message { (name, waiting) } else { nil }
        }
        #expect(heldBack.count == 1 && heldBack.first?.0 == "burst" && heldBack.first?.1 == 8, "\(heldBack)")
        let top = try run.playlist("96p/" + StreamLayout.playlistName)
        var frames = [0, 0]
        for segment in top.segments.map(\.uri) {
            for (index, rung) in ["96p", "48p"].enumerated() {
                frames[index] += try Self.videoStart(try run.store.read(rung + "/" + segment)).2
            }
        }
        #expect(frames == [180, 180], "\(frames) pictures copied and encoded")
        #expect(try run.validationErrors(StreamLayout.masterPlaylistName) == [])
    }

    /// A video segment's start (its `tfdt`, both tracks at 90 kHz here), whether its first sample is an
    /// IDR picture, and how many samples it holds.
    static func videoStart(_ segment: [UInt8]) throws -> (Int64, Bool, Int) {
        let traf = try #require(try MP4Box.parse(segment).first("moof")?.first("traf"))
        let start = Int64(try #require(traf.first("tfdt")).baseDecodeTime())
        let trackID = try #require(traf.first("tfhd")).trackFragmentTrackID()
        let samples = try FragmentSamples.samples(in: segment, trackID: trackID)
        let first = try samples.first.map(FragmentSamples.nalUnitTypes(inSample:)) ?? []
        return (start, first.contains(5), samples.count)
    }
}

/// The test source's pictures encoded by x264 and handed on as `.copied` samples, as a camera's H.264
/// would be; its sound handed on as it is, to be encoded by the engine.
private final class EncodedSource: CaptureSource, @unchecked Sendable {
    private let inner: TestSource
    private let encoder: VideoEncoder
    private(set) var encodedFrames = 0
    /// The samples handed on: the encoder may hold a frame back.
    private(set) var handedOn = 0

    init(_ configuration: TestSource.Configuration, keyframeIntervalFrames: Int) throws {
        inner = try TestSource(configuration)
        var settings = VideoEncoderSettings(width: configuration.width, height: configuration.height,
                                            frameRate: Rational(Int32(configuration.framesPerSecond), 1), bitrate: 300_000,
                                            preset: "ultrafast", zeroLatency: true,
                                            keyframeIntervalFrames: keyframeIntervalFrames, threadCount: 1)
        settings.codec = .h264
        encoder = try VideoEncoder(settings: settings, trackIndex: 0)
    }

    var name: String { "encoded" }
    var delivers: CaptureKinds { inner.delivers }
    var isLive: Bool { inner.isLive }
    var copiedTracks: [TrackDescription] {
        [TrackDescription(trackID: 1, timescale: VideoEncoder.timescale, format: encoder.trackFormat)]
    }

    func start(handler: @escaping (CaptureEvent) -> Void) throws {
        try inner.start { [self] event in
            switch event {
            case .video(let frame):
                guard let samples = try? encoder.encode(frame, forceKeyframe: false) else { return }
                encodedFrames += 1
                for sample in samples {
                    handedOn += 1
                    handler(.copied(sample))
                }
            case .ended:
                for sample in (try? encoder.flush()) ?? [] { handler(.copied(sample)) }
                handler(.ended)
            default:
                handler(event)
            }
        }
    }

    func stop() { inner.stop() }
}

/// `EncodedSource`'s samples, all made first and then handed on at once by a source that says it is live.
private final class BurstSource: CaptureSource, @unchecked Sendable {
    private let encoded: EncodedSource
    private(set) var handedOn = 0

    init(_ configuration: TestSource.Configuration, keyframeIntervalFrames: Int) throws {
        encoded = try EncodedSource(configuration, keyframeIntervalFrames: keyframeIntervalFrames)
    }

    var name: String { "burst" }
    var delivers: CaptureKinds { encoded.delivers }
    var isLive: Bool { true }
    var copiedTracks: [TrackDescription] { encoded.copiedTracks }

    func start(handler: @escaping (CaptureEvent) -> Void) throws {
        let made = Locked<[CaptureEvent]>([])
        let ended = DispatchSemaphore(value: 0)
        try encoded.start { event in
            if case .ended = event { ended.signal() } else { made.withLock { $0.append(event) } }
        }
        ended.wait()
        events = made.withLock { $0 }
        self.handler = handler
        Thread.detachNewThread { [self] in replay() }
    }

    private var events: [CaptureEvent] = []
    private var handler: ((CaptureEvent) -> Void)?

    /// Hands on every event, then lets go of them: Foundation's Thread keeps its block, and with it this
    /// source, after it ends, so what the source still held would stay allocated for good.
    private func replay() {
        let events = self.events
        self.events = []
        for event in events {
            handler?(event)
            handedOn += 1
        }
        handler?(.ended)
        handler = nil
    }

    func stop() { encoded.stop() }
}
