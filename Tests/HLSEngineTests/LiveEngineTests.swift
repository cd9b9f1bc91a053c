import Foundation
import Glibc
import HLSBase
import HLSKit
import HLSMedia
import HLSOutput
import Testing
@testable import HLSEngine

/// The live engine run in process: the test source into a store in memory, checked as a player and
/// the validator see it.
@Suite(.serialized) struct LiveEngineTests {
    @Test func aCleanStopListsEverySegmentAndEndsThePlaylist() throws {
        let run = EngineRun(seconds: 4)
        let outcome = try run.makeEngine().run()
        #expect(outcome.failure == nil)
        #expect(!outcome.endedAtOnce)
        let playlist = try run.playlist()
        #expect(playlist.endList)
        #expect(playlist.segments.map(\.uri) == (1...4).map(StreamLayout.segmentPath))
        #expect(playlist.segments.allSatisfy { abs($0.durationSeconds - 1) < 0.04 }, "\(playlist.segments)")
        // The wall clock the engine was given is the one the playlist tells.
        let first = try #require(playlist.segments.first?.programDateTime)
        #expect(abs(first.timeIntervalSince(TestClock.start)) < 2, "\(first)")
        try run.expectListedFilesStored()
        #expect(try run.store.exists(StreamLayout.masterPlaylistName))
        #expect(try run.validationErrors() == [])
        #expect(outcome.summary.hasPrefix("4 segments, 4.000 s"), "\(outcome.summary)")
    }

    /// A stop asked for before the stream runs (a signal while a process starts its streams) is not lost,
    /// even with a source that only a running capture can stop: the run ends as soon as it runs, with its
    /// playlist ended, instead of going on until a second stop.
    @Test func aStopAskedBeforeTheRunEndsItAsSoonAsItRuns() throws {
        /// The test source, but a stop before it started does nothing, as with a capture thread not yet there.
        final class StopsOnlyWhenStarted: CaptureSource, @unchecked Sendable {
            let source: TestSource
            private let started = Locked(false)
            init(_ source: TestSource) { self.source = source }
            var name: String { source.name }
            var delivers: CaptureKinds { source.delivers }
            func start(handler: @escaping (CaptureEvent) -> Void) throws {
                try source.start(handler: handler)
                started.withLock { $0 = true }
            }
            func stop() {
                if started.withLock({ $0 }) { source.stop() }
            }
        }
        let run = EngineRun(seconds: 60, realtime: true)
        let engine = try run.makeEngine(sources: [StopsOnlyWhenStarted(TestSource(run.test))])
        engine.requestStop()
        let returned = DispatchSemaphore(value: 0)
        let thread = Thread {
            _ = try? engine.run()
            returned.signal()
        }
        thread.start()
        #expect(returned.wait(timeout: .now() + 20) == .success, "the run ended by itself")
        #expect(try run.playlist().endList)
        // Not left running when the expectation fails.
        engine.endAtOnce()
    }

    /// A camera whose server closes the stream while the stop is on its way to it (its last events come
    /// after the stop was asked for, before the source is stopped): the stream ends cleanly, and the
    /// camera's end is not taken for the stream's failure.
    @Test func aDeviceThatFailsWhileTheStreamStopsIsNotItsFailure() throws {
        final class FailsAsItStops: CaptureSource, @unchecked Sendable {
            let source: TestSource
            private let handler = Locked<((CaptureEvent) -> Void)?>(nil)
            init(_ source: TestSource) { self.source = source }
            var name: String { "camera" }
            var delivers: CaptureKinds { source.delivers }
            func start(handler: @escaping (CaptureEvent) -> Void) throws {
                self.handler.withLock { $0 = handler }
                try source.start(handler: handler)
            }
            func stop() {
                handler.withLock { $0 }?(.failed(CaptureError(device: name, message: "the input ended")))
                source.stop()
            }
        }
        let run = EngineRun(seconds: 60, realtime: true)
        let engine = try run.makeEngine(sources: [FailsAsItStops(TestSource(run.test))])
        DispatchQueue.global().asyncAfter(deadline: .now() + 1.5) { engine.requestStop() }
        let outcome = try engine.run()
        #expect(outcome.failure == nil, "\(String(describing: outcome.failure))")
        #expect(try run.playlist().endList)
    }

