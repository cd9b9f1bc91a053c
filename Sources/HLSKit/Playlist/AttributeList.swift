/// An HLS attribute list (RFC 8216bis 4.2): `NAME=value,NAME="quoted, string",…`.
struct AttributeList: Equatable {
    enum Value: Equatable {
        case quotedString(String)
        /// Any unquoted value: decimal-integer, enumerated-string, resolution, hexadecimal, …
        case token(String)
    }

    struct SyntaxError: Error, Equatable {
        var reason: String
    }

    private(set) var attributes: [(name: String, value: Value)]

    init(attributes: [(name: String, value: Value)]) {
        self.attributes = attributes
    }

    /// The first value for `name`; a well-formed list names each attribute once.
    subscript(name: String) -> Value? {
        attributes.first { $0.name == name }?.value
    }

    static func == (lhs: AttributeList, rhs: AttributeList) -> Bool {
        lhs.attributes.elementsEqual(rhs.attributes) { $0.name == $1.name && $0.value == $1.value }
    }

    static func parse(_ text: Substring) throws(SyntaxError) -> AttributeList {
        var attributes: [(name: String, value: Value)] = []
        var rest = text[...]
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "=") else {
                throw SyntaxError(reason: "\"\(rest)\" has no '='")
            }
            let name = rest[..<equals]
            guard !name.isEmpty, name.allSatisfy(isNameCharacter) else {
                throw SyntaxError(reason: "\"\(name)\" is not an attribute name")
            }
            rest = rest[rest.index(after: equals)...]
            let value: Value
            if rest.first == "\"" {
                let contentStart = rest.index(after: rest.startIndex)
                guard let closingQuote = rest[contentStart...].firstIndex(of: "\"") else {
                    throw SyntaxError(reason: "the value of \(name) has no closing quote")
                }
                value = .quotedString(String(rest[contentStart..<closingQuote]))
                rest = rest[rest.index(after: closingQuote)...]
                guard rest.isEmpty || rest.first == "," else {
                    throw SyntaxError(reason: "unexpected \"\(rest)\" after the quoted value of \(name)")
                }
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = .token(String(rest[..<end]))
                rest = rest[end...]
            }
            attributes.append((String(name), value))
            if rest.first == "," {
                rest = rest.dropFirst()
                if rest.isEmpty {
                    throw SyntaxError(reason: "trailing ','")
                }
            }
        }
        return AttributeList(attributes: attributes)
    }

    /// Attribute names use only upper-case letters, digits and '-'.
    private static func isNameCharacter(_ character: Character) -> Bool {
        ("A"..."Z").contains(character) || ("0"..."9").contains(character) || character == "-"
    }
}
