import Foundation

/// A value behind a lock, shared between threads: `withLock` hands it out to one closure at a time.
///
/// Used instead of the standard library's `Mutex`, whose waits on Linux go through futex calls
/// inside the prebuilt runtime: ThreadSanitizer sees neither side of them and reports races on
/// every contended value. A pthread mutex (`NSLock`) is one it understands.
public final class Locked<Value: ~Copyable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    public init(_ value: consuming Value) {
        self.value = value
    }

    public func withLock<Result: ~Copyable, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
