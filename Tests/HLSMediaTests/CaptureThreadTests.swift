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
}
