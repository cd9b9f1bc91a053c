import Glibc
import HLSKit

/// A failed store operation: what was attempted, on which file, and the system's reason.
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Operation: String, Sendable {
        case createDirectory = "create directory"
        case writeInDirectory = "write files in"
        case write
        case read
        case remove
        case list
    }

    /// Whether the output cannot be created at all or failed while in use.
    public enum Kind: Sendable {
        /// A missing, read-only or forbidden location.
        case cannotCreate
        /// The disk failed or filled up.
        case ioError
    }

    public var operation: Operation
    /// The full path, root included.
    public var path: String
    public var errno: Int32

    public init(operation: Operation, path: String, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    init(_ operation: Operation, _ path: String, _ error: Errno) {
        self.init(operation: operation, path: path, errno: error.rawValue)
    }

    /// For example `cannot write /x/seg/000001.m4s: Permission denied`.
    public var description: String {
        "cannot \(operation.rawValue) \(path): \(String(cString: strerror(errno)))"
    }

    public var kind: Kind {
        switch operation {
        case .createDirectory, .writeInDirectory:
            return .cannotCreate
        case .write:
            return Self.locationErrors.contains(errno) ? .cannotCreate : .ioError
        case .read, .remove, .list:
            return .ioError
        }
    }

    /// Errors that say the file cannot exist at that place, as opposed to the device failing.
    private static let locationErrors: Set<Int32> = [
        EACCES, EPERM, EROFS, ENOENT, ENOTDIR, EISDIR, EEXIST, ENAMETOOLONG, ELOOP, EINVAL,
    ]
}
