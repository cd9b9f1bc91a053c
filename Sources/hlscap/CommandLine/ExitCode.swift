import Foundation

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
