import Foundation
import HLSKit
import HLSTestSupport

/// A stream written with `--ladder`, read back: the master playlist, each rung's media and I-frame
/// playlists, and the audio rendition, checked against each other.
struct LadderStream {
    let directory: URL
    let rungs: [String]
    let audioDirectories: [String]

    init(directory: URL, rungs: [String], audioDirectories: [String] = ["audio"]) {
        self.directory = directory
        self.rungs = rungs
        self.audioDirectories = audioDirectories
    }

    func rendition(_ name: String) -> PackagedStream {
        PackagedStream(directory: directory.appendingPathComponent(name),
                       result: ProcessResult(exitStatus: 0, stdout: "", stderr: "", timedOut: false))
    }

    func master() throws -> String {
        try String(contentsOf: directory.appendingPathComponent("master.m3u8"), encoding: .utf8)
    }

    /// The attributes of the master playlist's EXT-X-STREAM-INF line for `uri`.
    func variantAttributes(_ uri: String) throws -> [String: String] {
        let lines = try master().split(separator: "\n").map(String.init)
        guard let index = lines.firstIndex(of: uri), index > 0, lines[index - 1].hasPrefix("#EXT-X-STREAM-INF:") else {
            return [:]
        }
        return Self.attributes(String(lines[index - 1].dropFirst("#EXT-X-STREAM-INF:".count)))
    }

    /// A quoted-string-aware split of an attribute list.
    static func attributes(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        var name = "", value = "", inName = true, quoted = false
        for character in text + "," {
            if inName {
                if character == "=" { inName = false } else { name.append(character) }
            } else if character == "\"" {
                quoted.toggle()
            } else if character == "," && !quoted {
                result[name] = value
                name = ""
                value = ""
                inName = true
            } else {
                value.append(character)
            }
        }
        return result
    }

    /// Each segment's bits per second, from its file size and EXTINF.
    func segmentRates(_ name: String) throws -> [Double] {
        let stream = rendition(name)
        return try stream.playlist().segments.map { segment in
            Double(try stream.bytes(segment.uri).count * 8) / segment.durationSeconds
        }
    }

    func meanRate(_ name: String) throws -> Double {
        let stream = rendition(name)
        let segments = try stream.playlist().segments
        let bits = try segments.reduce(0) { $0 + (try stream.bytes($1.uri).count) * 8 }
        return Double(bits) / segments.reduce(0) { $0 + $1.durationSeconds }
    }

    /// The first `tfdt` of each segment of a rendition, in seconds.
    func segmentStartSeconds(_ name: String) throws -> [Double] {
        let stream = rendition(name)
        let timescale = try InitSection(stream.bytes("init.mp4")).timescales[1] ?? 90_000
        return try stream.playlist().segments.map { segment in
            let boxes = try MP4Box.parse(stream.bytes(segment.uri))
            let tfdt = try boxes.first("moof")?.first("traf")?.first("tfdt")?.baseDecodeTime() ?? 0
            return Double(tfdt) / Double(timescale)
        }
    }

