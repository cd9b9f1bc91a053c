import Dispatch
import Foundation
import HLSBase
import Testing

@Suite struct VirtualClockTests {
    /// What each timer saw, in the order the timers ran.
    private final class Fired: Sendable {
        let entries = Locked<[(name: String, microseconds: Int64)]>([])
        func note(_ name: String, _ clock: VirtualClock) {
            let now = clock.monotonicMicroseconds()
            entries.withLock { $0.append((name, now)) }
        }
        var names: [String] { entries.withLock { $0.map(\.name) } }
    }

    @Test func timeStandsStillUntilAdvancedAndTheWallClockMovesWithIt() {
        let clock = VirtualClock(startMicroseconds: 5_000_000)
        #expect(clock.monotonicMicroseconds() == 5_000_000)
        #expect(clock.now() == VirtualClock.defaultWallStart)
        clock.advance(bySeconds: 90)
        #expect(clock.monotonicMicroseconds() == 95_000_000)
        #expect(clock.now() == VirtualClock.defaultWallStart.addingTimeInterval(90))
        clock.advance(toMicroseconds: 1_000)
        #expect(clock.monotonicMicroseconds() == 95_000_000, "time never goes back")
    }

    @Test func timersRunInDeadlineOrderOnceTimePassesThem() {
        let clock = VirtualClock(startMicroseconds: 0)
        let queue = DispatchQueue(label: "virtual-clock-test")
        let fired = Fired()
        clock.schedule(afterSeconds: 3, on: queue) { fired.note("c", clock) }
        clock.schedule(afterSeconds: 1, on: queue) { fired.note("a", clock) }
        clock.schedule(afterSeconds: 2, on: queue) { fired.note("b1", clock) }
        clock.schedule(afterSeconds: 2, on: queue) { fired.note("b2", clock) }
        #expect(clock.pendingTimerCount == 4)
        #expect(clock.nextDeadlineMicroseconds == 1_000_000)

        clock.advance(toMicroseconds: 999_999)
        queue.sync {}
        #expect(fired.names == [], "nothing is due a microsecond early")

        clock.advance(toMicroseconds: 2_500_000)
        queue.sync {}
        #expect(fired.names == ["a", "b1", "b2"])
        #expect(clock.pendingTimerCount == 1)
        #expect(clock.monotonicMicroseconds() == 2_500_000)

        clock.advance(bySeconds: 10)
        queue.sync {}
        #expect(fired.names == ["a", "b1", "b2", "c"])
        #expect(clock.pendingTimerCount == 0)
    }

    @Test func aCancelledTimerNeverRunsAndADueOneRunsAtOnce() {
        let clock = VirtualClock()
        let queue = DispatchQueue(label: "virtual-clock-test")
        let fired = Fired()
        let timer = clock.schedule(afterSeconds: 1, on: queue) { fired.note("cancelled", clock) }
        timer.cancel()
        #expect(clock.pendingTimerCount == 0)
        clock.schedule(afterMicroseconds: 0, on: queue) { fired.note("due", clock) }
        queue.sync {}
        #expect(fired.names == ["due"])
        clock.advance(bySeconds: 5)
        queue.sync {}
        #expect(fired.names == ["due"])
    }

    @Test func theSystemClockRunsATimerAndCancelsOne() {
        let clock = SystemClock()
        let ran = DispatchSemaphore(value: 0)
        let cancelledRan = Locked(false)
        let queue = DispatchQueue(label: "system-clock-test")
        clock.schedule(afterMicroseconds: 50_000, on: queue) { cancelledRan.withLock { $0 = true } }.cancel()
        let before = clock.monotonicMicroseconds()
        clock.schedule(afterMicroseconds: 20_000, on: queue) { ran.signal() }
        #expect(ran.wait(timeout: .now() + 5) == .success)
        #expect(clock.monotonicMicroseconds() - before >= 20_000)
        Thread.sleep(forTimeInterval: 0.1)
        #expect(cancelledRan.withLock { !$0 })
    }
}
