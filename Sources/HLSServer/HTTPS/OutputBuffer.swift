/// The bytes a connection waits to hand to TLS: a session appends them, the connection sends them
/// from `start`. A body is read straight into its free space (`append(reading:)`), so a file's
/// bytes are copied once, by the kernel, before TLS encrypts them. Owned by one `TLSConnection`;
/// used on the loop's thread only.
final class OutputBuffer {
    private var storage: UnsafeMutableRawPointer?
    private var capacity = 0
    /// Bytes appended.
    private(set) var count = 0
    /// Bytes already sent.
    private(set) var start = 0

    /// Allocates nothing until the first bytes come: a connection that only waits holds no buffer.
    init() {}

    deinit { storage?.deallocate() }

    /// Every byte appended is sent.
    var isDrained: Bool { start == count }

    /// The bytes still to send.
    var unsent: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage.map { $0 + start }, count: count - start) }

    /// `bytes` more were sent.
    func consume(_ bytes: Int) {
        start += bytes
    }

    /// Empties a drained buffer, so that the next bytes start at its beginning; frees it when it
    /// grew over `capacityKept` bytes.
    func reset(keepingCapacityUpTo capacityKept: Int) {
        count = 0
        start = 0
        if capacity > capacityKept {
            storage?.deallocate()
            storage = nil
            capacity = 0
        }
    }

    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let free = reserve(bytes.count)
        free.copyMemory(from: base, byteCount: bytes.count)
        count += bytes.count
    }

    func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// Lends `fill` room for up to `maximum` more bytes and keeps the first `written` of them.
    func append<Result>(reading maximum: Int,
                        _ fill: (UnsafeMutableRawBufferPointer) -> (written: Int, result: Result)) -> Result {
        let free = reserve(maximum)
        let (written, result) = fill(UnsafeMutableRawBufferPointer(start: free, count: maximum))
        count += min(max(written, 0), maximum)
        return result
    }

    /// Room for `more` bytes after the last: where they go.
    private func reserve(_ more: Int) -> UnsafeMutableRawPointer {
        if let storage, count + more <= capacity { return storage + count }
        let grown = max(capacity * 2, count + more)
        let larger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
        if let storage {
            larger.copyMemory(from: storage, byteCount: count)
            storage.deallocate()
        }
        storage = larger
        capacity = grown
        return larger + count
    }
}
