import Foundation
import HLSMedia

/// The events a capture source delivered, appended from its thread and read by the test.
///
/// Unchecked sendable: `events` is touched only under `lock`; frames are only read after the source
/// stopped, so no two threads use one.
final class EventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [CaptureEvent] = []

    func append(_ event: CaptureEvent) {
        lock.withLock { events.append(event) }
    }

    func withLock<Result>(_ body: ([CaptureEvent]) -> Result) -> Result {
        lock.withLock { body(events) }
    }
}
