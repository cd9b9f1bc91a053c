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
}
