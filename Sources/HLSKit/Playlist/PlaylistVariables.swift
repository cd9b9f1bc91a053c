import Foundation

/// The variables a playlist defines with EXT-X-DEFINE (RFC 8216bis 4.4.2.3), and the problems
/// found while defining them and substituting `{$name}` references (RFC 8216bis 4.3).
public struct PlaylistVariables: Sendable, Equatable {
    public enum Problem: Sendable, Equatable {
        /// A `{$name}` no EXT-X-DEFINE defines, or an IMPORT or QUERYPARAM with nothing to take.
        case undefinedReference
        /// A second EXT-X-DEFINE of one name.
        case duplicateName
        /// A name with a character outside `[a-zA-Z0-9-_]`.
        case invalidName
        /// An EXT-X-DEFINE whose attributes are not what the tag allows.
        case syntax
    }

    public struct Issue: Sendable, Equatable {
        public var problem: Problem
        public var line: Int
        public var section: String
        public var message: String
    }

    /// Each defined name and its value.
    public var values: [String: String] = [:]
    /// Names imported from a multivariant playlist that is not at hand: their value is unknown, so
    /// references to them are left as written and not reported.
    public var unknownImports: Set<String> = []
    public var issues: [Issue] = []
    /// The line of each name's EXT-X-DEFINE.
    var definitionLines: [String: Int] = [:]

    static func isValidName(_ name: Substring) -> Bool {
        !name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }
}

extension PlaylistDocument {
    /// This playlist with its variables substituted in URI lines and quoted-string attribute values.
    /// `imports` are the multivariant playlist's variables (nil when it is not known); `query` is
    /// the query of the playlist's URL, for QUERYPARAM.
    public func substitutingVariables(imports: [String: String]?, query: String?) -> (PlaylistDocument, PlaylistVariables) {
        var variables = PlaylistVariables()
        let parameters = Self.queryParameters(query)
        for tag in tags where tag.name == "EXT-X-DEFINE" {
            variables.define(tag, multivariant: isMultivariant, imports: imports, parameters: parameters)
        }
        guard !variables.values.isEmpty || tags.contains(where: { $0.value?.contains("{$") == true })
            || entries.contains(where: { if case .uri(let uri, _) = $0 { uri.contains("{$") } else { false } })
        else { return (self, variables) }
        var substituted = self
        substituted.entries = entries.map { entry in
            switch entry {
            case .uri(let uri, let line):
                return .uri(variables.substitute(Substring(uri), line: line), line: line)
            case .tag(var tag):
                // The value an EXT-X-DEFINE gives is taken as written.
                guard tag.name != "EXT-X-DEFINE", let value = tag.value, value.contains("{$") else { return .tag(tag) }
                // Between the 1st and 2nd '"', the 3rd and 4th … : the quoted strings.
                let pieces = value.split(separator: "\"", omittingEmptySubsequences: false)
                tag.value = pieces.enumerated().map { index, piece in
                    index % 2 == 1 ? variables.substitute(piece, line: tag.line) : String(piece)
                }.joined(separator: "\"")
                return .tag(tag)
            }
        }
        return (substituted, variables)
    }

    private static func queryParameters(_ query: String?) -> [String: String] {
        var parameters: [String: String] = [:]
        for pair in (query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count == 2 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
            if parameters[name] == nil { parameters[name] = value }
        }
        return parameters
    }
}

extension PlaylistVariables {
    fileprivate mutating func define(_ tag: PlaylistDocument.Tag, multivariant: Bool, imports: [String: String]?,
                                     parameters: [String: String]) {
        let section = "4.4.2.3"
        func report(_ problem: Problem, _ message: String, section: String = section) {
            issues.append(Issue(problem: problem, line: tag.line, section: section, message: message))
        }
        var reader = AttributeReader(tag)
        let name = reader.quotedString("NAME", section: section)
        let value = reader.quotedString("VALUE", section: section)
        let imported = reader.quotedString("IMPORT", section: section)
        let parameter = reader.quotedString("QUERYPARAM", section: section)
        for issue in reader.issues {
            report(.syntax, issue.message, section: issue.section)
        }
        let given = [name, imported, parameter].compactMap { $0 }
        guard given.count == 1, let defined = given.first else {
            if reader.issues.isEmpty {
                report(.syntax, "EXT-X-DEFINE must have exactly one of NAME, IMPORT and QUERYPARAM")
            }
            return
        }
        guard Self.isValidName(Substring(defined)) else {
            report(.invalidName, "variable name \"\(defined)\" has characters other than a-z, A-Z, 0-9, '-' and '_'; rename it")
            return
        }
        if let first = definitionLines[defined] {
            report(.duplicateName, "variable \"\(defined)\" is defined again (first on line \(first)); "
                + "a playlist defines a name once")
            return
        }
        definitionLines[defined] = tag.line
        if name != nil {
            guard let value else {
                report(.syntax, "EXT-X-DEFINE:NAME=\"\(defined)\" has no VALUE")
                return
            }
            values[defined] = value
        } else if imported != nil {
            if multivariant {
                report(.syntax, "EXT-X-DEFINE:IMPORT belongs in a media playlist, not a multivariant playlist")
            } else if let imports {
                if let importedValue = imports[defined] {
                    values[defined] = importedValue
                } else {
                    report(.undefinedReference, "IMPORT=\"\(defined)\" names no variable of the multivariant playlist")
                }
            } else {
                unknownImports.insert(defined)
            }
        } else if let parameterValue = parameters[defined] {
            values[defined] = parameterValue
        } else {
            report(.undefinedReference, "QUERYPARAM=\"\(defined)\" names no query parameter of the playlist's URI")
        }
    }

    /// `text` with each `{$name}` replaced by its value; an undefined one is reported and kept.
    fileprivate mutating func substitute(_ text: Substring, line: Int) -> String {
        var result = ""
        var rest = text
        while let open = rest.range(of: "{$") {
            result += rest[..<open.lowerBound]
            let afterOpen = rest[open.upperBound...]
            let name = afterOpen.prefix { $0 != "}" }
            guard name.endIndex < afterOpen.endIndex, Self.isValidName(name) else {
                result += rest[open]
                rest = afterOpen
                continue
            }
            let reference = rest[open.lowerBound...name.endIndex]
            if let value = values[String(name)] {
                result += value
            } else {
                if !unknownImports.contains(String(name)) {
                    issues.append(Issue(problem: .undefinedReference, line: line, section: "4.3",
                                        message: "\(reference) refers to no variable an EXT-X-DEFINE defines; define it or write its value"))
                }
                result += reference
            }
            rest = afterOpen[afterOpen.index(after: name.endIndex)...]
        }
        return result + rest
    }
}
