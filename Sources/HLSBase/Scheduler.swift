import Dispatch
import Foundation

/// The time a component runs on: the monotonic clock its frames are stamped with, the wall clock
/// that program date-times tell, and timers on the monotonic clock. One value gives all three, so
/// that what a component times is what a test controls: `SystemClock` is the machine's,
/// `VirtualClock` moves only when told.
public protocol Scheduler: Sendable {
    /// Microseconds on the monotonic clock (`MonotonicClock` for the system's).
    func monotonicMicroseconds() -> Int64
    /// The wall clock.
    func now() -> Date
    /// The wall-clock time of an instant on the monotonic clock.
    func wallTime(atMonotonicMicroseconds microseconds: Int64) -> Date
    /// Runs `action` on `queue` once `microseconds` have passed on the monotonic clock, unless the
    /// timer is cancelled before.
    @discardableResult
    func schedule(afterMicroseconds microseconds: Int64, on queue: DispatchQueue,
                  _ action: @escaping @Sendable () -> Void) -> ScheduledTimer
}

extension Scheduler {
    /// Both clocks read now, back to back: a clock whose two move together gives the exact instant.
    public func wallTime(atMonotonicMicroseconds microseconds: Int64) -> Date {
        now().addingTimeInterval(-Double(monotonicMicroseconds() - microseconds) / 1_000_000)
    }

    /// Seconds on the monotonic clock.
    public var monotonicSeconds: Double { Double(monotonicMicroseconds()) / 1_000_000 }

    /// `schedule(afterMicroseconds:on:_:)` in seconds, rounded up to the microsecond.
    @discardableResult
    public func schedule(afterSeconds seconds: Double, on queue: DispatchQueue,
                         _ action: @escaping @Sendable () -> Void) -> ScheduledTimer {
        schedule(afterMicroseconds: Int64((max(0, seconds) * 1_000_000).rounded(.up)), on: queue, action)
    }
}

/// A timer a `Scheduler` holds: `cancel` keeps its action from running, if it has not run yet.
public struct ScheduledTimer: Sendable {
    private let cancelAction: @Sendable () -> Void

    public init(cancel: @escaping @Sendable () -> Void) {
        cancelAction = cancel
    }

    public func cancel() { cancelAction() }
}

/// The machine's clocks, and timers on Dispatch.
public struct SystemClock: Scheduler {
    public init() {}

    public func monotonicMicroseconds() -> Int64 { MonotonicClock.nowMicroseconds() }
    public func now() -> Date { Date() }

    @discardableResult
    public func schedule(afterMicroseconds microseconds: Int64, on queue: DispatchQueue,
                         _ action: @escaping @Sendable () -> Void) -> ScheduledTimer {
        let item = WorkItem(DispatchWorkItem(block: action))
        queue.asyncAfter(deadline: .now() + .microseconds(Int(max(0, microseconds))), execute: item.item)
        return ScheduledTimer { item.item.cancel() }
    }

    /// Unchecked sendable: `DispatchWorkItem.cancel` may be called from any thread.
    private struct WorkItem: @unchecked Sendable {
        let item: DispatchWorkItem
        init(_ item: DispatchWorkItem) { self.item = item }
    }
}

/// Time for tests: it stands still until `advance` moves it on, and the timers it passes then run in
/// the order of their deadlines, each on its queue (asynchronously, as a real timer's action would).
/// An hour of stream runs in the seconds its frames take to process.
///
/// A test gives it to the component instead of `SystemClock()`, and whatever delivers the frames
/// moves it along with their timestamps:
///
///     let clock = VirtualClock()
///     let engine = LiveEngine(configuration: configuration, sources: [source], store: MemoryStore(),
///                             clock: clock)
///     // in the source, before delivering a frame stamped `pts` (microseconds on this clock):
///     clock.advance(toMicroseconds: pts)      // timers due by then fire: retention, --duration …
///     // after a stop, to get past a wait of the engine's own:
///     clock.advance(bySeconds: 30)
///
/// `monotonicMicroseconds()` starts at `startMicroseconds`, and `now()` at `wallStart`; both move together.
public final class VirtualClock: Scheduler {
    /// A fixed instant, so that the program date-times a test reads are known.
    public static let defaultWallStart = Date(timeIntervalSince1970: 1_800_000_000)

