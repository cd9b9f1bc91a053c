import Dispatch

/// `body(0) … body(count - 1)` run at once on the available cores, the results in index order.
public func concurrentMap<Result: Sendable>(_ count: Int, _ body: @Sendable (Int) -> Result) -> [Result] {
    var results = [Result?](repeating: nil, count: count)
    results.withUnsafeMutableBufferPointer { buffer in
        let slots = Slots(buffer: buffer)
        DispatchQueue.concurrentPerform(iterations: count) { index in slots.buffer[index] = body(index) }
    }
    return results.map { $0! }
}

/// Unchecked sendable: each iteration writes only its own slot, and the buffer outlives the loop.
private struct Slots<Element>: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<Element>
}