    /// Everything that is wrong with the ladder as a whole.
    func problems(checkingEveryIFrame: Bool) throws -> [String] {
        var problems: [String] = []
        for name in rungs + audioDirectories {
            problems += try rendition(name).segmentProblems().map { "\(name): \($0)" }
        }
        let counts = try rungs.map { try rendition($0).playlist().segments.count }
        if Set(counts).count != 1 { problems.append("rungs hold \(counts) segments") }
        let starts = try rungs.map(segmentStartSeconds)
        for index in 0..<(counts.min() ?? 0) where Set(starts.map { $0[index] }).count != 1 {
            problems.append("segment \(index + 1) starts at \(starts.map { $0[index] }) on the rungs")
        }
        let audioRates = try segmentRates(audioDirectories[0])
        let audioMean = try meanRate(audioDirectories[0])
        for name in rungs {
            let attributes = try variantAttributes(name + "/playlist.m3u8")
            guard let bandwidth = attributes["BANDWIDTH"].flatMap(Double.init),
                  let average = attributes["AVERAGE-BANDWIDTH"].flatMap(Double.init) else {
                problems.append("\(name): no BANDWIDTH and AVERAGE-BANDWIDTH in the master playlist")
                continue
            }
            let rates = try segmentRates(name)
            let peak = zip(rates, audioRates).map { $0 + $1 }.max() ?? 0
            if bandwidth < peak { problems.append("\(name): BANDWIDTH \(Int(bandwidth)) below the peak \(Int(peak))") }
            let mean = try meanRate(name) + audioMean
            if abs(average - mean) > mean / 10 {
                problems.append("\(name): AVERAGE-BANDWIDTH \(Int(average)) is not within 10 % of the mean \(Int(mean))")
            }
            for key in ["CODECS", "RESOLUTION", "FRAME-RATE", "AUDIO"] where attributes[key] == nil {
                problems.append("\(name): no \(key) in the master playlist")
            }
            problems += try iFrameProblems(name, checkingEvery: checkingEveryIFrame).map { "\(name): \($0)" }
        }
        return problems
    }

    /// Each I-frame entry's byte range, after the init section, decodes to exactly one picture, and the
    /// entries start where the segments' IDRs are.
    func iFrameProblems(_ name: String, checkingEvery: Bool) throws -> [String] {
        let stream = rendition(name)
        let playlistText = try String(contentsOf: stream.directory.appendingPathComponent("iframes.m3u8"),
                                      encoding: .utf8)
        let entries = Self.iFrameEntries(playlistText)
        let segments = try stream.playlist().segments
        var problems: [String] = []
        if entries.count != segments.count {
            problems.append("\(entries.count) I-frame entries for \(segments.count) segments, one IDR each")
        }
        var entryStart = 0.0, segmentStart = 0.0
        for (entry, segment) in zip(entries, segments) {
            if entry.uri != segment.uri || abs(entryStart - segmentStart) > 0.001 {
                problems.append("I-frame entry \(entry.uri) at \(entryStart) s, its IDR at \(segmentStart) s")
            }
            entryStart += entry.duration
            segmentStart += segment.durationSeconds
        }
        let checked = checkingEvery ? entries : Array(entries.prefix(3))
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("iframe-\(UUID().uuidString).mp4")
        defer { try? FileManager.default.removeItem(at: scratch) }
        for entry in checked {
            let segment = try stream.bytes(entry.uri)
            guard entry.offset + entry.length <= segment.count else {
                problems.append("I-frame range \(entry.length)@\(entry.offset) outside \(entry.uri)")
                continue
            }
            let bytes = try stream.bytes("init.mp4") + segment[entry.offset..<(entry.offset + entry.length)]
            try Data(bytes).write(to: scratch)
            let pictures = try ExternalTools.ffprobeFrameCount(path: scratch.path)
            if pictures != 1 { problems.append("I-frame range of \(entry.uri) decodes to \(pictures) pictures") }
        }
        return problems
    }

    struct IFrameEntry {
        var uri: String
        var duration: Double
        var length: Int
        var offset: Int
    }

    static func iFrameEntries(_ text: String) -> [IFrameEntry] {
        var entries: [IFrameEntry] = []
        var duration = 0.0, length = 0, offset = 0
        for line in text.split(separator: "\n") {
            if line.hasPrefix("#EXTINF:") {
                duration = Double(line.dropFirst(8).prefix { $0 != "," }) ?? 0
            } else if line.hasPrefix("#EXT-X-BYTERANGE:") {
                let parts = line.dropFirst(17).split(separator: "@")
                length = Int(parts[0]) ?? 0
                offset = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            } else if !line.hasPrefix("#") {
                entries.append(IFrameEntry(uri: String(line), duration: duration, length: length, offset: offset))
            }
        }
        return entries
    }
}
