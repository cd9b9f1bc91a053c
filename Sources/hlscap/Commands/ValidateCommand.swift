import Foundation
import HLSEngine
import HLSKit
import HLSOutput

/// `hlscap validate TARGET`: checks any HLS stream against RFC 8216bis, ISO BMFF and Apple's
/// authoring specification.
struct ValidateCommand: Command {
    static let name = "validate"
    static let summary = "check an HLS stream (directory, playlist or URL) against RFC 8216bis"
    static let help = """
        Usage: hlscap validate TARGET [options]

        Reads the playlist TARGET names (a stream directory, a playlist file or an http(s):// URL,
        multivariant or media), every playlist it leads to (variants, renditions, I-frame playlists),
        every init section and every segment, and reports what breaks RFC 8216bis or ISO BMFF
        (errors) and Apple's HLS authoring specification (warnings): each with the rule, the file
        and line or byte offset, and one sentence. A directory means its master.m3u8, else its
        playlist.m3u8.

        Options:
          --sample N            read only the first N segments of each playlist (the others must exist)
          --live SECONDS        also reload the media playlist for SECONDS as a player does and check
                                each update (sequence numbers, target duration, staleness, retention,
                                blocking reloads)
          --bandwidth RATE      print the variants and the one a player with RATE (1.5M, 800k) starts with
          --ca-file FILE        trust the authorities (or a server's own certificate) in this PEM file
                                for https:// URLs, instead of the system's
          --json                print the report as JSON
          --strict              warnings fail too (exit 65)
          --help                show this help

        Exit status: 0 no errors, 65 errors found (or warnings with --strict), 64 usage,
        66 TARGET or --ca-file missing or unreadable, 69 TARGET's server unreachable or its certificate
        not trusted, 74 reading TARGET failed.
        """

    var target: String
    var sampleSegments: Int?
    var liveSeconds: Double?
    var bandwidth: Int?
    var json: Bool
    var strict: Bool
    var authorityFile: String?

    init(arguments: inout ArgumentList) throws {
        json = arguments.flag("--json")
        strict = arguments.flag("--strict")
        sampleSegments = try arguments.value("--sample").map {
            try Parse.integer($0, option: "--sample", in: 1...1_000_000)
        }
        liveSeconds = try arguments.value("--live").map {
            Double(try Parse.milliseconds($0, option: "--live")) / 1000
        }
        bandwidth = try arguments.value("--bandwidth").map { try Parse.bitrate($0, option: "--bandwidth") }
        authorityFile = try arguments.value("--ca-file")
        target = try arguments.onePositional("validate", what: "a TARGET: a stream directory, playlist or URL")
    }

    func run() throws {
        let loader = try makeLoader()
        let url: URL
        var report: ValidationReport
        do throws(LoadError) {
            url = try StreamValidator.playlistURL(forTarget: target)
            report = try StreamValidator(loader: loader, options: .init(
                sampleSegments: sampleSegments, decrypt: { SegmentEncryption.decrypt($0, key: $1, iv: $2) })).validate(url)
        } catch .untrusted(let reason) where authorityFile != nil {
            throw CommandError("\(reason); no authority in --ca-file \(authorityFile ?? "") signed the server's "
                + "certificate: give the PEM file of the one that did", exitCode: .unavailable)
        } catch {
            throw CommandError(error)
        }
        if let liveSeconds {
            let media = try liveMediaPlaylist(url: url, report: report)
            let name = media.isFileURL ? media.path : media.absoluteString
            let monitor = LiveMonitor(loader: loader, url: media, durationSeconds: liveSeconds, file: name)
            report.add(monitor.run().findings)
        }
        if let bandwidth {
            report.chosenVariant = VariantChoice.choose(bandwidthBitsPerSecond: bandwidth, among: report.variants)
        }
        if json {
            print(report.json, terminator: "")
        } else {
            if let bandwidth {
                print(VariantChoice.table(report.variants, chosen: report.chosenVariant), terminator: "")
                print(report.chosenVariant.map { "a player with \(bandwidth) b/s starts with \($0.uri)" }
                    ?? "no variant: \(target) is not a multivariant playlist with BANDWIDTH")
            }
            print(report.text, terminator: "")
        }
        if !report.errors.isEmpty {
            throw CommandError("\(target) breaks \(report.errors.count) rule(s) of RFC 8216bis or ISO BMFF; "
                + "fix the errors listed above", exitCode: .dataError)
        }
        if strict && !report.warnings.isEmpty {
            throw CommandError("\(target) has \(report.warnings.count) warning(s) and --strict makes them fail; "
                + "fix the warnings listed above", exitCode: .dataError)
        }
    }

    /// URLSession trusts the system's authorities; with `--ca-file`, libcurl trusts those of the file.
    private func makeLoader() throws -> any ResourceLoader {
        guard let authorityFile else { return URLSessionLoader() }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: authorityFile, isDirectory: &isDirectory), !isDirectory.boolValue,
              FileManager.default.isReadableFile(atPath: authorityFile) else {
            throw CommandError(PlanError.authorityFileUnreadable(authorityFile))
        }
        return CurlLoader(authorityFile: authorityFile)
    }

    /// A multivariant target is followed through its first variant.
    private func liveMediaPlaylist(url: URL, report: ValidationReport) throws -> URL {
        guard let first = report.variants.first(where: { !$0.iFrame }) else { return url }
        guard let media = URL(string: first.uri, relativeTo: url)?.absoluteURL else {
            throw CommandError("\(first.uri) in \(target) is not a valid URI; fix the variant's URI line", exitCode: .dataError)
        }
        return media
    }
}
