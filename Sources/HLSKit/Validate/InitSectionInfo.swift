/// What the validator needs from an initialization section: per track, its kind, timescale,
/// fragment defaults and the RFC 6381 codec string its sample entry stands for.
struct InitSectionInfo {
    struct Track {
        var trackID: UInt32
        /// `vide`, `soun`, …
        var handler: String
        var timescale: UInt32
        var defaults: MP4Box.TrackExtends?
        /// Such as `avc1.64001f`, `hvc1.1.6.L93.B0`, `mp4a.40.2`; nil when the entry is unknown.
        var codec: String?
        var sampleEntryType: String?
        var channelCount: Int?
        /// The video sample entry's parameter sets, to judge those the samples carry; nil when unreadable.
        var parameterSets: InBandParameterSets?
        /// Bytes of each NAL unit length in the samples.
        var nalUnitLengthSize = 4

        var isVideo: Bool { handler == "vide" }
        var isAudio: Bool { handler == "soun" }
    }

    var tracks: [Track]
    /// Rule breaks found while reading: (byte offset, sentence).
    var problems: [(offset: Int?, message: String)]
    /// Sample entries whose parameter sets a decoder drops, as the `parameter-sets` rule reports them.
    var parameterSetProblems: [(offset: Int?, message: String)] = []

    init(_ bytes: [UInt8]) {
        tracks = []
        problems = []
        let boxes: [MP4Box]
        do {
            boxes = try MP4Box.parse(bytes)
        } catch {
            problems.append((Self.offset(of: error), "its boxes cannot be read: \(error)"))
            return
        }
        if boxes.first(where: { $0.type == "ftyp" }) == nil {
            problems.append((0, "it has no ftyp box"))
        }
        guard let moov = boxes.first("moov") else {
            problems.append((nil, "it has no moov box"))
            return
        }
        guard let mvex = moov.first("mvex") else {
            problems.append((moov.offset, "moov has no mvex box, so it does not announce fragments"))
            return
        }
        let extends = mvex.all("trex").compactMap { try? $0.trackExtends() }
        for trak in moov.all("trak") {
            do {
                var track = Track(
                    trackID: try trak.first("tkhd").map { try $0.trackHeader().trackID } ?? 0,
                    handler: try trak.first("mdia/hdlr")?.handlerType() ?? "",
                    timescale: try trak.first("mdia/mdhd")?.mediaTimescale() ?? 0)
                track.defaults = extends.first { $0.trackID == track.trackID }
                if track.defaults == nil {
                    problems.append((mvex.offset, "mvex has no trex for track \(track.trackID)"))
                }
                if track.timescale == 0 {
                    problems.append((trak.offset, "track \(track.trackID) has no mdhd timescale"))
                }
                if let entry = trak.first("mdia/minf/stbl/stsd")?.children.first {
                    track.sampleEntryType = entry.type
                    track.codec = try Self.codecString(entry)
                    if track.isAudio { track.channelCount = try entry.audioSampleEntry().channelCount }
                    if let (offset, problem) = Self.readParameterSets(entry, into: &track) {
                        parameterSetProblems.append((offset, "track \(track.trackID): \(problem)"))
                    }
                }
                tracks.append(track)
            } catch {
                problems.append((trak.offset, "track box cannot be read: \(error)"))
            }
        }
        if tracks.isEmpty {
            problems.append((moov.offset, "moov has no track"))
        }
    }

    /// avcC's or hvcC's parameter sets; an unreadable record is the `codecs` rule's to report. Returns
    /// the record's offset and what is wrong with an SPS in it that a decoder drops.
    private static func readParameterSets(_ entry: MP4Box, into track: inout Track) -> (Int, String)? {
        let record: MP4Box
        let sets: InBandParameterSets
        if let avcC = entry.children.first(where: { $0.type == "avcC" }),
           let configuration = try? AVCDecoderConfiguration(parsing: avcC.avcConfigurationBytes()) {
            (record, sets) = (avcC, InBandParameterSets(configuration))
            track.nalUnitLengthSize = configuration.nalUnitLengthSize
        } else if let hvcC = entry.children.first(where: { $0.type == "hvcC" }),
                  let configuration = try? HEVCDecoderConfiguration(parsing: hvcC.hevcConfigurationBytes()) {
            (record, sets) = (hvcC, InBandParameterSets(configuration))
            track.nalUnitLengthSize = configuration.nalUnitLengthSize
        } else {
            return nil
        }
        track.parameterSets = sets
        return sets.sampleEntryProblem.map { (record.offset, $0) }
    }

