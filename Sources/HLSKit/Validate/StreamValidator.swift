import Foundation

/// Validates an HLS stream: the playlist at a URL and everything it leads to (variants, renditions,
/// I-frame playlists, init sections and segments), with the rules of RFC 8216bis, ISO BMFF and
/// Apple's authoring specification.
public struct StreamValidator: Sendable {
    public struct Options: Sendable {
        /// Read only this many segments of each playlist (its first ones); nil reads all.
        public var sampleSegments: Int?
        /// AES-128-CBC decryption (ciphertext, key, IV → clear bytes, nil when the padding is wrong):
        /// with it, encrypted segments are decrypted with their keys and checked like clear ones.
        public var decrypt: (@Sendable (_ bytes: [UInt8], _ key: [UInt8], _ iv: [UInt8]) -> [UInt8]?)?

        public init(sampleSegments: Int? = nil,
                    decrypt: (@Sendable (_ bytes: [UInt8], _ key: [UInt8], _ iv: [UInt8]) -> [UInt8]?)? = nil) {
            self.sampleSegments = sampleSegments
            self.decrypt = decrypt
        }
    }

    public let loader: any ResourceLoader
    public let options: Options

    public init(loader: any ResourceLoader, options: Options = Options()) {
        self.loader = loader
        self.options = options
    }

    /// Reads and checks everything reachable from `url`. Throws only when the playlist at `url`
    /// itself cannot be read; everything else is a finding.
    public func validate(_ url: URL) throws(LoadError) -> ValidationReport {
        let bytes = try loader.load(url)
        var run = Run(root: url.deletingLastPathComponent(), loader: loader, options: options)
        run.validate(playlistBytes: bytes, at: url)
        return ValidationReport(target: url.isFileURL ? url.path : url.absoluteString,
                                findings: run.findings, playlistCount: run.playlistCount,
                                segmentCount: run.segmentCount, variants: run.variantSummaries)
    }
}

/// One validation's state: what was read and found so far.
private struct Run {
    let root: URL
    let loader: any ResourceLoader
    let options: StreamValidator.Options
    var findings: [Finding] = []
    var playlistCount = 0
    var segmentCount = 0
    var variantSummaries: [ValidationReport.Variant] = []
    var initSections: [URL: InitSectionInfo?] = [:]
    /// AES-128 keys read so far; nil for one that could not be used.
    var keys: [URL: [UInt8]?] = [:]
    var audioChannelCounts: [(codec: String, channels: Int)] = []
    /// The multivariant playlist's variables, for a media playlist's EXT-X-DEFINE:IMPORT; nil
    /// while no multivariant playlist has been read.
    var multivariantVariables: [String: String]?
    /// Playlists already checked, with what was measured.
    var measured: [URL: Measurement] = [:]
    /// Media playlists read, for the rules that look across the multivariant playlist's renditions.
    var mediaPlaylists: [URL: MediaPlaylistDocument] = [:]

    struct Measurement {
        var peakBitsPerSecond: Double
        var averageBitsPerSecond: Double
        var codecs: Set<String>
    }

    init(root: URL, loader: any ResourceLoader, options: StreamValidator.Options) {
        self.root = root
        self.loader = loader
        self.options = options
    }

    /// A path relative to the target's directory when on the same server or disk, else the URL.
    func name(_ url: URL) -> String {
        guard url.scheme == root.scheme, url.host == root.host, url.port == root.port else { return url.absoluteString }
        let base = root.standardized.path.split(separator: "/")
        let path = url.standardized.path.split(separator: "/")
        let common = zip(base, path).prefix { $0 == $1 }.count
        let relative = Array(repeating: "..", count: base.count - common) + path.dropFirst(common).map(String.init)
        let query = url.query.map { "?" + $0 } ?? ""
        return relative.joined(separator: "/") + query
    }

