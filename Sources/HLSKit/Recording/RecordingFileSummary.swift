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
