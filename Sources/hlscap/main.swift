import Foundation
import HLSMedia

let version = "0.1.0"

let commands: [any Command.Type] = [LiveCommand.self, RunCommand.self, FileCommand.self, ServeCommand.self, SignCommand.self, DevicesCommand.self,
                                    ValidateCommand.self, RecordingsCommand.self]

let programOptions: [(name: String, text: String)] = [
    ("--help", "show this help, or a command's help after its name"), ("--version", "print the version"),
]

/// Command names and options in one column, two spaces wider than the longest of them.
@MainActor
func helpRows(_ rows: [(name: String, text: String)]) -> String {
    let width = (commands.map { $0.name } + programOptions.map { $0.name }).map { $0.count }.max()! + 2
    return rows.map { "  " + $0.name.padding(toLength: width, withPad: " ", startingAt: 0) + $0.text }
        .joined(separator: "\n")
}

let programHelp = """
    hlscap \(version) — package live and recorded video as HLS (fragmented MP4) on disk

    Usage: hlscap <command> [options]

    Commands:
    \(helpRows(commands.map { ($0.name, $0.summary) }))

    Options:
    \(helpRows(programOptions))

    Run 'hlscap <command> --help' for a command's options.
    """

func printError(_ message: String) {
    FileHandle.standardError.write(Data("hlscap: \(message)\n".utf8))
}

@MainActor
func runMain(_ words: [String]) -> ExitCode {
    guard let first = words.first else {
        printError("no command given; run 'hlscap --help' for the commands")
        return .usage
    }
    switch first {
    case "--help", "-h", "help":
        print(programHelp)
        return .success
    case "--version":
        print("hlscap \(version)")
        return .success
    default:
        break
    }
    guard let command = commands.first(where: { $0.name == first }) else {
        printError("unknown command '\(first)'; run 'hlscap --help' for the commands")
        return .usage
    }
    var arguments = ArgumentList(Array(words.dropFirst()))
    if arguments.flag("--help") || arguments.flag("-h") {
        print(command.help)
        return .success
    }
    do {
        try command.init(arguments: &arguments).run()
        return .success
    } catch let error as CommandError {
        // A second interrupt has nothing more to say.
        if !error.message.isEmpty { printError(error.message) }
        if error.exitCode == .usage { printError("run 'hlscap \(command.name) --help' for usage") }
        return error.exitCode
    } catch {
        printError("\(error)")
        return .software
    }
}

ProcessFootprint.disableTransparentHugePages()
ProcessFootprint.limitMallocArenas()
exit(runMain(Array(CommandLine.arguments.dropFirst())).rawValue)