    func resolve(_ uri: String, against playlist: URL) -> URL? {
        URL(string: uri, relativeTo: playlist)?.absoluteURL
            ?? uri.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed).flatMap { URL(string: $0, relativeTo: playlist)?.absoluteURL }
    }

    mutating func validate(playlistBytes bytes: [UInt8], at url: URL) {
        let file = name(url)
        guard let document = read(playlistBytes: bytes, at: url) else { return }
        if document.isMultivariant {
            validateMaster(MasterPlaylistDocument(document), at: url)
        } else {
            _ = validateMedia(MediaPlaylistDocument(document), at: url, independentFromMaster: false)
        }
        appleAudioWarning(file: file)
    }

    /// The playlist's lines, after the text-level rules; nil when it is not text.
    private mutating func read(playlistBytes bytes: [UInt8], at url: URL) -> PlaylistDocument? {
        playlistCount += 1
        let (text, textFindings) = PlaylistRules.checkText(bytes, file: name(url))
        findings += textFindings
        guard let text else { return nil }
        let written = PlaylistDocument(text: text)
        findings += PlaylistRules.checkHeader(written, file: name(url))
        let (document, variables) = written.substitutingVariables(
            imports: written.isMultivariant ? nil : multivariantVariables, query: url.query)
        findings += PlaylistRules.variables(variables, file: name(url))
        if written.isMultivariant { multivariantVariables = variables.values }
        return document
    }

    private mutating func appleAudioWarning(file: String) {
        guard !audioChannelCounts.isEmpty,
              !audioChannelCounts.contains(where: { $0.codec.lowercased().hasPrefix("mp4a.40.") && $0.channels == 2 }) else { return }
        let found = audioChannelCounts.map { "\($0.codec) with \($0.channels) channel(s)" }
        findings.append(Finding(.stereoAudio, file: file,
                                message: "no stereo AAC audio; the audio is \(Set(found).sorted().joined(separator: ", "))"))
    }

    // MARK: Multivariant

    private mutating func validateMaster(_ master: MasterPlaylistDocument, at url: URL) {
        let file = name(url)
        findings += PlaylistRules.check(master: master, file: file)
        var playlistsOfGroup: [String: [URL]] = [:]
        for rendition in master.renditions {
            guard let uri = rendition.uri else { continue }
            guard let playlistURL = resolve(uri, against: url) else {
                findings.append(Finding(.uri, file: file, line: rendition.line, message: "URI \"\(uri)\" is not a valid URI"))
                continue
            }
            playlistsOfGroup["\(rendition.type)/\(rendition.groupID)", default: []].append(playlistURL)
            followPlaylist(playlistURL, from: file, line: rendition.line, independent: master.independentSegments)
        }
        for variant in master.variants + master.iFrameVariants {
            guard let playlistURL = resolve(variant.uri, against: url) else {
                findings.append(Finding(.uri, file: file, line: variant.line,
                                        message: "URI \"\(variant.uri)\" is not a valid URI"))
                continue
            }
            followPlaylist(playlistURL, from: file, line: variant.line, independent: master.independentSegments)
        }
        for variant in master.variants {
            guard let playlistURL = resolve(variant.uri, against: url) else { continue }
            let audio = variant.audioGroup.map { playlistsOfGroup["AUDIO/\($0)"] ?? [] } ?? []
            checkVariant(variant, playlist: playlistURL, audio: audio, file: file)
        }
        var renditionURLs: [URL] = []
        for playlistURL in playlistsOfGroup.values.flatMap({ $0 }) + master.variants.compactMap({ resolve($0.uri, against: url) })
        where !renditionURLs.contains(playlistURL) {
            renditionURLs.append(playlistURL)
        }
        for playlistURL in renditionURLs {
            guard let media = mediaPlaylists[playlistURL] else { continue }
            let reports = PlaylistRules.checkRenditionReports(
                media, at: playlistURL, others: renditionURLs.filter { $0 != playlistURL }, name: { name($0) },
                file: name(playlistURL))
            findings += reports
        }
        let iFrameURIs = Set(master.iFrameVariants.map(\.uri))
        variantSummaries = master.variants.map {
            ValidationReport.Variant(uri: $0.uri, bandwidthBitsPerSecond: $0.bandwidthBitsPerSecond,
                                     averageBandwidthBitsPerSecond: $0.averageBandwidthBitsPerSecond,
                                     codecs: $0.codecs, resolution: $0.resolution.map { "\($0.width)x\($0.height)" },
                                     framesPerSecond: $0.framesPerSecond, iFrame: false)
        } + master.iFrameVariants.filter { iFrameURIs.contains($0.uri) }.map {
            ValidationReport.Variant(uri: $0.uri, bandwidthBitsPerSecond: $0.bandwidthBitsPerSecond,
                                     averageBandwidthBitsPerSecond: $0.averageBandwidthBitsPerSecond,
                                     codecs: $0.codecs, resolution: $0.resolution.map { "\($0.width)x\($0.height)" },
                                     framesPerSecond: nil, iFrame: true)
        }
    }

    private mutating func followPlaylist(_ playlistURL: URL, from file: String, line: Int, independent: Bool) {
        guard measured[playlistURL] == nil else { return }
        let bytes: [UInt8]
        do {
            bytes = try loader.load(playlistURL)
        } catch {
            findings.append(Finding(.uri, file: file, line: line,
                                    message: "\(name(playlistURL)) cannot be read: \(error)"))
            measured[playlistURL] = Measurement(peakBitsPerSecond: 0, averageBitsPerSecond: 0, codecs: [])
            return
        }
        guard let document = read(playlistBytes: bytes, at: playlistURL) else { return }
        if document.isMultivariant {
            findings.append(Finding(.playlistKind, file: file, line: line,
                                    message: "\(name(playlistURL)) is a multivariant playlist, where a media playlist belongs"))
            return
        }
        measured[playlistURL] = validateMedia(MediaPlaylistDocument(document), at: playlistURL,
                                              independentFromMaster: independent)
    }

    /// CODECS against the sample entries, measured bit rates against BANDWIDTH and AVERAGE-BANDWIDTH.
    private mutating func checkVariant(_ variant: MasterPlaylistDocument.Variant, playlist: URL, audio: [URL],
                                       file: String) {
        guard let own = measured[playlist] else { return }
        let audioMeasures = audio.compactMap { measured[$0] }
        if let codecs = variant.codecs {
            let listed = Set(codecs.map(CodecMatch.normalized))
            let found = own.codecs.union(audioMeasures.flatMap(\.codecs))
            for codec in found.sorted() where !listed.contains(CodecMatch.normalized(codec)) {
                findings.append(Finding(.codecs, file: file, line: variant.line,
                                        message: "CODECS=\"\(codecs.joined(separator: ","))\" does not list \(codec), "
                                            + "which \(variant.uri) or its renditions carry; write CODECS=\"\(found.sorted().joined(separator: ","))\""))
            }
            if !found.isEmpty {
                let foundNormalized = Set(found.map(CodecMatch.normalized))
                for codec in codecs where !foundNormalized.contains(CodecMatch.normalized(codec)) {
                    findings.append(Finding(.codecs, file: file, line: variant.line,
                                            message: "CODECS lists \(codec), but no sample entry of \(variant.uri) "
                                                + "or its renditions is \(codec)"))
                }
            }
        }
        let peak = own.peakBitsPerSecond + (audioMeasures.map(\.peakBitsPerSecond).max() ?? 0)
        let average = own.averageBitsPerSecond + (audioMeasures.map(\.averageBitsPerSecond).max() ?? 0)
        if let bandwidth = variant.bandwidthBitsPerSecond, peak > 1.25 * Double(bandwidth) {
            findings.append(Finding(.measuredBandwidth, file: file, line: variant.line,
                                    message: "measured peak \(Int(peak)) b/s is over 125 % of BANDWIDTH=\(bandwidth)"))
        }
        if let averageBandwidth = variant.averageBandwidthBitsPerSecond, average > 1.10 * Double(averageBandwidth) {
            findings.append(Finding(.measuredBandwidth, file: file, line: variant.line,
                                    message: "measured average \(Int(average)) b/s is over 110 % of "
                                        + "AVERAGE-BANDWIDTH=\(averageBandwidth)"))
        }
    }

    // MARK: Media

    private mutating func validateMedia(_ playlist: MediaPlaylistDocument, at url: URL,
                                        independentFromMaster: Bool) -> Measurement {
        let file = name(url)
        findings += PlaylistRules.check(media: playlist, file: file)
        mediaPlaylists[url] = playlist
        // Every range of an I-frame playlist starts with a picture that decodes alone.
        var checker = SegmentChecker(independentSegments: playlist.independentSegments || independentFromMaster
                                         || playlist.iFramesOnly,
                                     iFramesOnly: playlist.iFramesOnly)
        var codecs: Set<String> = []
        var peak = 0.0
        var totalBits = 0.0
        var totalSeconds = 0.0
        var cache: (url: URL, bytes: [UInt8])?
        let limit = options.sampleSegments ?? Int.max
        for (index, segment) in playlist.segments.enumerated() {
            guard let segmentURL = resolve(segment.uri, against: url) else {
                findings.append(Finding(.uri, file: file, line: segment.line, message: "URI \"\(segment.uri)\" is not a valid URI"))
                continue
            }
            var initSection: InitSectionInfo?
            if let map = segment.map {
                initSection = loadInitSection(map, playlist: url, file: file)
                for track in initSection?.tracks ?? [] {
                    if let codec = track.codec { codecs.insert(codec) }
                }
            }
            // AES-128 segments are ciphertext: without their key (or a way to decrypt) only their
            // presence can be checked. SAMPLE-AES segments are boxes like clear ones; their key is checked.
            let keyBytes = index < limit ? segment.key.flatMap { key(of: $0, playlist: url, file: file) } : nil
            guard index < limit, !segment.encrypted || (keyBytes != nil && options.decrypt != nil) else {
                if segment.byteRange == nil { checkExists(segmentURL, file: file, line: segment.line) }
                if segment.encrypted { checker.restart() }
                continue
            }
            var bytes: [UInt8]
            if let cached = cache, cached.url == segmentURL {
                bytes = cached.bytes
            } else {
                do {
                    bytes = try loader.load(segmentURL)
                } catch {
                    findings.append(Finding(.uri, file: file, line: segment.line,
                                            message: "segment \(segment.uri) cannot be read: \(error)"))
                    checker.restart()
                    continue
                }
                cache = segment.byteRange == nil ? nil : (segmentURL, bytes)
            }
            if segment.encrypted, let keyBytes, let decrypt = options.decrypt, let key = segment.key {
                let iv = key.iv.flatMap(Self.initializationVector) ?? MediaPlaylist.Key.defaultIV(sequenceNumber: segment.mediaSequence)
                guard let clear = decrypt(bytes, keyBytes, iv) else {
                    findings.append(Finding(.key, file: file, line: segment.line,
                                            message: "segment \(segment.uri) does not decrypt with its key \(key.uri)"))
                    checker.restart()
                    continue
                }
                bytes = clear
                cache = nil
            }
            segmentCount += 1
            var slice = bytes[...]
            if let range = segment.byteRange {
                let start = range.offset ?? 0
                guard start >= 0, range.length >= 0, start <= bytes.count, range.length <= bytes.count - start else {
                    findings.append(Finding(.byteRange, file: file, line: segment.line,
                                            message: "byte range \(range.length)@\(start) of \(segment.uri) goes past "
                                                + "its end (\(bytes.count) bytes)"))
                    checker.restart()
                    continue
                }
                // An I-frame range ends inside its mdat, after the picture: read the boxes to the file's end.
                slice = playlist.iFramesOnly ? bytes[start...] : bytes[start..<(start + range.length)]
            }
            let pictureEnd = playlist.iFramesOnly ? segment.byteRange.map { ($0.offset ?? 0) + $0.length } : nil
            findings += checker.check(slice, segment: segment, initSection: initSection,
                                      file: name(segmentURL), pictureEnd: pictureEnd)
            if segment.durationSeconds > 0, !playlist.iFramesOnly {
                let bits = Double(slice.count) * 8
                peak = max(peak, bits / segment.durationSeconds)
                totalBits += bits
                totalSeconds += segment.durationSeconds
            }
        }
        if let interval = checker.longestSyncIntervalSeconds, interval > 2.0 + 0.0005, !playlist.iFramesOnly {
            findings.append(Finding(.keyframeInterval, file: file,
                                    message: "IDRs are up to \(String(format: "%.3f", interval)) s apart, more than 2 s"))
        }
        return Measurement(peakBitsPerSecond: peak, averageBitsPerSecond: totalSeconds > 0 ? totalBits / totalSeconds : 0,
                           codecs: codecs)
    }

    /// An AES-128 or SAMPLE-AES key: 16 bytes at its URI, with an IV of 32 hex digits when it names one
    /// (in the identity format; a DRM system's keys are not fetched). A key that
    /// cannot be read is an error over HTTP; from a directory it is only not checked, since keys are
    /// kept apart from the stream and served by another path.
    private mutating func key(of key: MediaPlaylistDocument.Key, playlist: URL, file: String) -> [UInt8]? {
        guard key.method == "AES-128" || key.method == "SAMPLE-AES", key.keyFormat == "identity" else { return nil }
        if let iv = key.iv, Self.initializationVector(iv) == nil {
            findings.append(Finding(.key, file: file, line: key.line,
                                    message: "IV \(iv) is not a hexadecimal 128-bit number (0x and 32 digits)"))
        }
        guard let url = resolve(key.uri, against: playlist) else {
            findings.append(Finding(.uri, file: file, line: key.line, message: "URI \"\(key.uri)\" is not a valid URI"))
            return nil
        }
        if let known = keys[url] { return known }
        let bytes: [UInt8]
        do {
            bytes = try loader.load(url)
        } catch {
            if !url.isFileURL {
                findings.append(Finding(.key, file: file, line: key.line, message: "key \(key.uri) cannot be read: \(error)"))
            }
            keys[url] = .some(nil)
            return nil
        }
        guard bytes.count == 16 else {
            findings.append(Finding(.key, file: file, line: key.line,
                                    message: "key \(key.uri) is \(bytes.count) bytes; an AES-128 key is 16"))
            keys[url] = .some(nil)
            return nil
        }
        keys[url] = bytes
        return bytes
    }

    static func initializationVector(_ text: String) -> [UInt8]? {
        guard text.lowercased().hasPrefix("0x") else { return nil }
        let digits = Array(text.dropFirst(2))
        guard digits.count == 32, digits.allSatisfy(\.isHexDigit) else { return nil }
        return stride(from: 0, to: 32, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }


    private mutating func checkExists(_ url: URL, file: String, line: Int) {
        do {
            guard try !loader.exists(url) else { return }
            findings.append(Finding(.uri, file: file, line: line, message: "\(name(url)) does not exist"))
        } catch {
            findings.append(Finding(.uri, file: file, line: line, message: "\(name(url)) cannot be read: \(error)"))
        }
    }

    private mutating func loadInitSection(_ map: MediaPlaylistDocument.Map, playlist: URL,
                                          file: String) -> InitSectionInfo? {
        guard let url = resolve(map.uri, against: playlist) else {
            findings.append(Finding(.uri, file: file, line: map.line, message: "URI \"\(map.uri)\" is not a valid URI"))
            return nil
        }
        if let known = initSections[url] { return known }
        let bytes: [UInt8]
        do {
            bytes = try loader.load(url)
        } catch {
            findings.append(Finding(.uri, file: file, line: map.line, message: "init section \(map.uri) cannot be read: \(error)"))
            initSections[url] = .some(nil)
            return nil
        }
        var slice = bytes[...]
        if let range = map.byteRange {
            let start = range.offset ?? 0
            guard start <= bytes.count, range.length <= bytes.count - start else {
                findings.append(Finding(.byteRange, file: file, line: map.line,
                                        message: "EXT-X-MAP BYTERANGE goes past the end of \(map.uri) (\(bytes.count) bytes)"))
                return nil
            }
            slice = bytes[start..<(start + range.length)]
        }
        let info = InitSectionInfo(Array(slice))
        for problem in info.problems {
            findings.append(Finding(.initSection, file: name(url), byteOffset: problem.offset, message: problem.message))
        }
        for problem in info.parameterSetProblems {
            findings.append(Finding(.parameterSets, file: name(url), byteOffset: problem.offset, message: problem.message))
        }
        for track in info.tracks where track.isAudio {
            audioChannelCounts.append((track.codec ?? track.sampleEntryType ?? "audio", track.channelCount ?? 0))
        }
        // Without tracks the segments cannot be read against it; its own findings say why.
        let usable = info.tracks.isEmpty ? nil : info
        initSections[url] = usable
        return usable
    }
}

/// CODECS entries compared as RFC 6381 says: case-insensitively, and `mp4a.40.02` as `mp4a.40.2`.
enum CodecMatch {
    static func normalized(_ codec: String) -> String {
        let lower = codec.lowercased()
        guard lower.hasPrefix("mp4a.") else { return lower }
        return lower.split(separator: ".").enumerated().map { index, part in
            index == 0 ? String(part) : (Int(part, radix: index == 1 ? 16 : 10).map { String($0) } ?? String(part))
        }.joined(separator: ".")
    }
}