    /// A stop waits out the retention time of what left the window, and says so at once; a second
    /// interrupt ends the run then and leaves those files for the next run, listed.
    @Test func aStopSaysWhatItWaitsForAndASecondInterruptLeavesItForTheNextRun() throws {
        var run = EngineRun(seconds: 60, realtime: true)
        run.configuration.windowSize = 3
        let engine = try run.makeEngine()
        let returned = Locked<LiveEngine.Outcome?>(nil)
        let thread = Thread {
            let outcome = try? engine.run()
            returned.withLock { $0 = outcome }
        }
        thread.start()
        // Segments 1 to 3 leave the window of 3 once segment 6 is listed.
        let deadline = Date(timeIntervalSinceNow: 20)
        while (try? run.playlist())?.segments.last?.uri != StreamLayout.segmentPath(6), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let stopped = Double(MonotonicClock.nowMicroseconds()) / 1_000_000
        engine.requestStop()
        while !run.messages.all.contains(where: { if case .waitingForRetention = $0.message { true } else { false } }),
              Double(MonotonicClock.nowMicroseconds()) / 1_000_000 < stopped + 5 {
            Thread.sleep(forTimeInterval: 0.02)
        }
        let waiting = try #require(run.messages.all.first { if case .waitingForRetention = $0.message { true } else { false } })
        #expect(waiting.seconds - stopped < 2, "the stop said what it waits for within 2 s")
        guard case .waitingForRetention(let fileCount, let seconds) = waiting.message else { return }
        #expect(fileCount >= 1 && seconds > 1, "\(fileCount) files, \(seconds) s")
        #expect(try run.playlist().endList, "ENDLIST is written before the wait")
        #expect(returned.withLock { $0 } == nil, "still waiting")

        engine.endAtOnce()
        while returned.withLock({ $0 }) == nil, Double(MonotonicClock.nowMicroseconds()) / 1_000_000 < stopped + 5 {
            Thread.sleep(forTimeInterval: 0.02)
        }
        let outcome = try #require(returned.withLock { $0 })
        #expect(outcome.endedAtOnce)
        #expect(Double(MonotonicClock.nowMicroseconds()) / 1_000_000 - stopped < seconds, "it did not wait it out")
        let left = RetiredFiles.parseManifest(try run.text(StreamLayout.retiredListName))
        #expect(!left.isEmpty)
        for file in left {
            #expect(try run.store.exists(file.path), "\(file.path) is left as it was")
            #expect(file.removableAt > TestClock.start, "\(file.removableAt)")
        }
        #expect(run.messages.all.contains { if case .leftForNextRun(left.count) = $0.message { true } else { false } })
        try run.expectListedFilesStored()
        #expect(try run.validationErrors() == [])
    }

    /// A store that fails mid-stream ends it with the store's error; the playlist lists only what was
    /// stored whole, and ends.
    @Test func aStoreThatFailsEndsTheStreamWithWhatItHad() throws {
        let store = MemoryStore()
        var run = EngineRun(store: store, seconds: 30)
        run.configuration.observers = [Observing(segmentPublished: { report in
            if report.path == StreamLayout.segmentPath(3) {
                store.inject(.init(.write, errno: ENOSPC) { $0.hasPrefix(StreamLayout.segmentDirectory + "/") })
            }
        })]
        let outcome = try run.makeEngine().run()
        guard case .store(let error) = outcome.failure else {
            Issue.record("ended with \(String(describing: outcome.failure))")
            return
        }
        #expect(error == StoreError(operation: .write, path: "memory/seg/000004.m4s", errno: ENOSPC))
        let playlist = try run.playlist()
        #expect(playlist.segments.map(\.uri) == (1...3).map(StreamLayout.segmentPath))
        #expect(playlist.endList, "the playlists could still be written")
        #expect(try !store.exists(StreamLayout.segmentPath(4)))
        try run.expectListedFilesStored()
    }

