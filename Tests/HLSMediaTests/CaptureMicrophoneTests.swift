import Foundation
import HLSBase
import HLSKit
import HLSTestSupport
import Synchronization
import Testing
@testable import HLSMedia

/// The ALSA source against a real ALSA capture PCM: the `file` plugin reading a FIFO that
/// Tests/Tools/alsa_fifo.py fills at real-time pace with a sample counter.
@Suite(.serialized) struct CaptureMicrophoneTests {
    static let pcmName = "hlscapfifo"
    static let systemConfig = "/usr/share/alsa/alsa.conf"

    /// The writer process and its directory; the process is killed and the directory removed by `close()`.
    final class FifoDevice {
        let directory: URL
        let writer: Process

        init(seconds: Double) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("alsa-fifo-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            writer = Process()
            writer.executableURL = try ExternalTools.locate("python3")
            writer.arguments = [ExternalTools.toolsDirectory.appendingPathComponent("alsa_fifo.py").path,
                                directory.path, String(seconds)]
            writer.standardOutput = FileHandle.nullDevice
            try writer.run()
            let config = directory.appendingPathComponent("asound.conf")
            let deadline = Date().addingTimeInterval(10)
            while !FileManager.default.fileExists(atPath: config.path) {
                guard Date() < deadline, writer.isRunning else {
                    throw ExternalToolError.missingFile(config.path)
                }
                usleep(10_000)
            }
            // ALSA reads its configuration from the files this lists, the system's first.
            setenv("ALSA_CONFIG_PATH", "\(CaptureMicrophoneTests.systemConfig):\(config.path)", 1)
        }

        func close() {
            // SIGKILL: a child of the test process may inherit a mask that blocks SIGTERM.
            if writer.isRunning { kill(writer.processIdentifier, SIGKILL) }
            writer.waitUntilExit()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// Every event a source sent, and a signal when it sent its last.
    final class Recorder: @unchecked Sendable {
        let events = EventLog()
        let finished = DispatchSemaphore(value: 0)

        func record(_ event: CaptureEvent) {
            events.append(event)
            switch event {
            case .failed, .ended: finished.signal()
            case .video, .audio, .copied, .audioClock, .lost, .restored: break
            }
        }

        var audioFrames: [Frame] {
            events.withLock { $0.compactMap { if case .audio(let frame) = $0 { frame } else { nil } } }
        }
    }

    func microphone() -> MicrophoneSource {
        var configuration = MicrophoneSource.Configuration()
        configuration.device = Self.pcmName
        return MicrophoneSource(configuration)
    }

    @Test func capturesTwoSecondsOfConsecutiveSamplesTimedBySampleCount() throws {
        let samplesWanted = 2 * 48_000
        // The writer outlasts the capture: after its end the plugin would deliver silence.
        let device = try FifoDevice(seconds: 30)
        defer { device.close() }
        let source = microphone()
        let recorder = Recorder()
        let captured = Atomic<Int>(0)
        try source.start { event in
            recorder.record(event)
            if case .audio(let frame) = event,
               captured.add(frame.sampleCount, ordering: .relaxed).newValue >= samplesWanted {
                recorder.finished.signal()
            }
        }
        #expect(recorder.finished.wait(timeout: .now() + 30) == .success, "captured too little")
        source.stop()

        #expect(source.sampleRate == 48_000)
        #expect(source.channelCount == 2)
        let events = recorder.events.withLock { $0 }
        // Audio, and the measurements of the device's clock once two seconds are in.
        #expect(events.allSatisfy {
            switch $0 {
            case .audio, .audioClock: true
            default: false
            }
        }, "\(events.last.map { "\($0)" } ?? "")")
        let frames = recorder.audioFrames
        #expect(frames.reduce(0) { $0 + $1.sampleCount } >= samplesWanted)
        #expect(frames.allSatisfy { $0.sampleCount == MicrophoneSource.blockSamples })
        #expect(frames.allSatisfy { $0.sampleRate == 48_000 && $0.channelCount == 2 && $0.timeBase == MonotonicClock.timeBase })

        // The writer's left channel counts samples: none lost, none repeated, in order.
        var expected: Int64 = 0
        var counterMismatches = 0
        for frame in frames {
            let samples = UnsafeMutableRawPointer(frame.plane(0).base).assumingMemoryBound(to: Int16.self)
            for index in 0..<frame.sampleCount {
                if samples[2 * index] != Int16(truncatingIfNeeded: expected) { counterMismatches += 1 }
                expected += 1
            }
        }
        #expect(counterMismatches == 0)

        // Each block's time is the previous block's plus its samples' duration at the rate the clock
        // measured, which stays within the resampler's reach of the nominal one; or, where the clock
        // disagreed by more than the re-anchoring threshold, a jump past it from where the clock put
        // the block, itself up to the resampler's reach away from the nominal spacing (a reader held
        // up 50 ms on a busy machine makes such a jump).
        let first = try #require(frames.first?.pts)
        let now = MonotonicClock.nowMicroseconds()
        #expect(first < now && first > now - 60_000_000, "first pts \(first) is not on the monotonic clock (now \(now))")
        let nominal = Double(MicrophoneSource.blockSamples) * 1_000_000 / 48_000
        let reach = nominal * SampleClock.maximumDeviation
        for (previous, next) in zip(frames, frames.dropFirst()) {
            let spacing = Double(try #require(next.pts) - (try #require(previous.pts)))
            #expect(abs(spacing - nominal) <= reach
                    || abs(spacing - nominal) > Double(SampleClock.defaultResyncThresholdMicroseconds) - reach,
                    "blocks \(spacing) µs apart")
        }
    }

    @Test func stopEndsEventsAndReleasesTheDevice() throws {
        let device = try FifoDevice(seconds: 30)
        defer { device.close() }
        let source = microphone()
        let recorder = Recorder()
        try source.start { event in
            recorder.record(event)
            if recorder.audioFrames.count == 5 { recorder.finished.signal() }
        }
        #expect(recorder.finished.wait(timeout: .now() + 30) == .success, "no audio arrived")
        source.stop()
        let countAtStop = recorder.events.withLock { $0.count }
        usleep(200_000)
        #expect(recorder.events.withLock { $0.count } == countAtStop, "events after stop() returned")
        // The PCM is closed: the writer's next write fails with a broken pipe and it exits.
        let deadline = Date().addingTimeInterval(10)
        while device.writer.isRunning && Date() < deadline { usleep(20_000) }
        #expect(!device.writer.isRunning, "the FIFO is still open after stop()")
    }

    @Test func unknownPCMFailsAtStartNamingIt() {
        var configuration = MicrophoneSource.Configuration()
        configuration.device = "hlscap-no-such-pcm"
        let source = MicrophoneSource(configuration)
        #expect {
            try source.start { _ in }
        } throws: { error in
            guard let error = error as? CaptureError else { return false }
            return error.device == "hlscap-no-such-pcm" && error.description.hasPrefix("hlscap-no-such-pcm: cannot open")
        }
    }
}
