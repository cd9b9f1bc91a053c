import Foundation
import Testing
@testable import HLSMedia

@Suite struct CaptureThreadTests {
    /// A capture thread that ended and was stopped is freed with what its handler holds (found by
    /// AddressSanitizer's leak check: every test source's frames stayed allocated).
    @Test func aStoppedCaptureThreadIsReleasedWithItsHandler() {
        weak var released: CaptureThread?
        do {
            let thread = CaptureThread(handler: { _ in })
            released = thread
            thread.start(name: "capture-thread-test") {}
            thread.stop()
        }
        #expect(released == nil)
    }

    /// A handler that holds what owns the thread (a source stopping itself from an event) is let go
    /// when the loop ends, so neither keeps the other alive.
    @Test func aHandlerHoldingItsOwnerIsReleasedWhenTheLoopEnds() {
        final class Owner: @unchecked Sendable {
            var thread: CaptureThread?
        }
        weak var released: Owner?
        do {
            let owner = Owner()
            released = owner
            let thread = CaptureThread(handler: { _ in _ = owner })
            owner.thread = thread
            thread.start(name: "capture-thread-test") { thread.emit(.ended) }
            thread.stop()
        }
        #expect(released == nil)
    }

    /// What `recover` told the handler, as words, and what it returned.
    private static func recovery(reconnect: Bool, failedOpens: Int, stopAfterFailedOpens: Bool = false)
        -> (events: [String], reopened: Int?) {
        let lock = NSLock()
        var events: [String] = []
        var reopened: Int?
        let thread = CaptureThread(handler: { event in
            let word: String
            switch event {
            case .failed(let error): word = "failed \(error.device)"
            case .lost(let error): word = "lost \(error.device)"
            case .restored: word = "restored"
            default: word = "other"
            }
            lock.withLock { events.append(word) }
        })
        let done = DispatchSemaphore(value: 0)
        thread.start(name: "capture-thread-test") {
            var opens = 0
            reopened = thread.recover(from: CaptureError(device: "hw:9,0", message: "gone"), reconnect: reconnect) {
                () throws(CaptureError) in
                opens += 1
                guard opens > failedOpens else {
                    // From the loop itself, stop only asks.
                    if stopAfterFailedOpens, opens == failedOpens { thread.stop() }
                    throw CaptureError(device: "hw:9,0", message: "still gone")
                }
                return opens
            }
            done.signal()
        }
        done.wait()
        thread.stop()
        return (lock.withLock { events }, reopened)
    }

    @Test func withoutReconnectAFailureIsFinal() {
        let outcome = Self.recovery(reconnect: false, failedOpens: 0)
        #expect(outcome.events == ["failed hw:9,0"])
        #expect(outcome.reopened == nil)
    }

    /// Lost, looked for until it opens (the third try here), then restored.
    @Test func withReconnectTheDeviceIsLostOpenedAgainAndRestored() {
        let outcome = Self.recovery(reconnect: true, failedOpens: 2)
        #expect(outcome.events == ["lost hw:9,0", "restored"])
        #expect(outcome.reopened == 3)
    }

    @Test func aStopWhileTheDeviceIsAwayEndsTheWait() {
        let outcome = Self.recovery(reconnect: true, failedOpens: 2, stopAfterFailedOpens: true)
        #expect(outcome.events == ["lost hw:9,0"])
        #expect(outcome.reopened == nil)
    }
}