    /// The counters follow the stream (what `/metrics` shows): once it starts, after every listed segment,
    /// and as it ends, with the figures the run ends with.
    @Test func observersAreToldTheCountersAsTheStreamGoes() throws {
        var run = EngineRun(seconds: 3)
        let told = Locked<[(published: Int, counters: LiveStatistics.Snapshot)]>([])
        let published = Locked(0)
        run.configuration.observers = [Observing(
            segmentPublished: { _ in published.withLock { $0 += 1 } },
            counted: { counters in told.withLock { $0.append((published.withLock { $0 }, counters)) } })]
        let engine = try run.makeEngine()
        let outcome = try engine.run()
        #expect(outcome.failure == nil)
        let segments = published.withLock { $0 }
        let all = told.withLock { $0 }
        #expect(segments >= 3)
        #expect(all.map(\.published) == Array(0...segments) + [segments])
        #expect(all.map(\.counters.segments) == Array(0...segments) + [segments])
        let final = engine.statistics.snapshot()
        #expect(all.last?.counters.frames == final.frames)
        #expect(all.last?.counters.mediaBytes == final.mediaBytes)
        #expect(final.frames == 90)
    }

    /// A low-latency ladder's parts are a fragment per frame; the rates the master playlist declares
    /// before anything is measured allow for those boxes, so no rung's segments outrun them.
    @Test func aLowLatencyLaddersDeclaredRatesHoldItsSegments() throws {
        var run = EngineRun(seconds: 3)
        run.configuration.size = OutputSize(width: 320, height: 180)
        run.test.width = 320
        run.test.height = 180
        run.configuration.partMilliseconds = 200
        run.configuration.ladder = [LadderRung(height: 180, bitrate: 300_000), LadderRung(height: 90, bitrate: 100_000)]
        let outcome = try run.makeEngine().run()
        #expect(outcome.failure == nil)
        let report = try StreamValidator(loader: StoreLoader(store: run.store))
            .validate(StoreLoader.url(StreamLayout.masterPlaylistName))
        let rates = report.findings.filter { $0.rule == "apple-measured-bandwidth" || $0.severity == .error }
        #expect(rates.isEmpty, "\(rates.map(\.message))")
        #expect(report.segmentCount >= 6)
    }

    @Test func aLadderCutsEveryRungAtTheSameInstants() throws {
        var run = EngineRun(seconds: 3)
        run.configuration.size = OutputSize(width: 320, height: 180)
        run.test.width = 320
        run.test.height = 180
        run.configuration.ladder = [LadderRung(height: 180, bitrate: 300_000), LadderRung(height: 90, bitrate: 100_000)]
        let outcome = try run.makeEngine().run()
        #expect(outcome.failure == nil)
        let master = MasterPlaylistDocument(text: try run.text(StreamLayout.masterPlaylistName))
        #expect(master.variants.map(\.uri).sorted() == ["180p/playlist.m3u8", "90p/playlist.m3u8"])
        #expect(master.renditions.compactMap(\.uri) == ["audio/playlist.m3u8"])
        let rungs = try ["180p", "90p", "audio"].map { try run.playlist($0 + "/" + StreamLayout.playlistName) }
        #expect(Set(rungs.map { $0.segments.map(\.uri) }).count == 1, "every rung lists the same segments")
        #expect(rungs[0].segments.map(\.programDateTime) == rungs[1].segments.map(\.programDateTime))
        for rung in ["180p", "90p", "audio"] {
            try run.expectListedFilesStored(rung + "/" + StreamLayout.playlistName, directory: rung)
        }
        let findings = try run.validationErrors(StreamLayout.masterPlaylistName)
        #expect(findings == [], "\(findings.map(\.message))")
    }

