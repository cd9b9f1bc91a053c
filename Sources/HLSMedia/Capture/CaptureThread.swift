import CFFmpeg
import Foundation
import HLSBase
import Synchronization

/// The reading thread of a capture source, and the one path its events take to the handler.
///
/// `emit` delivers an event unless a stop was requested, so once `stop()` has returned the
/// handler is never called again. The thread can also abort FFmpeg's blocking calls through
/// `interruptCallback`. Unchecked sendable: `body` and `handler` are set before the thread starts
/// and touched only by it afterwards; the rest is an atomic and a semaphore.
final class CaptureThread: @unchecked Sendable {
    /// Released when the loop ends: a handler that holds its source (to stop it from an event) would
    /// otherwise keep both alive through the source's reference to this thread.
    private var handler: ((CaptureEvent) -> Void)?
    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private var thread: Thread?
    private var body: (() -> Void)?

    init(handler: @escaping (CaptureEvent) -> Void) {
        self.handler = handler
    }

    var isStopRequested: Bool { stopRequested.load(ordering: .acquiring) }

    /// Runs `body` on a new thread named `name`; the thread ends when `body` returns, and what
    /// `body` captured (the open device) is released before `stop()` returns.
    func start(name: String, body: @escaping () -> Void) {
        self.body = body
        // Weak: Foundation's Thread keeps its block after it ends, so a strong capture would keep this
        // object, its handler and every frame the handler holds alive for good. The loop's own
        // reference ends before the signal, so the owner's release after `stop()` is the last one.
        let finished = finished
        let thread = Thread { [weak self] in
            self?.runLoop()
            finished.signal()
        }
        thread.name = name
        self.thread = thread
        thread.start()
    }

    private func runLoop() {
        body?()
        body = nil
        handler = nil
    }

    /// Asks the loop to end and waits until it has, unless called from the loop itself.
    func stop() {
        stopRequested.store(true, ordering: .releasing)
        guard let thread, thread !== Thread.current else { return }
        finished.wait()
        // Lets any other caller of stop() through as well.
        finished.signal()
    }

    /// Hands `event` to the handler; false when the loop must end: after a stop request, and
    /// after the final events `.failed` and `.ended`.
    @discardableResult
    func emit(_ event: CaptureEvent) -> Bool {
        guard !isStopRequested else { return false }
        handler?(event)
        switch event {
        case .video, .audio, .copied, .audioClock, .lost, .restored: return !isStopRequested
        case .failed, .ended: return false
        }
    }

    /// How often a lost device is looked for.
    static let reopenIntervalMicroseconds: Int64 = 500_000
    /// How often a wait checks for a stop request.
    private static let stopCheckMicroseconds: Int64 = 20_000

    /// What a source does when its device fails: without `reconnect`, `.failed`, and nil; with it,
    /// `.lost`, `open` until the device is back, `.restored`, and the device opened again. Nil when the
    /// loop must end. The failed device must be closed before, so that it can come back under its name.
    /// The tries are `reopenIntervalMicroseconds` apart, or from there doubling up to `longestInterval`.
    func recover<Opened>(from failure: CaptureError, reconnect: Bool, longestIntervalMicroseconds: Int64? = nil,
                         open: () throws(CaptureError) -> Opened) -> Opened? {
        guard reconnect else {
            emit(.failed(failure))
            return nil
        }
        guard emit(.lost(failure)), let reopened = reopen(longestIntervalMicroseconds: longestIntervalMicroseconds, open),
              emit(.restored) else { return nil }
        return reopened
    }

    /// Tries `open` after `reopenIntervalMicroseconds`, and again after each interval (doubled up to
    /// `longestIntervalMicroseconds` when given) until it succeeds; nil once a stop is requested.
    func reopen<Opened>(longestIntervalMicroseconds: Int64? = nil, _ open: () throws(CaptureError) -> Opened) -> Opened? {
        var interval = Self.reopenIntervalMicroseconds
        while wait(until: MonotonicClock.nowMicroseconds() + interval) {
            if let opened = try? open() { return opened }
            if let longest = longestIntervalMicroseconds { interval = min(interval * 2, longest) }
        }
        return nil
    }

    /// Sleeps until `deadline` on the monotonic clock, waking to check for a stop request; false when one came.
    func wait(until deadline: Int64) -> Bool {
        while !isStopRequested {
            let now = MonotonicClock.nowMicroseconds()
            guard now < deadline else { return true }
            MonotonicClock.sleep(until: min(deadline, now + Self.stopCheckMicroseconds))
        }
        return false
    }

    /// For `AVFormatContext.interrupt_callback`: FFmpeg gives up a blocking call once a stop
    /// is requested. The thread object must outlive the format context it is given to.
    var interruptCallback: AVIOInterruptCB {
        AVIOInterruptCB(
            callback: { opaque in
                guard let opaque else { return 0 }
                let thread = Unmanaged<CaptureThread>.fromOpaque(opaque).takeUnretainedValue()
                return thread.isStopRequested ? 1 : 0
            },
            opaque: Unmanaged.passUnretained(self).toOpaque())
    }
}
