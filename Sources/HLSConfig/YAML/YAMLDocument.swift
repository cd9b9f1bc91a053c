import CYAML

/// Text that libyaml does not accept as YAML: its words, and where.
public struct YAMLError: Error, Equatable, Sendable, CustomStringConvertible {
    public var mark: YAMLMark
    public var problem: String

    public var description: String { "\(mark): \(problem)" }
}

/// The first document of a YAML text, composed by libyaml (`yaml_parser_load`) and copied into `YAMLNode`s.
/// Anchors and aliases are resolved by libyaml; tags are ignored.
public enum YAMLDocument {
    /// Deeper nesting than a configuration needs is refused, so a self-referencing alias cannot recurse.
    public static let maximumDepth = 64
    /// Aliases can multiply a small text into a huge tree ("billion laughs"): the copy stops at this many nodes.
    public static let maximumNodes = 100_000

    /// The document's root, or nil for a text without any (empty, or only comments).
    public static func read(_ text: String) throws(YAMLError) -> YAMLNode? {
        var bytes = Array(text.utf8)
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) != 0 else {
            throw YAMLError(mark: YAMLMark(line: 1, column: 1), problem: "libyaml could not start (out of memory)")
        }
        defer { yaml_parser_delete(&parser) }
        var document = yaml_document_t()
        let loaded = bytes.withUnsafeMutableBufferPointer { buffer in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            return yaml_parser_load(&parser, &document) != 0
        }
        guard loaded else { throw error(of: parser, in: bytes) }
        defer { yaml_document_delete(&document) }
        guard let root = yaml_document_get_root_node(&document) else { return nil }
        var copier = Copier(document: document)
        return try copier.copy(root, depth: 0)
    }

    private static func error(of parser: yaml_parser_t, in bytes: [UInt8]) -> YAMLError {
        let problem = parser.problem.map { String(cString: $0) } ?? "not YAML"
        if parser.error == YAML_READER_ERROR {
            // The reader has no line and column, only the offset of the bad byte.
            let before = bytes.prefix(min(parser.problem_offset, bytes.count))
            let line = before.filter { $0 == UInt8(ascii: "\n") }.count + 1
            let column = before.count - (before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0) + 1
            return YAMLError(mark: YAMLMark(line: line, column: column), problem: problem)
        }
        var words = problem
        if let context = parser.context {
            words += " (\(String(cString: context)) that starts at line \(parser.context_mark.line + 1))"
        }
        return YAMLError(mark: mark(parser.problem_mark), problem: words)
    }

    static func mark(_ mark: yaml_mark_t) -> YAMLMark {
        YAMLMark(line: Int(mark.line) + 1, column: Int(mark.column) + 1)
    }

    /// libyaml's nodes (indices into the document) into values.
    private struct Copier {
        var document: yaml_document_t
        var count = 0

        mutating func copy(_ node: UnsafeMutablePointer<yaml_node_t>, depth: Int) throws(YAMLError) -> YAMLNode {
            let mark = YAMLDocument.mark(node.pointee.start_mark)
            count += 1
            guard depth < YAMLDocument.maximumDepth, count <= YAMLDocument.maximumNodes else {
                throw YAMLError(mark: mark, problem: "nested too deeply, or aliases repeat too much")
            }
            switch node.pointee.type {
            case YAML_SCALAR_NODE:
                let scalar = node.pointee.data.scalar
                let text = scalar.value.map { value in
                    String(decoding: UnsafeBufferPointer(start: value, count: scalar.length), as: UTF8.self)
                } ?? ""
                return YAMLNode(.scalar(text, plain: scalar.style == YAML_PLAIN_SCALAR_STYLE), at: mark)
            case YAML_SEQUENCE_NODE:
                var items: [YAMLNode] = []
                var item = node.pointee.data.sequence.items.start
                while let current = item, current != node.pointee.data.sequence.items.top {
                    items.append(try copy(self.node(current.pointee), depth: depth + 1))
                    item = current + 1
                }
                return YAMLNode(.sequence(items), at: mark)
            default:
                var pairs: [YAMLNode.Pair] = []
                var pair = node.pointee.data.mapping.pairs.start
                while let current = pair, current != node.pointee.data.mapping.pairs.top {
                    let key = try copy(self.node(current.pointee.key), depth: depth + 1)
                    let value = try copy(self.node(current.pointee.value), depth: depth + 1)
                    pairs.append(YAMLNode.Pair(key: key, value: value))
                    pair = current + 1
                }
                return YAMLNode(.mapping(pairs), at: mark)
            }
        }

        /// libyaml numbers nodes from 1.
        private mutating func node(_ index: Int32) -> UnsafeMutablePointer<yaml_node_t> {
            yaml_document_get_node(&document, index)
        }
    }
}