    /// Low-latency parts: the pieces handed out while a segment grows are the bytes of its file, and each
    /// part's bytes are the chunks handed out before it, frame by frame.
    @Test func aSegmentFileIsItsPartsAndAPartItsChunks() throws {
        var run = EngineRun(seconds: 3)
        run.configuration.partMilliseconds = 334
        enum Piece { case chunk(StreamWriter.RenditionChunk), part(StreamWriter.RenditionPart) }
        let handed = Locked<[Piece]>([])
        run.configuration.observers = [Observing(chunk: { chunk in handed.withLock { $0.append(.chunk(chunk)) } },
                                                 part: { part in handed.withLock { $0.append(.part(part)) } })]
        let outcome = try run.makeEngine().run()
        #expect(outcome.failure == nil)
        var parts: [StreamWriter.RenditionPart] = []
        var chunkBytes: [UInt8] = []
        var chunkCounts: [Int] = []
        var chunkCount = 0
        for piece in handed.withLock({ $0 }) {
            switch piece {
            case .chunk(let chunk):
                chunkBytes += chunk.bytes
                chunkCount += 1
            case .part(let part):
                #expect(part.bytes == chunkBytes, "part \(part.partIndex) of segment \(part.sequenceNumber)")
                parts.append(part)
                chunkCounts.append(chunkCount)
                chunkBytes = []
                chunkCount = 0
            }
        }
        // 334 ms of 30 fps video: about ten frames, each its own chunk once the next has come.
        #expect(chunkCounts.dropLast().allSatisfy { $0 >= 8 }, "\(chunkCounts)")
        for segment in try run.playlist().segments {
            let number = try #require(StreamLayout.sequenceNumber(ofPath: segment.uri))
            let own = parts.filter { $0.sequenceNumber == number }
            #expect(own.count >= 3, "\(segment.uri): \(own.count) parts")
            #expect(own.first?.independent == true)
            #expect(try run.store.read(segment.uri) == own.flatMap(\.bytes), "\(segment.uri)")
        }
        // The I-frame playlist's ranges are each segment's first chunk: its IDR.
        #expect(try run.store.exists(StreamLayout.iFramePlaylistName))
        let findings = try run.validationErrors(StreamLayout.masterPlaylistName)
        #expect(findings == [], "\(findings.map(\.message))")
    }

    /// A resumed stream numbers on past what a crash left, after a discontinuity; a file the last run left
    /// waiting for its retention time stays until then.
    @Test func aResumedStreamGoesOnAfterADiscontinuityAndKeepsWhatStillWaits() throws {
        let store = MemoryStore()
        var first = EngineRun(store: store, seconds: 3)
        first.configuration.windowSize = 0
        _ = try first.makeEngine().run()
        // A crash left segment 4 unlisted; an earlier stop left segment 9 waiting for another two seconds.
        try store.write([0], to: StreamLayout.segmentPath(4))
        try store.write([0], to: StreamLayout.segmentPath(9))
        let waitUntil = Date().timeIntervalSince1970 + 2
        try store.write(Array(String(format: "%.3f\t%@\n", waitUntil, StreamLayout.segmentPath(9)).utf8),
                        to: StreamLayout.retiredListName)

        var second = EngineRun(store: store, seconds: 3)
        second.configuration.windowSize = 0
        second.configuration.resume = true
        let engine = LiveEngine(configuration: second.configuration, sources: [try TestSource(second.test)],
                                store: store, messages: second.messages.sink)
        let outcome = try engine.run()
        #expect(outcome.failure == nil)
        let playlist = try second.playlist()
        #expect(playlist.segments.map(\.uri) == ([1, 2, 3] + [10, 11, 12]).map(StreamLayout.segmentPath))
        #expect(playlist.segments.map(\.discontinuity) == [false, false, false, true, false, false])
        #expect(try !store.exists(StreamLayout.segmentPath(4)), "what a crash left goes at once")
        #expect(try !store.exists(StreamLayout.retiredListName))
        try second.expectListedFilesStored()
        #expect(try second.validationErrors() == [])
        // Segment 9's time came during the run, or at its clean stop at the latest.
        #expect(try !store.exists(StreamLayout.segmentPath(9)))
    }

    /// Sources are whatever conforms: one that loses its device and gets it back makes the stream go on
    /// after a discontinuity, a stand-in filling the gap.
    @Test func aLostDeviceIsStoodInForAndComesBackAfterADiscontinuity() throws {
        var run = EngineRun(seconds: 5, realtime: true)
        run.test.audio = false
        let camera = FlakySource(try TestSource(run.test), lostAfterFrames: 45, awaySeconds: 1.2)
        let outcome = try run.makeEngine(sources: [camera]).run()
        #expect(outcome.failure == nil)
        let playlist = try run.playlist()
        #expect(playlist.segments.filter(\.discontinuity).count == 1, "\(playlist.segments)")
        #expect(playlist.discontinuitySequence == 0)
        let kinds = run.messages.all.map { message -> String in
            switch message.message {
            case .deviceLost(let error): "lost \(error.device)"
            case .deviceBack(let device, _): "back \(device)"
            default: "other"
            }
        }
        #expect(kinds.filter { $0 != "other" } == ["lost flaky", "back flaky"])
        #expect(outcome.summary.contains("flaky reconnected 1 time"), "\(outcome.summary)")
        #expect(try run.validationErrors() == [])
    }

