import Foundation
import HLSServer

/// `hlscap sign URL --expires 1h --key FILE`: a URL the built-in server accepts under `--auth-key`.
struct SignCommand: Command {
    static let name = "sign"
    static let summary = "sign a URL for a server started with --auth-key"
    static let help = """
        Usage: hlscap sign URL --expires DURATION --key FILE [--prefix PATH]

        Prints URL with a signature the built-in server (hlscap serve, hlscap live --serve) accepts
        when started with --auth-key FILE: it opens every file below the path prefix (by default the
        URL's folder, so one signature opens a stream's master and media playlists, segments, parts
        and keys) until it expires, and nothing else. The signature is HMAC-SHA256 over the prefix and
        the expiry time; the server carries it into every URI of the playlists it serves.

        Options:
          --expires DURATION   how long the URL works: 90s, 30m, 12h, 7d
          --key FILE           the server's key (openssl rand -hex 32 > FILE makes one)
          --prefix PATH        the path prefix the signature opens (default: the URL's folder)
          --help               show this help

        Exit status: 0, 64 for a bad URL or duration, 66 for an unreadable key, 65 for a short one.
        """

    var url: URL
    var lifetimeSeconds: Int
    var keyPath: String
    var prefix: String?

    init(arguments: inout ArgumentList) throws {
        let expires = try arguments.value("--expires")
        let key = try arguments.value("--key")
        prefix = try arguments.value("--prefix")
        let positionals = try arguments.positionals()
        guard positionals.count == 1, let url = URL(string: positionals[0]), url.scheme != nil, url.host != nil else {
            throw CommandError.usage("sign takes one http:// or https:// URL")
        }
        guard let expires, let key else { throw CommandError.usage("sign needs --expires DURATION and --key FILE") }
        self.url = url
        lifetimeSeconds = try Parse.duration(expires, option: "--expires")
        keyPath = key
        if let prefix, !prefix.hasPrefix("/") { throw CommandError.usage("--prefix is a path that begins with /") }
    }

    func run() throws {
        let key = AccessControl.key(fileContents: try ServerOptions.readSecret(keyPath, option: "--key"))
        guard key.count >= 16 else {
            throw CommandError("--key \(keyPath) holds under 16 bytes; make one with: openssl rand -hex 32 > \(keyPath)",
                               exitCode: .dataError)
        }
        let path = url.path.isEmpty ? "/" : url.path
        let folder = path.hasSuffix("/") ? path : String(path[...path.lastIndex(of: "/")!])
        let expires = Int(Date().timeIntervalSince1970) + lifetimeSeconds
        let query = AccessControl.signedQuery(prefix: prefix ?? folder, expires: expires, key: key)
        let separator = url.query == nil ? "?" : "&"
        print(url.absoluteString + separator + query)
    }
}
