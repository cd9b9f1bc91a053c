import Foundation
import HLSBase
import Synchronization
import Testing
@testable import HLSMedia

@Suite struct CaptureTestSourceTests {
    static let width = 160, height = 90, fps = 25

    /// Runs a test source for `seconds` of stream time and returns what it sent.
    static func run(seconds: Int64, realtime: Bool = false, video: Bool = true, audio: Bool = true) throws -> [CaptureEvent] {
        var configuration = TestSource.Configuration()
        configuration.width = width
        configuration.height = height
        configuration.framesPerSecond = fps
        configuration.realtime = realtime
        configuration.video = video
        configuration.audio = audio
        configuration.durationMicroseconds = seconds * 1_000_000
        let source = try TestSource(configuration)
        let events = EventLog()
        let ended = DispatchSemaphore(value: 0)
        try source.start { event in
            events.append(event)
            if case .ended = event { ended.signal() }
        }
        defer { source.stop() }
        #expect(ended.wait(timeout: .now() + 60) == .success)
        return events.withLock { $0 }
    }

    static func videoFrames(_ events: [CaptureEvent]) -> [Frame] {
        events.compactMap { if case .video(let frame) = $0 { frame } else { nil } }
    }

    static func audioFrames(_ events: [CaptureEvent]) -> [Frame] {
        events.compactMap { if case .audio(let frame) = $0 { frame } else { nil } }
    }

    static func luma(_ frame: Frame) -> [UInt8] {
        let (base, stride) = frame.plane(0)
        return (0..<frame.height).flatMap { row in Array(UnsafeBufferPointer(start: base + row * stride, count: frame.width)) }
    }

    static func samples(_ frame: Frame) -> [Int16] {
        let base = UnsafeRawPointer(frame.plane(0).base).assumingMemoryBound(to: Int16.self)
        return Array(UnsafeBufferPointer(start: base, count: frame.sampleCount * frame.channelCount))
    }

    @Test func frameAndSampleTimesAreExact() throws {
        let events = try Self.run(seconds: 3)
        let video = Self.videoFrames(events), audio = Self.audioFrames(events)
        guard case .ended = try #require(events.last) else { Issue.record("did not end with .ended"); return }
        #expect(video.count == 3 * Self.fps)
        // 3 s of 1024-sample blocks: the last one starts before 3 s.
        #expect(audio.count == (3 * 48_000 + 1023) / 1024)
        let origin = try #require(video.first?.pts)
        #expect(audio.first?.pts == origin)
        for (index, frame) in video.enumerated() {
            #expect(frame.pts == origin + Int64(index) * 1_000_000 / Int64(Self.fps))
            #expect(frame.width == Self.width && frame.height == Self.height && frame.timeBase == MonotonicClock.timeBase)
        }
        for (index, frame) in audio.enumerated() {
            #expect(frame.pts == origin + Int64(index * 1024) * 1_000_000 / 48_000)
            #expect(frame.sampleCount == 1024 && frame.sampleRate == 48_000 && frame.channelCount == 2)
        }
        // Handed on in time order: a block once its last sample is due, a frame at its time.
        var blocksSeen: Int64 = 0
        let due = events.compactMap { event -> Int64? in
            switch event {
            case .video(let frame): return frame.pts
            case .audio:
                blocksSeen += 1
                return origin + blocksSeen * 1024 * 1_000_000 / 48_000
            default: return nil
            }
        }
        #expect(due == due.sorted())
    }

    @Test func oneWhiteFrameAtEachWholeSecondAndMovingPicturesBetween() throws {
        let video = Self.videoFrames(try Self.run(seconds: 3, audio: false))
        let white = TestPattern.white.y
        let whiteIndices = video.indices.filter { Self.luma(video[$0]).allSatisfy { $0 == white } }
        #expect(whiteIndices == [0, Self.fps, 2 * Self.fps])
        // Every other frame differs from the one before it (bars scroll, the box and counter move).
        for index in 1..<video.count where !whiteIndices.contains(index) && !whiteIndices.contains(index - 1) {
            #expect(Self.luma(video[index]) != Self.luma(video[index - 1]), "frame \(index) repeats")
        }
    }

    @Test func beepOfFiftyMillisecondsAtEachWholeSecond() throws {
        let audio = Self.audioFrames(try Self.run(seconds: 3, video: false))
        let left = audio.flatMap { Self.samples($0).enumerated().filter { $0.offset % 2 == 0 }.map(\.element) }
        #expect(left.count >= 3 * 48_000)
        // Frequency from zero crossings over 10 ms windows: 1 kHz in the first 50 ms of each second, 440 Hz elsewhere.
        func hertz(from start: Int, samples count: Int = 480) -> Int {
            let window = left[start..<(start + count)]
            let crossings = zip(window, window.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
            return crossings * 48_000 / count / 2
        }
        for second in 0..<3 {
            let start = second * 48_000
            for window in stride(from: start, to: start + 2400, by: 480) {
                #expect(abs(hertz(from: window) - 1000) <= 100, "at sample \(window)")
            }
            for window in stride(from: start + 2400, to: start + 48_000 - 480, by: 4800) {
                #expect(abs(hertz(from: window) - 440) <= 100, "at sample \(window)")
            }
        }
        // The beep is louder than the tone, so its start is visible at the exact sample.
        let beepPeak = Int16(TestPattern.beepAmplitude * Double(Int16.max))
        let tonePeak = Int16(TestPattern.toneAmplitude * Double(Int16.max))
        #expect(left[48_000..<50_400].max()! > tonePeak + 1)
        #expect(left[47_000..<48_000].max()! <= tonePeak)
        #expect(left[48_000..<50_400].max()! <= beepPeak)
    }

    @Test func pacedRunTakesItsStreamTimeAndUnpacedRunsFaster() throws {
        let started = MonotonicClock.nowMicroseconds()
        _ = try Self.run(seconds: 1, realtime: true)
        let pacedMicroseconds = MonotonicClock.nowMicroseconds() - started
        // A paced source cannot send its last frame (at 0.96 s) before that much time has passed.
        #expect(pacedMicroseconds >= 960_000)

        let unpacedStart = MonotonicClock.nowMicroseconds()
        _ = try Self.run(seconds: 4, realtime: false)
        #expect(MonotonicClock.nowMicroseconds() - unpacedStart < 4_000_000, "4 s of stream should take less than 4 s unpaced")
    }

    @Test func stopFromTheHandlerEndsTheStreamAtOnce() throws {
        var configuration = TestSource.Configuration()
        configuration.width = Self.width
        configuration.height = Self.height
        configuration.realtime = false
        let source = try TestSource(configuration)
        let count = Atomic<Int>(0)
        let stopped = DispatchSemaphore(value: 0)
        try source.start { _ in
            if count.add(1, ordering: .relaxed).newValue == 10 {
                source.stop()
                stopped.signal()
            }
        }
        #expect(stopped.wait(timeout: .now() + 30) == .success)
        source.stop()
        #expect(count.load(ordering: .relaxed) == 10)
    }

    @Test func rejectsOddSizes() {
        var configuration = TestSource.Configuration()
        configuration.width = 161
        #expect(throws: CaptureError.self) { try TestSource(configuration) }
    }
}
