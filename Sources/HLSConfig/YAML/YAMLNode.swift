/// Where a node starts in the text: 1-based line and column, as editors and compilers count them.
public struct YAMLMark: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public static func < (lhs: YAMLMark, rhs: YAMLMark) -> Bool {
        (lhs.line, lhs.column) < (rhs.line, rhs.column)
    }

    public var description: String { "\(line):\(column)" }
}

/// One node of a YAML document as libyaml composed it: a scalar, a sequence or a mapping, with where it
/// starts. Scalars stay text; what a key's value means is its reader's business.
public struct YAMLNode: Equatable, Sendable {
    public enum Content: Equatable, Sendable {
        /// `plain` is false for a quoted or block scalar: `"true"` is text, `true` may be a boolean.
        case scalar(String, plain: Bool)
        case sequence([YAMLNode])
        /// Pairs in the order written; a key written twice stays twice, for the reader to refuse.
        case mapping([Pair])
    }

    public struct Pair: Equatable, Sendable {
        public var key: YAMLNode
        public var value: YAMLNode

        public init(key: YAMLNode, value: YAMLNode) {
            self.key = key
            self.value = value
        }
    }

    public var content: Content
    public var mark: YAMLMark

    public init(_ content: Content, at mark: YAMLMark) {
        self.content = content
        self.mark = mark
    }

    /// The text of a scalar; nil for a sequence or a mapping.
    public var scalar: String? {
        if case .scalar(let text, _) = content { return text }
        return nil
    }

    /// A plain scalar that YAML reads as null: empty, `~` or `null`.
    public var isNull: Bool {
        guard case .scalar(let text, plain: true) = content else { return false }
        return ["", "~", "null", "Null", "NULL"].contains(text)
    }

    /// What the node is, in words for a message: "a mapping", "a sequence", "a value".
    public var kindName: String {
        switch content {
        case .scalar: "a value"
        case .sequence: "a sequence"
        case .mapping: "a mapping"
        }
    }
}
