import Foundation

/// What one recording file holds, read from its own boxes: its codecs and, per fragment, where it is
/// (byte offset and size of `moof`+`mdat`), when it was captured on the wall clock (the `prft` box the
/// recorder writes before each `moof`) and how long it lasts. A file cut short by a crash reads up to
/// its last whole fragment; nothing else is needed to find any moment of it.
///
///     ftyp  moov  [prft moof mdat]…  [mfra]
public struct RecordingFileSummary: Sendable, Equatable {
    public struct Fragment: Sendable, Equatable {
        public var offset: Int
        public var byteCount: Int
        /// Wall-clock time of its first frame; nil without a `prft`.
        public var start: Date?
        public var durationSeconds: Double

        public init(offset: Int, byteCount: Int, start: Date?, durationSeconds: Double) {
            self.offset = offset
            self.byteCount = byteCount
            self.start = start
            self.durationSeconds = durationSeconds
        }
    }

    public var codecs: [String] = []
    public var fragments: [Fragment] = []
    /// Bytes of whole boxes: what a reader can use.
    public var byteCount = 0
    /// Bytes of the init section at the start (`ftyp` and `moov`); 0 without a `moov`.
    public var initByteCount = 0

    public init() {}

    public var start: Date? { fragments.first?.start }
    public var end: Date? {
        guard let last = fragments.last, let start = last.start else { return nil }
        return start.addingTimeInterval(last.durationSeconds)
    }
    public var durationSeconds: Double { fragments.reduce(0) { $0 + $1.durationSeconds } }

    /// Seconds from 1900 (NTP) to 1970.
    static let ntpToUnixSeconds: UInt64 = 2_208_988_800

    /// An NTP timestamp (32.32 fixed point) as a date.
    public static func date(ntp: UInt64) -> Date {
        Date(timeIntervalSince1970: Double(ntp >> 32) - Double(ntpToUnixSeconds) + Double(ntp & 0xFFFF_FFFF) / 4_294_967_296)
    }

    /// A date as an NTP timestamp.
    public static func ntp(_ date: Date) -> UInt64 {
        let seconds = date.timeIntervalSince1970 + Double(ntpToUnixSeconds)
        let whole = seconds.rounded(.down)
        return UInt64(whole) << 32 | UInt64(((seconds - whole) * 4_294_967_296).rounded(.down))
    }

    /// Builds a summary from the top-level boxes as a reader meets them; only `moov`, `prft` and `moof`
    /// need their bytes.
    public struct Builder {
        private var summary = RecordingFileSummary()
        private var timescales: [UInt32: UInt32] = [:]
        private var defaultDurations: [UInt32: UInt32] = [:]
        private var referenceTrack: UInt32?
        private var pendingReference: (ntp: UInt64, mediaTime: UInt64, trackID: UInt32)?
        private var openFragment: Fragment?

        public init() {}

        /// A box of `type` at `offset`, `size` bytes long; `bytes` is the whole box for moov, prft and moof.
        public mutating func take(type: String, offset: Int, size: Int, bytes: [UInt8]?) throws {
            switch type {
            case "moov":
                guard let bytes, let moov = try MP4Box.parse(bytes).first else { return }
                summary.initByteCount = offset + size
                let info = InitSectionInfo(bytes)
                summary.codecs = info.tracks.compactMap(\.codec)
                for trak in moov.all("trak") {
                    let trackID = try trak.first("tkhd").map { try $0.trackHeader().trackID } ?? 0
                    timescales[trackID] = try trak.first("mdia/mdhd")?.mediaTimescale() ?? 0
                    if referenceTrack == nil, try trak.first("mdia/hdlr")?.handlerType() == "vide" { referenceTrack = trackID }
                }
                for trex in moov.all("mvex/trex") {
                    let extends = try trex.trackExtends()
                    defaultDurations[extends.trackID] = extends.defaultSampleDuration
                }
                if referenceTrack == nil { referenceTrack = timescales.keys.min() }
            case "prft":
                guard let bytes, let prft = try MP4Box.parse(bytes).first else { return }
                var reader = MP4Reader(prft.payload, box: "prft")
                let version = try reader.uint8()
                try reader.skip(3)
                let trackID = try reader.uint32()
                let ntp = try reader.uint64()
                let mediaTime = version == 1 ? try reader.uint64() : UInt64(try reader.uint32())
                pendingReference = (ntp, mediaTime, trackID)
            case "moof":
                guard let bytes, let moof = try MP4Box.parse(bytes).first, let track = referenceTrack,
                      let timescale = timescales[track], timescale > 0 else { return }
                var duration: UInt64 = 0
                var decodeTime: UInt64?
                for traf in moof.all("traf") {
                    let header = try traf.first("tfhd").map { try $0.trackFragmentHeader() }
                    guard header?.trackID == track else { continue }
                    decodeTime = try traf.first("tfdt")?.baseDecodeTime()
                    let fallback = header?.defaultSampleDuration ?? defaultDurations[track] ?? 0
                    for run in traf.all("trun") {
                        for entry in try run.trackRun().entries { duration += UInt64(entry.duration ?? fallback) }
                    }
                }
                var start: Date?
                if let reference = pendingReference, let decodeTime {
                    let offsetSeconds = (Double(decodeTime) - Double(reference.mediaTime)) / Double(timescale)
                    start = RecordingFileSummary.date(ntp: reference.ntp).addingTimeInterval(offsetSeconds)
                }
                pendingReference = nil
                openFragment = Fragment(offset: offset, byteCount: size, start: start,
                                        durationSeconds: Double(duration) / Double(timescale))
            case "mdat":
                if var fragment = openFragment {
                    fragment.byteCount += size
                    summary.fragments.append(fragment)
                    openFragment = nil
                }
            default:
                break
            }
            summary.byteCount = offset + size
        }

        public var result: RecordingFileSummary { summary }
    }
}

extension RecordingFileSummary {
    /// Boxes read whole; anything larger than this of those kinds is damage.
    public static let largestReadBox = 64 << 20

    /// A recording file's summary, up to where it can be read, and why it stops there (a crash cut it
    /// short, or it is not a recording): its top-level boxes one header at a time, `moov`, `prft` and
    /// `moof` whole, the media data skipped, so an hour-long file costs a few hundred small reads.
    /// `read(offset, count)` gives up to `count` bytes of the file from `offset`.
    public static func read(byteCount fileSize: Int,
                            _ read: (_ offset: Int, _ count: Int) throws -> [UInt8]) -> (RecordingFileSummary, String?) {
        var builder = Builder()
        var offset = 0
        while offset + 8 <= fileSize {
            do {
                let header = try read(offset, 16)
                guard header.count >= 8 else { break }
                var size = Int(header[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
                let type = String(decoding: header[4..<8], as: UTF8.self)
                if size == 1, header.count == 16 {
                    // A 64-bit size past Int.max is past any file's end too.
                    size = Int(exactly: header[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }) ?? Int.max
                }
                guard size >= 8, size <= fileSize - offset else {
                    return (builder.result, "its box at byte \(offset) runs past the end (a write cut short)")
                }
                var bytes: [UInt8]?
                if ["moov", "prft", "moof"].contains(type) {
                    guard size <= largestReadBox else { return (builder.result, "its \(type) box is \(size) bytes") }
                    bytes = try read(offset, size)
                }
                try builder.take(type: type, offset: offset, size: size, bytes: bytes)
                offset += size
            } catch {
                return (builder.result, "its box at byte \(offset) cannot be read: \(error)")
            }
        }
        return (builder.result, nil)
    }
}
