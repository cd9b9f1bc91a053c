/// Reads the typed attributes of one tag (RFC 8216bis 4.2), recording an issue for each value that
/// is not of its type, for a required attribute that is missing, and for a malformed list.
struct AttributeReader {
    private(set) var list = AttributeList(attributes: [])
    private let tag: String
    private let line: Int
    private(set) var issues: [PlaylistDocument.Issue] = []

    init(_ tag: PlaylistDocument.Tag) {
        self.tag = tag.name
        line = tag.line
        do {
            list = try AttributeList.parse(Substring(tag.value ?? ""))
        } catch {
            issues.append(issue("4.2", "\(tag.name) attribute list is malformed: \(error.reason)"))
        }
        var seen: Set<String> = []
        for attribute in list.attributes where !seen.insert(attribute.name).inserted {
            issues.append(issue("4.2", "\(tag.name) names \(attribute.name) twice"))
        }
    }

    private func issue(_ section: String, _ message: String) -> PlaylistDocument.Issue {
        PlaylistDocument.Issue(line: line, section: section, message: message)
    }

    private mutating func report(_ section: String, _ message: String) {
        issues.append(issue(section, message))
    }

    func has(_ name: String) -> Bool { list[name] != nil }

    /// Records that `name` is missing when it is.
    mutating func require(_ name: String, section: String) {
        if list[name] == nil {
            report(section, "\(tag) has no \(name) attribute, which it requires")
        }
    }

    mutating func quotedString(_ name: String, section: String = "4.2") -> String? {
        switch list[name] {
        case nil: return nil
        case .quotedString(let value): return value
        case .token(let value):
            report(section, "\(tag) \(name)=\(value) must be a quoted string")
            return nil
        }
    }

    private mutating func token(_ name: String, kind: String, section: String) -> String? {
        switch list[name] {
        case nil: return nil
        case .token(let value): return value
        case .quotedString(let value):
            report(section, "\(tag) \(name)=\"\(value)\" must be an unquoted \(kind)")
            return nil
        }
    }

    mutating func decimalInteger(_ name: String, section: String = "4.2") -> Int? {
        guard let text = token(name, kind: "decimal-integer", section: section) else { return nil }
        guard let value = PlaylistNumber.decimalInteger(Substring(text)) else {
            report(section, "\(tag) \(name)=\(text) is not a decimal-integer")
            return nil
        }
        return value
    }

    mutating func decimalFloatingPoint(_ name: String, section: String = "4.2") -> Double? {
        guard let text = token(name, kind: "decimal-floating-point", section: section) else { return nil }
        guard let value = PlaylistNumber.decimalFloatingPoint(Substring(text)) else {
            report(section, "\(tag) \(name)=\(text) is not a decimal-floating-point number")
            return nil
        }
        return value
    }

    mutating func signedDecimalFloatingPoint(_ name: String, section: String = "4.2") -> Double? {
        guard let text = token(name, kind: "signed-decimal-floating-point", section: section) else { return nil }
        let magnitude = text.hasPrefix("-") ? Substring(text.dropFirst()) : Substring(text)
        guard let value = PlaylistNumber.decimalFloatingPoint(magnitude) else {
            report(section, "\(tag) \(name)=\(text) is not a signed-decimal-floating-point number")
            return nil
        }
        return text.hasPrefix("-") ? -value : value
    }

    /// An enumerated-string; with `allowed`, one of those values.
    mutating func enumeratedString(_ name: String, allowed: Set<String>? = nil, section: String = "4.2") -> String? {
        guard let text = token(name, kind: "enumerated-string", section: section) else { return nil }
        if let allowed, !allowed.contains(text) {
            report(section, "\(tag) \(name)=\(text) is not one of \(allowed.sorted().joined(separator: ", "))")
            return nil
        }
        return text
    }

    /// decimal-resolution: `<width>x<height>`.
    mutating func resolution(_ name: String, section: String = "4.2") -> MasterPlaylist.Resolution? {
        guard let text = token(name, kind: "decimal-resolution", section: section) else { return nil }
        let sides = text.split(separator: "x", omittingEmptySubsequences: false)
        guard sides.count == 2, let width = PlaylistNumber.decimalInteger(sides[0]),
              let height = PlaylistNumber.decimalInteger(sides[1]) else {
            report(section, "\(tag) \(name)=\(text) is not a decimal-resolution such as 1280x720")
            return nil
        }
        return MasterPlaylist.Resolution(width: width, height: height)
    }

    /// A byte range `<n>[@<o>]` in a quoted string (EXT-X-MAP, EXT-X-PART).
    mutating func quotedByteRange(_ name: String, section: String) -> MediaPlaylistDocument.ByteRange? {
        guard let text = quotedString(name, section: section) else { return nil }
        guard let range = MediaPlaylistDocument.ByteRange(Substring(text)) else {
            report(section, "\(tag) \(name)=\"\(text)\" is not a byte range <length>[@<offset>]")
            return nil
        }
        return range
    }
}
