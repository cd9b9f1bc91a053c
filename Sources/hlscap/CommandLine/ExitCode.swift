import Foundation
import HLSEngine
import HLSKit
import HLSMedia
import HLSOutput

/// sysexits(3) codes, the contract with scripts that run hlscap.
enum ExitCode: Int32 {
    case success = 0
    case usage = 64
    case dataError = 65
    case noInput = 66
    case unavailable = 69
    case software = 70
    case cannotCreate = 73
    case ioError = 74
    case noPermission = 77
    case config = 78
    case interrupted = 130
}

/// An error that ends the command: one line for stderr and the exit code.
struct CommandError: Error, CustomStringConvertible {
    var message: String
    var exitCode: ExitCode

    init(_ message: String, exitCode: ExitCode) {
        self.message = message
        self.exitCode = exitCode
    }

    static func usage(_ message: String) -> CommandError {
        CommandError(message, exitCode: .usage)
    }

    var description: String { message }
}

/// The one place where what went wrong becomes an exit status (sysexits) and a line for stderr.
extension CommandError {
    /// `error` as the command reports it; an error without a message of its own met while packaging
    /// `inputs` names them.
    init(_ error: any Error, packaging inputs: [String] = []) {
        switch error {
        case let error as CommandError:
            self = error
        case let error as PlanError:
            self.init(error)
        case let error as MediaInputError:
            self.init(error.description, exitCode: error.isUnreadable ? .noInput : .dataError)
        case let error as CopyError:
            let advice = error.transcodingHelps ? "; leave out --copy and transcoding will handle it" : ""
            self.init(error.summary + advice, exitCode: .dataError)
        case let error as CodecError:
            self.init("\(error)", exitCode: .dataError)
        case let error as StoreError:
            self.init(error)
        case let error as LiveError:
            self.init(error)
        case let error as LoadError:
            self.init(error)
        case let error as KeyframeGapTooLong:
            self.init(error.description, exitCode: .dataError)
        case PackagingError.holdsStream(let location):
            self.init("\(location) already holds a stream; add --overwrite to replace it or choose another --out",
                      exitCode: .cannotCreate)
        case let error as PackagingError:
            self.init(error.description, exitCode: .dataError)
        default:
            let context = inputs.isEmpty ? "" : inputs.joined(separator: ", ") + ": packaging failed: "
            self.init(context + "\(error)", exitCode: .software)
        }
    }

    init(_ error: StoreError) {
        self.init(error.description, exitCode: error.kind == .cannotCreate ? .cannotCreate : .ioError)
    }

    /// How a live stream that had started ended badly. Writing that fails once the stream runs is an I/O
    /// failure (74) whatever the reason, even one that would have kept it from starting (73): the disk
    /// filled, turned read-only, or the directory went. `resumable` says whether `--resume` can continue it.
    init(streamFailure failure: LiveError, resumable: Bool) {
        guard case .store(let error) = failure else {
            self.init(failure)
            return
        }
        let then = resumable ? ", then add --resume to continue it" : ""
        let advice = switch error.errno {
        case ENOSPC, EDQUOT:
            "the disk is full; the stream ends with its last complete segment: free space\(then)"
        case EROFS:
            "the file system turned read-only; the stream ends with its last complete segment: make it writable\(then)"
        case ENOENT where error.operation == .writeInDirectory:
            "the output directory was removed while the stream ran; the stream stopped"
        default:
            "the stream ends with its last complete segment: check the disk\(then)"
        }
        self.init("\(error.description); \(advice)", exitCode: .ioError)
    }

    /// A validation target that cannot be read: missing 66, unreachable 69, failing 74.
    init(_ error: LoadError) {
        switch error {
        case .notFound(let reason), .unreadable(let reason):
            self.init("\(reason); give a stream directory, a playlist file or an http(s) URL that can be read",
                      exitCode: .noInput)
        case .unreachable(let reason):
            self.init("\(reason); check the URL and that its server is up", exitCode: .unavailable)
        case .readFailed(let reason):
            self.init("reading failed: \(reason); try again", exitCode: .ioError)
        case .untrusted(let reason):
            self.init("\(reason); give --ca-file with the PEM certificate of the authority that signed the server's "
                + "certificate (or of a self-signed server certificate itself)", exitCode: .unavailable)
        }
    }

    init(_ error: LiveError) {
        switch error {
        case .holdsStream(let location):
            self.init("\(location) already holds a stream; add --resume to continue it, --overwrite to replace it, "
                + "or choose another --out", exitCode: .cannotCreate)
        case .cannotResume(let reason):
            self.init(reason + " (--overwrite starts a new stream)", exitCode: .cannotCreate)
        case .store(let error):
            self.init(error)
        case .device(let device):
            self.init(error.description, exitCode: device.isUnreachable ? .unavailable : .noInput)
        case .deviceFailed:
            self.init(error.description, exitCode: .ioError)
        case .encoding:
            self.init(error.description, exitCode: .software)
        case .recordingExists(let path):
            self.init("\(path) already exists; add --resume to record beside it, --overwrite to replace it, or "
                + "choose another --record", exitCode: .cannotCreate)
        case .recording:
            self.init(error.description, exitCode: .ioError)
        case .publishIncomplete(let report):
            let lines = report.undelivered.map { "  \($0)" }.joined(separator: "\n")
            self.init("\(report.undelivered.count) of the stream's files did not reach the origin:\n" + lines,
                      exitCode: .ioError)
        }
    }
}
