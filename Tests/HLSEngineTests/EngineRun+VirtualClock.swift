import Foundation
import HLSBase
import HLSKit
import HLSMedia
import HLSOutput
@testable import HLSEngine

/// The test source out of real time on a virtual clock: before handing on each frame it moves the clock
/// to the frame's capture time, so the engine's retention timers fire where the stream is. It makes frames
/// as fast as they encode and waits for the engine when it is behind; like any source that is not live,
/// it ends the stream itself (the engine's duration timer is for live sources).
final class ClockedSource: CaptureSource, @unchecked Sendable {
    private let inner: TestSource
    let clock: VirtualClock

    /// The clock starts at the monotonic clock's present, which the test source stamps its first frame with,
    /// and at `wallStart` on the wall clock.
    init(_ configuration: TestSource.Configuration, wallStart: Date = TestClock.start) throws {
        var configuration = configuration
        configuration.realtime = false
        inner = try TestSource(configuration)
        clock = VirtualClock(startMicroseconds: MonotonicClock.nowMicroseconds(), wallStart: wallStart)
    }

    var name: String { inner.name }
    var delivers: CaptureKinds { inner.delivers }
    var isLive: Bool { false }

    func start(handler: @escaping (CaptureEvent) -> Void) throws {
        try inner.start { [clock] event in
            switch event {
            case .video(let frame), .audio(let frame):
                if let pts = frame.pts { clock.advance(toMicroseconds: pts) }
            default:
                break
            }
            handler(event)
        }
    }

    func stop() { inner.stop() }
}

extension EngineRun {
    /// The engine on `source`'s virtual clock.
    func makeEngine(clocked source: ClockedSource) -> LiveEngine {
        LiveEngine(configuration: configuration, sources: [source], store: store, clock: source.clock,
                   messages: messages.sink)
    }
}
