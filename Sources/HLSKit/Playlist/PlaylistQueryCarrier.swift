/// Carries a query (a token, a signature) into every URI a playlist names, so that a player that
/// opened the playlist with it fetches everything else with it too: media lines, and the `URI`
/// attribute of EXT-X-MAP, EXT-X-MEDIA, EXT-X-I-FRAME-STREAM-INF, EXT-X-PART, EXT-X-PRELOAD-HINT,
/// EXT-X-RENDITION-REPORT, EXT-X-KEY and EXT-X-SESSION-KEY. URIs with a scheme (another server) are
/// left alone; a URI that has a query gets the carried one after `&`.
public enum PlaylistQueryCarrier {
    /// `playlist` with `query` (already encoded, without `?`) added to each relative URI.
    public static func carry(_ query: String, into playlist: String) -> String {
        guard !query.isEmpty else { return playlist }
        var lines: [Substring] = []
        var output = ""
        output.reserveCapacity(playlist.utf8.count + 256)
        lines = playlist.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, line) in lines.enumerated() {
            if index > 0 { output += "\n" }
            if line.hasPrefix("#") {
                output += carryInAttributes(query, line: line)
            } else if line.trimmingCharacters(in: .whitespaces).isEmpty {
                output += line
            } else {
                output += withQuery(query, String(line))
            }
        }
        return output
    }

    /// The tags whose `URI` attribute names a resource.
    static let tagsWithURI = ["#EXT-X-MAP:", "#EXT-X-MEDIA:", "#EXT-X-I-FRAME-STREAM-INF:", "#EXT-X-PART:",
                              "#EXT-X-PRELOAD-HINT:", "#EXT-X-RENDITION-REPORT:", "#EXT-X-KEY:", "#EXT-X-SESSION-KEY:"]

    private static func carryInAttributes(_ query: String, line: Substring) -> String {
        guard tagsWithURI.contains(where: { line.hasPrefix($0) }), let start = line.range(of: "URI=\"") else {
            return String(line)
        }
        guard let end = line[start.upperBound...].firstIndex(of: "\"") else { return String(line) }
        return String(line[..<start.upperBound]) + withQuery(query, String(line[start.upperBound..<end]))
            + String(line[end...])
    }

    private static func withQuery(_ query: String, _ uri: String) -> String {
        if hasScheme(uri) || uri.hasPrefix("data:") { return uri }
        let (path, fragment) = uri.firstIndex(of: "#").map { (String(uri[..<$0]), String(uri[$0...])) } ?? (uri, "")
        return path + (path.contains("?") ? "&" : "?") + query + fragment
    }

    private static func hasScheme(_ uri: String) -> Bool {
        guard let colon = uri.firstIndex(of: ":"), let first = uri.first, first.isLetter else { return false }
        return uri[..<colon].allSatisfy { $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }
            && !uri[..<colon].contains("/")
    }
}
