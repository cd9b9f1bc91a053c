import Foundation
import HLSTestSupport
import Testing

/// The option reference in docs/ against the options `--help` prints: every option of every command is
/// in exactly one topic page's reference, and the references list nothing the help does not print.
/// The help is read from the built binary, so it does not matter which file holds an option's text.
@Suite struct HelpReferenceTests {
    @Test func everyOptionTheHelpPrintsIsInTheReferenceOnceAndNothingElse() throws {
        let commands = try Self.commandNames()
        #expect(commands.count >= 7, "hlscap --help lists \(commands)")
        let reference = try OptionReference(directory: ExternalTools.repositoryRoot.appendingPathComponent("docs"))
        var helps: [String: String] = ["hlscap": try Self.help([])]
        for command in commands { helps[command] = try Self.help([command]) }
        for problem in OptionReference.problems(helps: helps, reference: reference) {
            Issue.record(Comment(rawValue: problem))
        }
    }

    @Test func aMissingOrExtraOptionIsNamed() {
        let help = """
            Usage: hlscap sign URL

            Options:
              --expires DURATION   how long the URL works
              --key FILE           the server's key
              -o FILE              where it goes
            """
        let page = """
            # Signing

            ## Option reference

            | option | commands | meaning |
            |---|---|---|
            | `--expires DURATION` | sign | how long \\| for how long |
            | `--prefix PATH` | sign | the path prefix |
            | `--expires DURATION` | sign, serve | again |
            | `-o FILE` | sign | where it goes |

            ## Not the reference

            | `--key FILE` | sign | a table elsewhere does not count |
            """
        let reference = OptionReference(pages: ["signing.md": page])
        let problems = OptionReference.problems(helps: ["sign": help], reference: reference)
        #expect(problems.contains { $0.contains("--key") && $0.contains("hlscap sign --help") && $0.contains("no docs/") })
        #expect(problems.contains { $0.contains("--prefix") && $0.contains("signing.md") && $0.contains("does not print") })
        #expect(problems.contains { $0.contains("--expires") && $0.contains("2 times") })
        #expect(problems.contains { $0.contains("serve") && $0.contains("no command") })
        #expect(!problems.contains { $0.hasPrefix("-o:") })
        #expect(problems.count == 4, "\(problems)")
    }

    @Test func theCommandListKeepsNamesApartFromTheirText() throws {
        let help = try Self.help([])
        let rows = Self.section("Commands:", of: help) + Self.section("Options:", of: help)
        #expect(rows.count >= 9, "\(help)")
        let columns = Set(rows.map { row in
            let name = row.dropFirst(2).prefix { $0 != " " }
            let gap = row.dropFirst(2 + name.count).prefix { $0 == " " }
            #expect(gap.count >= 2, "no room between the name and its text in \"\(row)\"")
            return 2 + name.count + gap.count
        })
        #expect(columns.count == 1, "the text starts at columns \(columns.sorted())")
    }

    /// The command names `hlscap --help` lists.
    static func commandNames() throws -> [String] {
        try section("Commands:", of: help([])).map { String($0.dropFirst(2).prefix { $0 != " " }) }
    }

    static func help(_ command: [String]) throws -> String {
        let result = try ExternalTools.runHlscap(command + ["--help"], timeoutSeconds: 30)
        #expect(result.exitStatus == 0, "hlscap \((command + ["--help"]).joined(separator: " ")): \(result.stderr)")
        return result.stdout
    }

    /// The indented rows under a heading line, up to the next blank line.
    static func section(_ heading: String, of help: String) -> [String] {
        let lines = help.components(separatedBy: "\n")
        guard let start = lines.firstIndex(of: heading) else { return [] }
        return Array(lines[(start + 1)...].prefix { $0.hasPrefix("  ") })
    }
}

/// The `## Option reference` tables of the docs pages: rows of an option, the commands that take it and
/// what it does.
struct OptionReference {
    struct Row {
        let page: String
        let option: String
        let commands: [String]
    }

    let rows: [Row]

    init(directory: URL) throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".md") }
        var pages: [String: String] = [:]
        for name in names {
            pages["docs/" + name] = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
        self.init(pages: pages)
    }

    init(pages: [String: String]) {
        var rows: [Row] = []
        for (page, text) in pages.sorted(by: { $0.key < $1.key }) {
            var inReference = false
            var inCode = false
            for line in text.components(separatedBy: "\n") {
                if line.hasPrefix("```") { inCode.toggle() }
                if inCode { continue }
                if line.hasPrefix("#") {
                    inReference = line == "## Option reference"
                    continue
                }
                guard inReference, line.hasPrefix("|") else { continue }
                // "\|" is a pipe inside a cell.
                let cells = line.replacingOccurrences(of: "\\|", with: "\u{1}").split(separator: "|")
                    .map { $0.trimmingCharacters(in: .whitespaces) }
                guard cells.count >= 3, cells[0].hasPrefix("`-") else { continue }
                let option = cells[0].dropFirst().prefix { $0 != " " && $0 != "`" }
                let commands = cells[1].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                rows.append(Row(page: page, option: String(option), commands: commands))
            }
        }
        self.rows = rows
    }

    /// Options as the help prints them: a row indented two spaces that starts with a dash.
    static func helpOptions(_ help: String) -> Set<String> {
        Set(help.components(separatedBy: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  -"), !line.hasPrefix("   ") else { return nil }
            return String(line.dropFirst(2).prefix { $0 != " " })
        })
    }

    /// Every disagreement between the helps (by command; "hlscap" is the program's own) and the reference,
    /// one sentence each, naming the option, the command and the page.
    static func problems(helps: [String: String], reference: OptionReference) -> [String] {
        var problems: [String] = []
        var documented: [String: [String: [String]]] = [:]   // command → option → pages
        for row in reference.rows {
            for command in row.commands { documented[command, default: [:]][row.option, default: []].append(row.page) }
        }
        for (command, help) in helps.sorted(by: { $0.key < $1.key }) {
            let invocation = command == "hlscap" ? "hlscap --help" : "hlscap \(command) --help"
            let printed = helpOptions(help)
            let listed = documented[command] ?? [:]
            for option in printed.subtracting(listed.keys).sorted() {
                problems.append("\(option): \(invocation) prints it, but no docs/ option reference lists it for \(command)")
            }
            for (option, pages) in listed.sorted(by: { $0.key < $1.key }) {
                if !printed.contains(option) {
                    problems.append("\(option): \(pages.joined(separator: ", ")) lists it for \(command), "
                        + "but \(invocation) does not print it")
                } else if pages.count > 1 {
                    problems.append("\(option): listed for \(command) \(pages.count) times (\(pages.joined(separator: ", "))); "
                        + "one topic page holds it")
                }
            }
        }
        for command in documented.keys.sorted() where helps[command] == nil {
            let pages = Set(reference.rows.filter { $0.commands.contains(command) }.map(\.page)).sorted()
            problems.append("\(command): \(pages.joined(separator: ", ")) lists options for it, but hlscap has no command "
                + "of that name")
        }
        return problems
    }
}

