import Foundation

/// The rules one playlist text must follow on its own, media or multivariant (RFC 8216bis 4), and
/// the authoring-spec warnings that need nothing but the text.
public enum PlaylistRules {
    /// Text-level rules (RFC 8216bis 4.1, 4.4.1.1): UTF-8 without BOM or control characters, the header.
    static func checkText(_ bytes: [UInt8], file: String) -> (text: String?, findings: [Finding]) {
        var findings: [Finding] = []
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            findings.append(Finding(.syntax, file: file, line: 1, message: "the playlist starts with a byte order mark; "
                + "remove it (RFC 8216bis 4.1 forbids one)"))
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            findings.append(Finding(.syntax, file: file, message: "the playlist is not UTF-8 text"))
            return (nil, findings)
        }
        if let index = bytes.firstIndex(where: { ($0 < 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09) || $0 == 0x7F }) {
            let line = bytes[..<index].count { $0 == 0x0A } + 1
            findings.append(Finding(.syntax, file: file, line: line,
                                    message: "the playlist holds control character 0x\(String(bytes[index], radix: 16))"))
        }
        return (text, findings)
    }

    static func checkHeader(_ document: PlaylistDocument, file: String) -> [Finding] {
        document.hasHeader ? [] : [Finding(.header, file: file, line: 1,
                                           message: "the first line is not #EXTM3U, so players refuse the playlist")]
    }

    static func issues(_ issues: [PlaylistDocument.Issue], file: String) -> [Finding] {
        issues.map { Finding(ValidationRule.forSection($0.section), file: file, line: $0.line, message: $0.message) }
    }

    /// EXT-X-DEFINE and variable references (RFC 8216bis 4.3, 4.4.2.3).
    static func variables(_ variables: PlaylistVariables, file: String) -> [Finding] {
        variables.issues.map { issue in
            let rule: ValidationRule = switch issue.problem {
            case .undefinedReference: .variableReference
            case .duplicateName: .defineDuplicate
            case .invalidName: .defineName
            case .syntax: .syntax
            }
            return Finding(rule, file: file, line: issue.line, message: issue.message)
        }
    }

    static func versionTags(_ versions: [MediaPlaylistDocument.Located<Int>], file: String) -> [Finding] {
        versions.dropFirst().map {
            Finding(.version, file: file, line: $0.line, message: "a second EXT-X-VERSION; a playlist has at most one")
        }
    }

    // MARK: - Media playlists

    public static func check(media playlist: MediaPlaylistDocument, file: String) -> [Finding] {
        var findings = issues(playlist.issues, file: file) + versionTags(playlist.versions, file: file)
        findings += checkVersion(playlist, file: file)
        findings += checkTargetDuration(playlist, file: file)
        findings += checkMaps(playlist, file: file)
        if playlist.endList.count > 1 {
            findings.append(Finding(.endList, file: file, line: playlist.endList[1],
                                    message: "a second EXT-X-ENDLIST; a playlist ends once"))
        }
        if let endLine = playlist.endList.first, let after = playlist.segments.first(where: { $0.line > endLine }) {
            findings.append(Finding(.endList, file: file, line: after.line,
                                    message: "segment \(after.uri) comes after EXT-X-ENDLIST"))
        }
        findings += checkProgramDateTimes(playlist, file: file)
        findings += checkLowLatency(playlist, file: file)
        findings += appleWarnings(playlist, file: file)
        return findings
    }

    /// The lowest version the playlist's tags and attributes need (RFC 8216bis 8).
    static func requiredVersion(_ playlist: MediaPlaylistDocument) -> (version: Int, reason: String, line: Int)? {
        var needs: [(version: Int, reason: String, line: Int)] = []
        if let line = playlist.decimalDurationLines.first { needs.append((3, "a decimal EXTINF duration", line)) }
        if let line = playlist.byteRangeLines.first { needs.append((4, "EXT-X-BYTERANGE", line)) }
        if playlist.iFramesOnly { needs.append((4, "EXT-X-I-FRAMES-ONLY", 1)) }
        if let line = playlist.mapLines.first {
            needs.append(playlist.iFramesOnly ? (5, "EXT-X-MAP in an I-frame playlist", line)
                                              : (6, "EXT-X-MAP outside an I-frame playlist", line))
        }
        if let line = playlist.defineLines.first { needs.append((8, "EXT-X-DEFINE", line)) }
        if let skip = playlist.skip { needs.append((9, "EXT-X-SKIP", skip.line)) }
        return needs.max { $0.version < $1.version }
    }

    private static func checkVersion(_ playlist: MediaPlaylistDocument, file: String) -> [Finding] {
        guard let need = requiredVersion(playlist), playlist.version < need.version else { return [] }
        let stated = playlist.versions.first.map { "EXT-X-VERSION:\($0.value)" } ?? "no EXT-X-VERSION (version 1)"
        return [Finding(.version, file: file, line: playlist.versions.first?.line ?? need.line,
                        message: "\(stated), but \(need.reason) (line \(need.line)) needs version \(need.version); "
                            + "write EXT-X-VERSION:\(need.version)")]
    }

    private static func checkTargetDuration(_ playlist: MediaPlaylistDocument, file: String) -> [Finding] {
        guard let target = playlist.targetDuration else {
            return [Finding(.targetDuration, file: file, line: playlist.lineCount,
                            message: "the media playlist has no EXT-X-TARGETDURATION")]
        }
        return playlist.segments.compactMap { segment in
            let rounded = PlaylistNumber.roundedToNearestSecond(PlaylistNumber.milliseconds(segment.durationSeconds))
            guard rounded > target.value else { return nil }
            return Finding(.targetDuration, file: file, line: segment.durationLine,
                           message: "EXTINF \(segment.durationSeconds) rounds to \(rounded) s, over "
                               + "EXT-X-TARGETDURATION:\(target.value) (line \(target.line))")
        }
    }

    /// fMP4 segments need a map; judged by name here, by content when the segment is read.
    static func looksLikeFragmentedMP4(_ uri: String) -> Bool {
        let path = uri.split(separator: "?").first.map(String.init) ?? uri
        return [".m4s", ".mp4", ".m4v", ".m4a", ".cmfv", ".cmfa", ".cmft", ".cmfm"].contains { path.lowercased().hasSuffix($0) }
    }

    private static func checkMaps(_ playlist: MediaPlaylistDocument, file: String) -> [Finding] {
        guard let first = playlist.segments.first(where: { $0.map == nil && looksLikeFragmentedMP4($0.uri) }) else {
            return []
        }
        return [Finding(.map, file: file, line: first.line,
                        message: "fMP4 segment \(first.uri) has no EXT-X-MAP before it; add the initialization section")]
    }

    private static func checkProgramDateTimes(_ playlist: MediaPlaylistDocument, file: String) -> [Finding] {
        var findings: [Finding] = []
        var previous: (date: Date, durationSeconds: Double, discontinuitySequence: Int)?
        for segment in playlist.segments {
            guard let date = segment.programDateTime else { continue }
            // A millisecond of slack: dates and durations are both written to milliseconds.
            if let previous, previous.discontinuitySequence == segment.discontinuitySequence,
               date.timeIntervalSince(previous.date) < -0.001 {
                findings.append(Finding(.programDateTime, file: file, line: segment.programDateTimeLine,
                                        message: "EXT-X-PROGRAM-DATE-TIME goes back \(String(format: "%.3f", previous.date.timeIntervalSince(date))) s "
                                            + "from the previous segment without an EXT-X-DISCONTINUITY"))
            }
            previous = (date, segment.durationSeconds, segment.discontinuitySequence)
        }
        return findings
    }

    private static func checkLowLatency(_ playlist: MediaPlaylistDocument, file: String) -> [Finding] {
        var findings: [Finding] = []
        let parts = playlist.segments.flatMap(\.parts) + playlist.trailingParts
        if let first = parts.first, playlist.partInformation == nil {
            findings.append(Finding(.partInformation, file: file, line: first.line,
                                    message: "the playlist has EXT-X-PART but no EXT-X-PART-INF"))
        }
        if let info = playlist.partInformation {
            let target = info.partTargetSeconds
            for part in parts where part.durationSeconds > target + 0.0005 {
                findings.append(Finding(.partDuration, file: file, line: part.line,
                                        message: "EXT-X-PART DURATION=\(part.durationSeconds) is over PART-TARGET=\(target)"))
            }
            // Every part but the last of its segment is at least 85 % of the part target (4.4.4.9).
            for segment in playlist.segments where segment.parts.count > 1 {
                for part in segment.parts.dropLast() where !part.gap && part.durationSeconds < 0.85 * target - 0.0005 {
                    findings.append(Finding(.partDuration, file: file, line: part.line,
                                            message: "EXT-X-PART DURATION=\(part.durationSeconds) is under 85 % of "
                                                + "PART-TARGET=\(target) and is not the last part of its segment"))
                }
            }
        }
        if let control = playlist.serverControl {
            if let holdBack = control.holdBackSeconds, let target = playlist.targetDuration,
               holdBack < 3 * Double(target.value) {
                findings.append(Finding(.serverControl, file: file, line: control.line,
                                        message: "HOLD-BACK=\(holdBack) is under three target durations (\(3 * target.value) s)"))
            }
            if let info = playlist.partInformation {
                if let partHoldBack = control.partHoldBackSeconds {
                    if partHoldBack < 2 * info.partTargetSeconds {
                        findings.append(Finding(.serverControl, file: file, line: control.line,
                                                message: "PART-HOLD-BACK=\(partHoldBack) is under twice PART-TARGET=\(info.partTargetSeconds)"))
                    } else if partHoldBack < 3 * info.partTargetSeconds - 0.0005 {
                        findings.append(Finding(.partHoldBack, file: file, line: control.line,
                                                message: "PART-HOLD-BACK=\(partHoldBack) is under three times PART-TARGET=\(info.partTargetSeconds)"))
                    }
                } else {
                    findings.append(Finding(.serverControl, file: file, line: control.line,
                                            message: "EXT-X-SERVER-CONTROL has no PART-HOLD-BACK, which a playlist with "
                                                + "EXT-X-PART-INF requires"))
                }
            }
        } else if let info = playlist.partInformation {
            findings.append(Finding(.serverControl, file: file, line: info.line,
                                    message: "the playlist has EXT-X-PART-INF but no EXT-X-SERVER-CONTROL with PART-HOLD-BACK"))
        }
        if let skip = playlist.skip, playlist.serverControl?.canSkipUntilSeconds == nil {
            findings.append(Finding(.skip, file: file, line: skip.line,
                                    message: "EXT-X-SKIP in a playlist whose EXT-X-SERVER-CONTROL has no CAN-SKIP-UNTIL"))
        }
        if !playlist.preloadHints.isEmpty, playlist.partInformation == nil,
           let hint = playlist.preloadHints.first(where: { $0.type == "PART" }) {
            findings.append(Finding(.preloadHint, file: file, line: hint.line,
                                    message: "EXT-X-PRELOAD-HINT TYPE=PART in a playlist without EXT-X-PART-INF"))
        }
        return findings + appleLowLatency(playlist, file: file)
    }

    /// Whether the playlist is a live one with parts: Low-Latency HLS, to which Apple's LL rules apply.
    static func isLiveLowLatency(_ playlist: MediaPlaylistDocument) -> Bool {
        let live = playlist.endList.isEmpty && playlist.playlistType?.value != "VOD"
        return live && !(playlist.segments.allSatisfy(\.parts.isEmpty) && playlist.trailingParts.isEmpty)
    }

    /// Apple's Low-Latency HLS rules a live playlist with parts shows by itself: players block on
    /// reloads and request the hinted part before it exists.
    private static func appleLowLatency(_ playlist: MediaPlaylistDocument, file: String) -> [Finding] {
        guard isLiveLowLatency(playlist) else { return [] }
        var findings: [Finding] = []
        if playlist.serverControl?.canBlockReload != true {
            findings.append(Finding(.lowLatencyBlockingReload, file: file,
                                    line: playlist.serverControl?.line ?? playlist.partInformation?.line,
                                    message: "this live playlist has EXT-X-PART but EXT-X-SERVER-CONTROL has no "
                                        + "CAN-BLOCK-RELOAD=YES"))
        }
        if !playlist.preloadHints.contains(where: { $0.type == "PART" && !$0.uri.isEmpty }) {
            findings.append(Finding(.lowLatencyPreloadHint, file: file,
                                    message: "this live playlist has EXT-X-PART but no EXT-X-PRELOAD-HINT:TYPE=PART "
                                        + "with the URI of the next part"))
        }
        return findings
    }

    /// Apple's rendition reports: a live LL media playlist reports every other media playlist of the
    /// multivariant playlist (`others`, resolved URLs), each with LAST-MSN and LAST-PART.
    static func checkRenditionReports(_ playlist: MediaPlaylistDocument, at url: URL, others: [URL],
                                      name: (URL) -> String, file: String) -> [Finding] {
        guard isLiveLowLatency(playlist) else { return [] }
        var findings: [Finding] = []
        var reported: Set<URL> = []
        for report in playlist.renditionReports {
            if let reportURL = URL(string: report.uri, relativeTo: url)?.absoluteURL { reported.insert(reportURL.standardized) }
            let missing = [report.lastMediaSequence == nil ? "LAST-MSN" : nil, report.lastPart == nil ? "LAST-PART" : nil]
                .compactMap { $0 }
            if !missing.isEmpty {
                findings.append(Finding(.lowLatencyRenditionReports, file: file, line: report.line,
                                        message: "EXT-X-RENDITION-REPORT for \(report.uri) has no "
                                            + missing.joined(separator: " and ")))
            }
        }
        for other in others where !reported.contains(other.standardized) {
            findings.append(Finding(.lowLatencyRenditionReports, file: file,
                                    message: "no EXT-X-RENDITION-REPORT for \(name(other)), another rendition of the "
                                        + "multivariant playlist"))
        }
        return findings
    }

    /// Apple authoring warnings that the playlist text alone shows.
    private static func appleWarnings(_ playlist: MediaPlaylistDocument, file: String) -> [Finding] {
        var findings: [Finding] = []
        let live = playlist.endList.isEmpty && playlist.playlistType?.value != "VOD"
        if live, !playlist.iFramesOnly, !playlist.segments.isEmpty,
           !playlist.segments.contains(where: { $0.programDateTime != nil }) {
            findings.append(Finding(.liveProgramDateTime, file: file,
                                    message: "this live playlist has no EXT-X-PROGRAM-DATE-TIME"))
        }
        if live, !playlist.iFramesOnly, playlist.playlistType == nil, playlist.segments.count < 6 {
            findings.append(Finding(.liveWindow, file: file,
                                    message: "this live playlist lists \(playlist.segments.count) segments, fewer than 6"))
        }
        if let first = playlist.segments.first(where: \.discontinuity), playlist.discontinuitySequence == nil {
            findings.append(Finding(.discontinuitySequencePresent, file: file, line: first.line,
                                    message: "the playlist has EXT-X-DISCONTINUITY but no EXT-X-DISCONTINUITY-SEQUENCE"))
        }
        return findings
    }

    // MARK: - Multivariant playlists

    static func check(master playlist: MasterPlaylistDocument, file: String) -> [Finding] {
        var findings = versionTags(playlist.versions, file: file)
        for issue in playlist.issues {
            let missingBandwidth = issue.message.contains("no BANDWIDTH attribute")
            findings.append(Finding(missingBandwidth ? .bandwidth : ValidationRule.forSection(issue.section),
                                    file: file, line: issue.line, message: issue.message))
        }
        if let mixed = playlist.mediaTagLines.first {
            findings.append(Finding(.playlistKind, file: file, line: mixed.line,
                                    message: "\(mixed.name) is a media playlist tag in a multivariant playlist"))
        }
        let groups = Set(playlist.renditions.map { "\($0.type)/\($0.groupID)" })
        for variant in playlist.variants + playlist.iFrameVariants {
            for (type, group) in [("AUDIO", variant.audioGroup), ("VIDEO", variant.videoGroup),
                                  ("SUBTITLES", variant.subtitlesGroup), ("CLOSED-CAPTIONS", variant.closedCaptionsGroup)] {
                if let group, !groups.contains("\(type)/\(group)") {
                    findings.append(Finding(.renditionGroups, file: file, line: variant.line,
                                            message: "\(type)=\"\(group)\" names a group no EXT-X-MEDIA of TYPE=\(type) has"))
                }
            }
            if let codecs = variant.codecs, codecs.contains(where: \.isEmpty) {
                findings.append(Finding(.variantAttributes, file: file, line: variant.line,
                                        message: "CODECS has an empty entry; write a comma-separated list of formats"))
            }
        }
        findings += appleWarnings(playlist, file: file)
        return findings
    }

    static func isVideo(_ variant: MasterPlaylistDocument.Variant) -> Bool {
        if let codecs = variant.codecs {
            return codecs.contains { ["avc1", "avc3", "hvc1", "hev1", "dvh1", "dvhe", "av01", "vp09"].contains(String($0.prefix(4)).lowercased()) }
        }
        return variant.resolution != nil
    }

    private static func appleWarnings(_ playlist: MasterPlaylistDocument, file: String) -> [Finding] {
        var findings: [Finding] = []
        if playlist.iFrameVariants.isEmpty, playlist.variants.contains(where: isVideo) {
            findings.append(Finding(.iFramePlaylists, file: file,
                                    message: "no EXT-X-I-FRAME-STREAM-INF: players cannot show pictures while seeking"))
        }
        for variant in playlist.variants {
            if variant.averageBandwidthBitsPerSecond == nil {
                findings.append(Finding(.averageBandwidth, file: file, line: variant.line,
                                        message: "variant \(variant.uri) has no AVERAGE-BANDWIDTH"))
            }
            if isVideo(variant), variant.framesPerSecond == nil {
                findings.append(Finding(.frameRate, file: file, line: variant.line,
                                        message: "video variant \(variant.uri) has no FRAME-RATE"))
            }
        }
        return findings
    }
}
