import Foundation
import Glibc
import HLSBase
import HLSKit

/// Files kept in memory: the store of in-process tests, which can also be told to fail.
public final class MemoryStore: StreamStore, @unchecked Sendable {
    /// A failure to give instead of doing an operation.
    public struct Fault: Sendable {
        public var operation: StoreError.Operation
        public var errno: Int32
        /// Which paths fail; every path when nil.
        public var matches: @Sendable (String) -> Bool

        public init(_ operation: StoreError.Operation, errno: Int32 = ENOSPC,
                    matching matches: @escaping @Sendable (String) -> Bool = { _ in true }) {
            self.operation = operation
            self.errno = errno
            self.matches = matches
        }
    }

    public let location: String
    /// Tells when each file was written.
    private let clock: any Scheduler
    private let state = Locked(State())

    private struct State {
        var files: [String: [UInt8]] = [:]
        var modified: [String: Date] = [:]
        var durable: Set<String> = []
        var faults: [Fault] = []
        var writes: [String] = []
        var capacityBytes: Int64?
    }

    public init(location: String = "memory", clock: any Scheduler = SystemClock()) {
        self.location = location
        self.clock = clock
    }

    /// The most bytes the files may take together, as a disk of that size would: `availableBytes()`
    /// then tells what is left, and a write or an append beyond it fails with ENOSPC. Nil (the start)
    /// has no limit, and `availableBytes()` cannot tell.
    public var capacityBytes: Int64? {
        get { state.withLock { $0.capacityBytes } }
        set { state.withLock { $0.capacityBytes = newValue } }
    }

    /// Every later operation of that kind on a matching path fails, until `clearFaults`.
    public func inject(_ fault: Fault) {
        state.withLock { $0.faults.append(fault) }
    }

    public func clearFaults() {
        state.withLock { $0.faults = [] }
    }

    /// Every file's bytes, by path.
    public var files: [String: [UInt8]] { state.withLock { $0.files } }

    /// The paths written, in order, appends included: what the tests check write order with.
    public var writeLog: [String] { state.withLock { $0.writes } }

    /// The files as a crash would leave them: only what was made durable.
    public var durableFiles: [String: [UInt8]] {
        state.withLock { state in state.files.filter { state.durable.contains($0.key) } }
    }

    public func text(_ path: String) -> String? {
        state.withLock { $0.files[path] }.map { String(decoding: $0, as: UTF8.self) }
    }

    private func check(_ operation: StoreError.Operation, _ path: String, in state: State) throws(StoreError) {
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        if !path.isEmpty, components.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) {
            throw StoreError(operation: operation, path: fullPath(path), errno: EINVAL)
        }
        if let fault = state.faults.first(where: { $0.operation == operation && $0.matches(path) }) {
            throw StoreError(operation: operation, path: fullPath(path), errno: fault.errno)
        }
    }

    private func fullPath(_ path: String) -> String { location + "/" + path }

    public func write(_ bytes: [UInt8], to path: String, durability: Durability) throws(StoreError) {
        try state.withLock { state throws(StoreError) in
            try check(.write, path, in: state)
            try checkRoom(for: Int64(bytes.count - (state.files[path]?.count ?? 0)), path, in: state)
            state.files[path] = bytes
            state.modified[path] = clock.now()
            state.writes.append(path)
            if durability == .immediate { state.durable.insert(path) } else { state.durable.remove(path) }
        }
    }

    public func append(_ bytes: [UInt8], to path: String, durability: Durability) throws(StoreError) {
        try state.withLock { state throws(StoreError) in
            try check(.write, path, in: state)
            guard state.files[path] != nil else { throw StoreError(operation: .write, path: fullPath(path), errno: ENOENT) }
            try checkRoom(for: Int64(bytes.count), path, in: state)
            state.files[path]! += bytes
            state.modified[path] = clock.now()
            state.writes.append(path)
        }
    }

    public func read(_ path: String) throws(StoreError) -> [UInt8] {
        try state.withLock { state throws(StoreError) in
            try check(.read, path, in: state)
            guard let bytes = state.files[path] else { throw StoreError(operation: .read, path: fullPath(path), errno: ENOENT) }
            return bytes
        }
    }

    public func remove(_ path: String) throws(StoreError) {
        try state.withLock { state throws(StoreError) in
            try check(.remove, path, in: state)
            state.files[path] = nil
            state.modified[path] = nil
            state.durable.remove(path)
        }
    }

    public func list(_ directory: String) throws(StoreError) -> [String] {
        try state.withLock { state throws(StoreError) in
            try check(.list, directory, in: state)
            let prefix = directory.isEmpty ? "" : directory + "/"
            let names = state.files.keys.filter { $0.hasPrefix(prefix) }.map { path in
                String(path.dropFirst(prefix.count).prefix { $0 != "/" })
            }
            return Set(names).sorted()
        }
    }

    public func exists(_ path: String) throws(StoreError) -> Bool {
        try state.withLock { state throws(StoreError) in
            try check(.read, path, in: state)
            return state.files[path] != nil || state.files.keys.contains { $0.hasPrefix(path + "/") }
        }
    }

    public func synchronize() throws(StoreError) {
        try state.withLock { state throws(StoreError) in
            try check(.write, "", in: state)
            state.durable = Set(state.files.keys)
        }
    }

    public func removeStaleTemporaryFiles() throws(StoreError) -> [String] { [] }

    public func removeEmptyDirectories() {}

    public func files(below directory: String) throws(StoreError) -> [StoredFile] {
        try state.withLock { state throws(StoreError) in
            try check(.list, directory, in: state)
            let prefix = directory.isEmpty ? "" : directory + "/"
            return state.files.compactMap { path, bytes -> StoredFile? in
                guard path.hasPrefix(prefix) else { return nil }
                let relative = String(path.dropFirst(prefix.count))
                guard !relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) else { return nil }
                return StoredFile(path: relative, byteCount: Int64(bytes.count),
                                  modified: state.modified[path] ?? Date(timeIntervalSince1970: 0))
            }.sorted { $0.path < $1.path }
        }
    }

    public func availableBytes() throws(StoreError) -> Int64? {
        state.withLock { state in state.capacityBytes.map { $0 - Self.usedBytes(state) } }
    }

    /// Directories exist here only as the paths of files: one that holds nothing is already gone.
    public func removeDirectoryIfEmpty(_ directory: String) throws(StoreError) -> Bool { false }

    private func checkRoom(for bytes: Int64, _ path: String, in state: State) throws(StoreError) {
        guard let capacity = state.capacityBytes, bytes > 0, Self.usedBytes(state) + bytes > capacity else { return }
        throw StoreError(operation: .write, path: fullPath(path), errno: ENOSPC)
    }

    private static func usedBytes(_ state: State) -> Int64 {
        state.files.values.reduce(0) { $0 + Int64($1.count) }
    }
}