    /// A camera lost just after its last picture (a network camera's connection closing behind it): the
    /// stand-in's first picture comes a frame's spacing after that picture, not a moment after it.
    @Test func theStandInFollowsTheLastPictureByAFramesSpacing() throws {
        var run = EngineRun(seconds: 4, realtime: true)
        run.test.audio = false
        let camera = FlakySource(try TestSource(run.test), lostAfterFrames: 45, awaySeconds: 1.2,
                                 deliversTheLastFrame: true)
        let outcome = try run.makeEngine(sources: [camera]).run()
        #expect(outcome.failure == nil)
        let segments = try run.playlist().segments
        var durations: [UInt32] = []
        for segment in segments.prefix(while: { !$0.discontinuity }) {
            let moof = try #require(try MP4Box.parse(try run.store.read(segment.uri)).first("moof"))
            for traf in moof.all("traf") {
                let header = try #require(try traf.first("tfhd")?.trackFragmentHeader())
                let entries = try #require(try traf.first("trun")?.trackRun()).entries
                durations += entries.map { $0.duration ?? header.defaultSampleDuration ?? 0 }
            }
        }
        // The last, before the camera is back, lasts until its first picture after the discontinuity.
        let spacing = UInt32(90_000 / run.test.framesPerSecond)
        #expect(durations.count > 45 && durations.dropLast().allSatisfy { $0 >= spacing * 3 / 4 }, "\(durations)")
        #expect(try run.validationErrors() == [])
    }
}

/// A camera that is lost after some frames and comes back a moment later, as an unplugged one does.
final class FlakySource: CaptureSource, @unchecked Sendable {
    private let inner: TestSource
    private let lostAfterFrames: Int
    private let awaySeconds: Double
    /// Whether the frame that finds it lost is delivered first, as a network camera's last picture is
    /// before its connection closes.
    private let deliversTheLastFrame: Bool
    private let state = Locked((frames: 0, away: false))

    init(_ inner: TestSource, lostAfterFrames: Int, awaySeconds: Double, deliversTheLastFrame: Bool = false) {
        self.inner = inner
        self.lostAfterFrames = lostAfterFrames
        self.awaySeconds = awaySeconds
        self.deliversTheLastFrame = deliversTheLastFrame
    }

    var name: String { "flaky" }
    var delivers: CaptureKinds { inner.delivers }
    var standIns: [StandInSource.Content] {
        [.video(width: inner.configuration.width, height: inner.configuration.height,
                framesPerSecond: inner.configuration.framesPerSecond)]
    }

    func start(handler: @escaping (CaptureEvent) -> Void) throws {
        try inner.start { [self] event in
            guard case .video = event else { return handler(event) }
            let (count, away) = state.withLock { state in
                state.frames += 1
                return (state.frames, state.away)
            }
            if count == lostAfterFrames {
                if deliversTheLastFrame { handler(event) }
                state.withLock { $0.away = true }
                handler(.lost(CaptureError(device: name, message: "unplugged")))
                // The engine takes events from any thread, as from a device's and its stand-in's.
                let restore = UncheckedHandler(handler)
                DispatchQueue.global().asyncAfter(deadline: .now() + awaySeconds) { [self] in
                    state.withLock { $0.away = false }
                    restore.handler(.restored)
                }
                return
            }
            if !away { handler(event) }
        }
    }

    func stop() { inner.stop() }
}

private struct UncheckedHandler: @unchecked Sendable {
    let handler: (CaptureEvent) -> Void

    init(_ handler: @escaping (CaptureEvent) -> Void) {
        self.handler = handler
    }
}