    public let startMicroseconds: Int64
    public let wallStart: Date
    private let state: Locked<State>

    private struct State {
        var nowMicroseconds: Int64
        var timers: [Timer] = []
        var nextIdentifier = 0
    }

    private struct Timer {
        var identifier: Int
        var deadlineMicroseconds: Int64
        var queue: DispatchQueue
        var action: @Sendable () -> Void
    }

    public init(startMicroseconds: Int64 = 1_000_000_000, wallStart: Date = VirtualClock.defaultWallStart) {
        self.startMicroseconds = startMicroseconds
        self.wallStart = wallStart
        state = Locked(State(nowMicroseconds: startMicroseconds))
    }

    public func monotonicMicroseconds() -> Int64 { state.withLock { $0.nowMicroseconds } }

    public func now() -> Date { wallTime(atMonotonicMicroseconds: monotonicMicroseconds()) }

    /// Exact, whatever another thread does to the clock meanwhile.
    public func wallTime(atMonotonicMicroseconds microseconds: Int64) -> Date {
        wallStart.addingTimeInterval(Double(microseconds - startMicroseconds) / 1_000_000)
    }

    /// A timer already due (`microseconds` ≤ 0) runs at once, as Dispatch would run it; any other waits
    /// for `advance`.
    @discardableResult
    public func schedule(afterMicroseconds microseconds: Int64, on queue: DispatchQueue,
                         _ action: @escaping @Sendable () -> Void) -> ScheduledTimer {
        guard microseconds > 0 else {
            queue.async(execute: action)
            return ScheduledTimer {}
        }
        let identifier = state.withLock { state in
            defer { state.nextIdentifier += 1 }
            state.timers.append(Timer(identifier: state.nextIdentifier,
                                      deadlineMicroseconds: state.nowMicroseconds + microseconds,
                                      queue: queue, action: action))
            return state.nextIdentifier
        }
        return ScheduledTimer { [state] in
            state.withLock { $0.timers.removeAll { $0.identifier == identifier } }
        }
    }

    /// Moves time on to `target` (never back), running every timer due by then in the order of its
    /// deadline (the order they were scheduled in between equal deadlines); the clock reads each
    /// timer's deadline as its action is handed to its queue.
    public func advance(toMicroseconds target: Int64) {
        while let due = takeNextTimer(dueBy: target) {
            due.queue.async(execute: due.action)
        }
    }

    public func advance(byMicroseconds microseconds: Int64) {
        advance(toMicroseconds: monotonicMicroseconds() + max(0, microseconds))
    }

    public func advance(bySeconds seconds: Double) {
        advance(byMicroseconds: Int64((seconds * 1_000_000).rounded(.up)))
    }

    /// The deadline of the next timer, if one waits.
    public var nextDeadlineMicroseconds: Int64? {
        state.withLock { $0.timers.map(\.deadlineMicroseconds).min() }
    }

    /// How many timers wait.
    public var pendingTimerCount: Int { state.withLock { $0.timers.count } }

    private func takeNextTimer(dueBy target: Int64) -> Timer? {
        state.withLock { state in
            let due = state.timers.indices.filter { state.timers[$0].deadlineMicroseconds <= target }
            guard let next = due.min(by: { (state.timers[$0].deadlineMicroseconds, state.timers[$0].identifier)
                                              < (state.timers[$1].deadlineMicroseconds, state.timers[$1].identifier) })
            else {
                state.nowMicroseconds = max(state.nowMicroseconds, target)
                return nil
            }
            let timer = state.timers.remove(at: next)
            state.nowMicroseconds = max(state.nowMicroseconds, timer.deadlineMicroseconds)
            return timer
        }
    }
}