/// The architecture tables of README.md and docs/architecture.md name every target in Sources/, and only those.
@Suite struct TargetMapTests {
    @Test(arguments: ["README.md", "docs/architecture.md"])
    func theArchitectureTableNamesEveryTarget(page: String) throws {
        let root = ExternalTools.repositoryRoot
        let targets = Set(try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Sources").path)
            .filter { !$0.hasPrefix(".") })
        let text = try String(contentsOf: root.appendingPathComponent(page), encoding: .utf8)
        let mapped = Self.tableTargets(text)
        #expect(!mapped.isEmpty, "\(page) has no table whose first column names targets")
        for target in targets.subtracting(mapped).sorted() {
            Issue.record("Sources/\(target) is a target, but \(page)'s architecture table does not name it")
        }
        for name in mapped.subtracting(targets).sorted() {
            Issue.record("\(page)'s architecture table names \(name), but Sources/ has no such target")
        }
    }

    /// The `names` in the first column of the tables whose header's first column is "target".
    /// Each target's folders are named in its row as `Folder/`, and every folder a row names is one of
    /// its target's (at any depth): a file moved to another folder, or a folder added, changes the map.
    @Test(arguments: ["README.md", "docs/architecture.md"])
    func theArchitectureTableNamesEveryFolder(page: String) throws {
        let root = ExternalTools.repositoryRoot
        let text = try String(contentsOf: root.appendingPathComponent(page), encoding: .utf8)
        for (target, row) in Self.tableRows(text) {
            let source = root.appendingPathComponent("Sources").appendingPathComponent(target)
            let top = try FileManager.default.contentsOfDirectory(atPath: source.path).filter { name in
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: source.appendingPathComponent(name).path,
                                                      isDirectory: &isDirectory) && isDirectory.boolValue
            }
            let all = Set(FileManager.default.enumerator(atPath: source.path)?.compactMap { item -> String? in
                guard let path = item as? String else { return nil }
                var isDirectory: ObjCBool = false
                let exists = FileManager.default.fileExists(atPath: source.appendingPathComponent(path).path,
                                                            isDirectory: &isDirectory)
                return exists && isDirectory.boolValue ? (path as NSString).lastPathComponent : nil
            } ?? [])
            let named = Set(row.matches(of: /`([A-Za-z0-9]+)\/`/).map { String($0.1) })
            // The README's rows may leave folders out; docs/architecture.md's name them all.
            if page == "docs/architecture.md" {
                for folder in Set(top).subtracting(named).sorted() {
                    Issue.record("Sources/\(target)/\(folder)/ is a folder, but \(page)'s row for \(target) does not name it")
                }
            }
            for folder in named.subtracting(all).sorted() {
                Issue.record("\(page)'s row for \(target) names \(folder)/, but Sources/\(target) has no such folder")
            }
        }
    }

    /// Each target's row, by the target its first column names (rows naming several are left out).
    static func tableRows(_ text: String) -> [String: String] {
        var rows: [String: String] = [:]
        for line in text.components(separatedBy: "\n") where line.hasPrefix("| `") {
            let firstCell = line.dropFirst().prefix { $0 != "|" }
            let names = tableTargets("| target |\n" + line)
            if names.count == 1, let name = names.first, !firstCell.contains(",") { rows[name] = line }
        }
        return rows
    }

    static func tableTargets(_ text: String) -> Set<String> {
        var names: Set<String> = []
        var inTargetTable = false
        for line in text.components(separatedBy: "\n") {
            guard line.hasPrefix("|") else {
                inTargetTable = false
                continue
            }
            let firstCell = line.dropFirst().prefix { $0 != "|" }.trimmingCharacters(in: .whitespaces)
            if firstCell == "target" {
                inTargetTable = true
                continue
            }
            guard inTargetTable else { continue }
            let parts = firstCell.split(separator: "`", omittingEmptySubsequences: false)
            names.formUnion(stride(from: 1, to: parts.count, by: 2).map { String(parts[$0]) })
        }
        return names
    }
}
