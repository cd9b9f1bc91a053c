import HLSBase

/// A response body still being made (an LL-HLS part whose chunks the engine hands over as it cuts them):
/// servers send each piece as it comes, without Content-Length, and end the body once it is whole.
///
/// Every byte is kept (a part is well under a megabyte), so any number of readers may read one body
/// at once, each from its own offset. A reader asks for bytes (`read(from:into:)`) and, when it finds
/// none yet, waits for the wake-up it registered (`watch`), which the producing thread calls.
public final class GrowingBody: Sendable {
    /// What a reader finds at its offset.
    enum Read: Equatable {
        /// This many bytes were copied.
        case bytes(Int)
        /// No byte past the offset yet: the reader's wake-up comes when there is.
        case waiting
        /// Every byte is read and the body is whole.
        case finished
        /// The body will never be whole.
        case abandoned
    }

    private enum Ending {
        case finished, abandoned
    }

    private struct State {
        var bytes: [UInt8] = []
        var ending: Ending?
        var wakes: [Int: @Sendable () -> Void] = [:]
        var nextWake = 0
    }

    private let state = Locked(State())

    public init() {}

    /// More bytes, from any thread. Ignored after finish/abandon.
    public func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        let wakes = state.withLock { state -> [@Sendable () -> Void] in
            guard state.ending == nil else { return [] }
            state.bytes.append(contentsOf: bytes)
            return Array(state.wakes.values)
        }
        for wake in wakes { wake() }
    }

    /// The body is whole: servers end it (last chunk over HTTP/1.1, END_STREAM over h2).
    public func finish() { end(.finished) }

    /// The body will never be whole (the stream stopped mid-part): servers cut the response so that no
    /// client takes the bytes for a whole part (HTTP/1.1: close the connection without the last chunk;
    /// h2: RST_STREAM with INTERNAL_ERROR).
    public func abandon() { end(.abandoned) }

    /// Bytes so far (whole or not).
    public var count: Int { state.withLock { $0.bytes.count } }

    public var isFinished: Bool { state.withLock { $0.ending == .finished } }

    private func end(_ ending: Ending) {
        let wakes = state.withLock { state -> [@Sendable () -> Void] in
            guard state.ending == nil else { return [] }
            state.ending = ending
            return Array(state.wakes.values)
        }
        for wake in wakes { wake() }
    }

    // MARK: For the servers

    /// Copies bytes from `offset` into `buffer`. An abandoned body gives no more bytes: the response is
    /// cut at once.
    func read(from offset: Int, into buffer: UnsafeMutableRawBufferPointer) -> Read {
        state.withLock { state in
            if state.ending == .abandoned { return .abandoned }
            let count = min(state.bytes.count - offset, buffer.count)
            if count > 0, let destination = buffer.baseAddress {
                state.bytes.withUnsafeBytes { destination.copyMemory(from: $0.baseAddress! + offset, byteCount: count) }
                return .bytes(count)
            }
            return state.ending == .finished && offset >= state.bytes.count ? .finished : .waiting
        }
    }

    /// Whether a reader at `offset` has read the whole body.
    func isWhole(at offset: Int) -> Bool {
        state.withLock { $0.ending == .finished && offset >= $0.bytes.count }
    }

    /// Calls `wake` on the producing thread after every append, and on finish or abandon, until
    /// `unwatch` with the number returned. A reader watches before its first read, so that no
    /// wake-up falls between a read that finds nothing and its wait.
    func watch(_ wake: @escaping @Sendable () -> Void) -> Int {
        state.withLock { state in
            state.nextWake += 1
            state.wakes[state.nextWake] = wake
            return state.nextWake
        }
    }

    func unwatch(_ watch: Int) {
        _ = state.withLock { $0.wakes.removeValue(forKey: watch) }
    }
}
