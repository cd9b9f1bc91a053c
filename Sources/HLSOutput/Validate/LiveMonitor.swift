import Foundation
import HLSKit

/// Follows a live media playlist for a while, reloading it as a client does (RFC 8216bis 6.3.4: a
/// target duration after a change, half of one after no change), and checks each update against
/// the one before: the server's rules of 6.2.1 and 6.2.2, and blocking reloads (6.2.5.2).
///
/// Time is passed in (`now`, `sleep`), so tests run it without waiting.
public struct LiveMonitor: Sendable {
    public let loader: any ResourceLoader
    public let url: URL
    public let durationSeconds: Double
    public let now: @Sendable () -> Double
    public let sleep: @Sendable (Double) -> Void
    /// The file name findings carry.
    public let file: String

    public init(loader: any ResourceLoader, url: URL, durationSeconds: Double, file: String,
                now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
                sleep: @escaping @Sendable (Double) -> Void = { Thread.sleep(forTimeInterval: $0) }) {
        self.loader = loader
        self.url = url
        self.durationSeconds = durationSeconds
        self.file = file
        self.now = now
        self.sleep = sleep
    }

    /// One version of the playlist as this client saw it.
    private struct Version {
        var playlist: MediaPlaylistDocument
        var text: String
        var loadedAt: Double
        var firstSequence: Int { playlist.segments.first?.mediaSequence ?? (playlist.mediaSequence?.value ?? 0) }
        var lastSequence: Int { firstSequence + playlist.segments.count - 1 }
        var uris: [Int: String] {
            Dictionary(playlist.segments.map { ($0.mediaSequence, $0.uri) }, uniquingKeysWith: { first, _ in first })
        }
        var durationSeconds: Double { playlist.segments.reduce(0) { $0 + $1.durationSeconds } }
    }

    /// Reloads until `durationSeconds` have passed or the playlist ends; returns what broke a rule,
    /// and how many versions were seen.
    public func run() -> (findings: [Finding], versions: Int) {
        var findings: [Finding] = []
        let start = now()
        guard var previous = load(&findings) else { return (findings, 0) }
        var versions = 1
        var lastChange = previous.loadedAt
        var removed: [String: Int] = [:]
        var staleReported = false
        var retentionChecks: [RetentionCheck] = []
        var blockingChecked = false
        while now() - start < durationSeconds, previous.playlist.endList.isEmpty {
            let target = Double(previous.playlist.targetDuration?.value ?? 1)
            if !blockingChecked, previous.playlist.serverControl?.canBlockReload == true, !url.isFileURL {
                blockingChecked = true
                checkBlockingReload(after: previous, targetSeconds: target, findings: &findings)
            }
            let changedLast = lastChange == previous.loadedAt
            let wait = (changedLast ? target : target / 2) - (now() - previous.loadedAt)
            if wait > 0 { sleep(min(wait, max(0, durationSeconds - (now() - start)))) }
            if now() - start >= durationSeconds { break }
            guard let current = load(&findings) else { break }
            for check in retentionChecks where check.at <= current.loadedAt {
                findings += checkRetained(check.uri, retention: check.retention, when: "before its retention time ended")
            }
            retentionChecks.removeAll { $0.at <= current.loadedAt }
            if current.text == previous.text {
                // The server owes a new segment within 1.5 target durations; polling at half a
                // target duration may see it up to that much later.
                if current.loadedAt - lastChange > 1.5 * target + target / 2, !staleReported {
                    staleReported = true
                    findings.append(Finding(.liveStale, file: file, message: String(
                        format: "the playlist has not changed for %.1f s, more than 1.5 target durations (%.1f s)",
                        current.loadedAt - lastChange, 1.5 * target)))
                }
                previous.loadedAt = current.loadedAt
                continue
            }
            versions += 1
            staleReported = false
            findings += compare(previous, current, removed: &removed, retentionChecks: &retentionChecks)
            // Each version follows the playlist rules too; warnings about a young window would repeat.
            findings += PlaylistRules.check(media: current.playlist, file: file).filter { $0.severity == .error }
            lastChange = current.loadedAt
            previous = current
        }
        return (Array(Set(findings.map { FindingKey($0) })).map(\.finding).sorted { $0.message < $1.message }, versions)
    }

    /// Findings once each, though every reload may repeat them.
    private struct FindingKey: Hashable {
        let finding: Finding
        init(_ finding: Finding) { self.finding = finding }
        func hash(into hasher: inout Hasher) { hasher.combine(finding.rule); hasher.combine(finding.message) }
        static func == (lhs: FindingKey, rhs: FindingKey) -> Bool {
            lhs.finding.rule == rhs.finding.rule && lhs.finding.message == rhs.finding.message
        }
    }

    private func load(_ findings: inout [Finding], url: URL? = nil) -> Version? {
        let loadedAt = now()
        do {
            let bytes = try loader.load(url ?? self.url)
            let text = String(decoding: bytes, as: UTF8.self)
            // Variables are substituted as on the first read; IMPORTed ones stay as written.
            let (document, _) = PlaylistDocument(text: text).substitutingVariables(imports: nil, query: (url ?? self.url).query)
            return Version(playlist: MediaPlaylistDocument(document), text: text, loadedAt: loadedAt)
        } catch {
            findings.append(Finding(.liveStale, file: file, message: "a reload failed: \(error)"))
            return nil
        }
    }