    /// The format an encrypted sample entry had, from its `frma`; nil for a clear entry.
    static func originalFormat(of entry: MP4Box) throws(MP4ReadError) -> String? {
        guard entry.type == "encv" || entry.type == "enca" else { return nil }
        guard let frma = entry.first("sinf/frma") else {
            throw MP4ReadError.unexpected(box: entry.type, detail: "has no sinf/frma naming its original format")
        }
        var reader = MP4Reader(frma.payload, box: "frma")
        return try reader.fourCC()
    }

    static func offset(of error: MP4ReadError) -> Int? {
        if case .badBoxSize(_, let offset, _) = error { return offset }
        return nil
    }

    /// RFC 6381 codec string of a sample entry (ISO/IEC 14496-15 E.3 for AVC and HEVC).
    static func codecString(_ entry: MP4Box) throws -> String? {
        // An encrypted entry (encv, enca) is its original format, named in sinf/frma (ISO/IEC 23001-7 8).
        let type = try originalFormat(of: entry) ?? entry.type
        switch type {
        case "avc1", "avc3":
            guard let avcC = entry.children.first(where: { $0.type == "avcC" }) else { return nil }
            let bytes = try avcC.avcConfigurationBytes()
            guard bytes.count >= 4 else { throw MP4ReadError.truncated(box: "avcC") }
            return type + "." + bytes[1...3].map(hex).joined()
        case "hvc1", "hev1":
            guard let hvcC = entry.children.first(where: { $0.type == "hvcC" }) else { return nil }
            return try hevcString(type, try hvcC.hevcConfigurationBytes())
        case "mp4a":
            guard let esds = entry.children.first(where: { $0.type == "esds" }) else { return nil }
            let configuration = try esds.decoderConfiguration()
            guard configuration.objectType == 0x40 else {
                return "mp4a." + hex(configuration.objectType)
            }
            guard let first = configuration.specificInfo.first else { return "mp4a.40" }
            var objectType = Int(first >> 3)
            if objectType == 31, configuration.specificInfo.count > 1 {
                objectType = 32 + Int((first & 0x07) << 3 | configuration.specificInfo[1] >> 5)
            }
            return "mp4a.40.\(objectType)"
        case "ac-3", "ec-3", "Opus", "fLaC":
            return ["ac-3": "ac-3", "ec-3": "ec-3", "Opus": "opus", "fLaC": "fLaC"][type]
        default:
            return nil
        }
    }

    /// `hvc1.<space><profile>.<compatibility, bit-reversed hex>.<tier><level>.<constraint bytes>`.
    private static func hevcString(_ prefix: String, _ bytes: [UInt8]) throws -> String {
        guard bytes.count >= 13 else { throw MP4ReadError.truncated(box: "hvcC") }
        let space = ["", "A", "B", "C"][Int(bytes[1] >> 6)]
        let tier = bytes[1] & 0x20 != 0 ? "H" : "L"
        let profile = bytes[1] & 0x1F
        let compatibility = bytes[2...5].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        var reversed: UInt32 = 0
        for bit in 0..<32 where compatibility & (1 << bit) != 0 {
            reversed |= 1 << (31 - bit)
        }
        var constraints = Array(bytes[6...11])
        while constraints.last == 0 { constraints.removeLast() }
        let parts = ["\(prefix)", "\(space)\(profile)", String(reversed, radix: 16, uppercase: true),
                     "\(tier)\(bytes[12])"] + constraints.map { String($0, radix: 16, uppercase: true) }
        return parts.joined(separator: ".")
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16)
        return digits.count == 1 ? "0" + digits : digits
    }
}