    private func compare(_ previous: Version, _ current: Version, removed: inout [String: Int],
                         retentionChecks: inout [RetentionCheck]) -> [Finding] {
        var findings: [Finding] = []
        if let before = previous.playlist.targetDuration?.value, let after = current.playlist.targetDuration?.value,
           before != after {
            findings.append(Finding(.liveTargetDuration, file: file, line: current.playlist.targetDuration?.line,
                                    message: "EXT-X-TARGETDURATION changed from \(before) to \(after) between reloads"))
        }
        if current.firstSequence < previous.firstSequence {
            findings.append(Finding(.liveMediaSequence, file: file, line: current.playlist.mediaSequence?.line,
                                    message: "EXT-X-MEDIA-SEQUENCE went back from \(previous.firstSequence) to \(current.firstSequence)"))
        }
        let before = previous.uris
        let after = current.uris
        for (sequence, uri) in after {
            if let earlier = before[sequence], earlier != uri {
                findings.append(Finding(.liveMediaSequence, file: file,
                                        message: "media sequence number \(sequence) was \(earlier) and is now \(uri)"))
            }
            if let left = removed[uri] {
                findings.append(Finding(.liveMediaSequence, file: file,
                                        message: "\(uri) left the playlist (sequence \(left)) and came back"))
            }
        }
        let afterURIs = Set(after.values)
        let gone = before.filter { !afterURIs.contains($0.value) }.sorted { $0.key < $1.key }
        switch previous.playlist.playlistType?.value {
        case "VOD":
            findings.append(Finding(.livePlaylistType, file: file, message: "a VOD playlist changed between reloads"))
        case "EVENT" where !gone.isEmpty:
            findings.append(Finding(.livePlaylistType, file: file,
                                    message: "an EVENT playlist removed \(gone[0].value); it may only append"))
        default:
            break
        }
        let durations = Dictionary(previous.playlist.segments.map { ($0.uri, $0.durationSeconds) },
                                   uniquingKeysWith: { first, _ in first })
        for (sequence, uri) in gone {
            removed[uri] = sequence
            // Retention (6.2.2): the segment's duration plus the playlist's. Checked now, as it leaves,
            // and again near the end of that time (less a target duration for when the removal was seen).
            let retention = (durations[uri] ?? 0) + previous.durationSeconds
            let target = Double(current.playlist.targetDuration?.value ?? 1)
            retentionChecks.append((uri, current.loadedAt + max(0, retention - target), retention))
            findings += checkRetained(uri, retention: retention, when: "as soon as it left the playlist")
        }
        return findings
    }

    /// A removed segment and when to look for it again.
    private typealias RetentionCheck = (uri: String, at: Double, retention: Double)

    private func checkRetained(_ uri: String, retention: Double, when: String) -> [Finding] {
        guard let segmentURL = URL(string: uri, relativeTo: url)?.absoluteURL else { return [] }
        do {
            if try !loader.exists(segmentURL) {
                return [Finding(.liveRetention, file: file, message: "\(uri) was deleted \(when); keep it for "
                            + String(format: "%.1f s after it leaves (its duration plus the playlist's)", retention))]
            }
            return []
        } catch {
            return [Finding(.liveRetention, file: file, message: "\(uri) left the playlist and cannot be read: \(error)")]
        }
    }

    /// Asks for the segment after the last one (`_HLS_msn`), or with parts for the part after the last
    /// one (`_HLS_msn` and `_HLS_part`); the server must hold the request and answer with a playlist
    /// holding it, within a few target durations.
    private func checkBlockingReload(after version: Version, targetSeconds: Double, findings: inout [Finding]) {
        let next = version.lastSequence + 1
        let hasParts = version.playlist.partInformation != nil
        let nextPart = version.playlist.trailingParts.count
        var query = [URLQueryItem(name: "_HLS_msn", value: String(next))]
        if hasParts { query.append(URLQueryItem(name: "_HLS_part", value: String(nextPart))) }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return }
        components.queryItems = (components.queryItems ?? []) + query
        guard let blockingURL = components.url else { return }
        let asked = now()
        guard let answer = load(&findings, url: blockingURL) else { return }
        let waited = now() - asked
        let request = query.map { "\($0.name)=\($0.value ?? "")" }.joined(separator: "&")
        let holds = answer.lastSequence >= next
            || (hasParts && answer.lastSequence == next - 1 && answer.playlist.trailingParts.count > nextPart)
        if !holds {
            let had = hasParts ? " and \(answer.playlist.trailingParts.count) part(s) after it" : ""
            findings.append(Finding(.blockingReload, file: file, message: "a request for \(request) was answered after "
                + String(format: "%.1f s", waited) + " with a playlist ending at \(answer.lastSequence)\(had)"))
        } else if waited > 3 * targetSeconds {
            findings.append(Finding(.blockingReload, file: file, message: "a request for \(request) took "
                + String(format: "%.1f s", waited) + ", more than three target durations"))
        }
    }
}
