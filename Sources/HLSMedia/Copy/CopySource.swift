import Foundation
import HLSKit

/// Why a recording cannot be packaged by copying its compressed samples.
public struct CopyError: Error, CustomStringConvertible {
    public var path: String
    public var reason: String
    /// Whether decoding and encoding would package the input (a codec or timing that copying cannot carry).
    public var transcodingHelps: Bool

    public init(path: String, reason: String, transcodingHelps: Bool = false) {
        self.path = path
        self.reason = reason
        self.transcodingHelps = transcodingHelps
    }

    /// The file and the reason: what automatic mode says when it transcodes instead.
    public var summary: String { "\(path): \(reason)" }

    public var description: String { summary }
}

/// Reads an H.264 or HEVC and AAC recording as track descriptions and samples for the segmenter,
/// without decoding.
///
/// Video becomes 4-byte length-prefixed access units on a 90 kHz timescale (HEVC's parameter sets:
/// CopySource+HEVC.swift); AAC loses any ADTS headers and keeps the sample rate as its timescale. Source
/// timestamps are only rescaled: the segmenter's single delta keeps the A/V offset and the audio priming
/// of the input.
public final class CopySource {
    public static let videoTimescale = Timescale.video

    private enum Conversion {
        case h264(H264AccessUnit.Framing, AVCDecoderConfiguration)
        case hevc(NALUnitFraming, HEVCDecoderConfiguration)
        case aac(stripsADTS: Bool)
    }

    private struct Track {
        var info: InputStreamInfo
        var conversion: Conversion
        var timescale: Timescale
        var lastDecodeTime: Int64?
        /// The parameter sets video samples carry, checked against the sample entry.
        var parameterSets: InBandParameterSets?
        /// A live stream's packets before its first timestamp.
        var untimed: [DemuxedPacket] = []
    }

    /// At most this many packets of a live stream wait for its first timestamp; those before are left out.
    private static let untimedLimit = 64

    public let path: String
    public let tracks: [TrackDescription]
    public let inputStreams: [InputStreamInfo]
    /// Cut points asked for besides the chapters, in microseconds of the container's timeline.
    public var askedCutMicroseconds: [Int64] = []
    private let chapterStartMicroseconds: [Int64]
    private let demuxer: FileDemuxer
    /// By position in the demuxer's streams; nil for a stream that is handed on uncopied.
    private var state: [Track?]
    /// A live input (a network camera): timestamps may jump, which its source re-bases instead of refusing
    /// the input, and packets before a stream's first timestamp are stamped back from it a frame apart
    /// (FFmpeg gives an RTSP stream's very first packet none: a camera's first keyframe, which a copy
    /// would otherwise lose with the whole interval up to the next one).
    public var isLive = false
    /// Packets read while looking for the parameter sets of streams that carry them in-band.
    private var readAhead: [DemuxedPacket]

    /// How far to read for in-band parameter sets (MPEG-TS) before giving up.
    private static let readAheadLimit = 2_000

    /// A sample copied, or a packet of a stream that is not (`copying`), to be decoded.
    public enum Item {
        case sample(EncodedSample)
        case packet(DemuxedPacket)
    }

    /// Whether a stream can be copied into HLS: H.264 or HEVC video, AAC audio.
    public static func canCopy(_ stream: InputStreamInfo) -> Bool {
        stream.isH264 || stream.isHEVC || stream.isAAC
    }

    /// Copies every stream of `demuxer`, or only those at the positions in `copying` (the first ones:
    /// a copied sample's track is its stream's position, and the copied tracks are `tracks`, in order).
    public init(demuxer: FileDemuxer, copying: Set<Int>? = nil) throws {
        self.demuxer = demuxer
        path = demuxer.path
        chapterStartMicroseconds = demuxer.chapterStartMicroseconds
        inputStreams = demuxer.streams
        let copied = copying ?? Set(demuxer.streams.indices)
        precondition(copied.allSatisfy { $0 < copied.count }, "the copied streams come first")
        for (index, stream) in demuxer.streams.enumerated() where copied.contains(index) && !Self.canCopy(stream) {
            let kind = stream.kind == .video ? "video" : "audio"
            throw CopyError(path: demuxer.path, reason: "\(stream.codecName) \(kind) cannot be copied into HLS "
                + "(copy mode carries H.264 or HEVC video and AAC audio)", transcodingHelps: true)
        }
        var readAhead: [DemuxedPacket] = []
        var state: [Track?] = []
        for (index, stream) in demuxer.streams.enumerated() {
            if !copied.contains(index) {
                state.append(nil)
            } else if stream.isH264 {
                let (framing, configuration) = try Self.videoConfiguration(
                    stream, streamIndex: index, demuxer: demuxer, readAhead: &readAhead)
                state.append(Track(info: stream, conversion: .h264(framing, configuration), timescale: Self.videoTimescale,
                                   parameterSets: try Self.decodable(InBandParameterSets(configuration), path: demuxer.path)))
            } else if stream.isHEVC {
                let (framing, configuration) = try Self.hevcConfiguration(
                    stream, streamIndex: index, demuxer: demuxer, readAhead: &readAhead)
                state.append(Track(info: stream, conversion: .hevc(framing, configuration), timescale: Self.videoTimescale,
                                   parameterSets: try Self.decodable(InBandParameterSets(configuration), path: demuxer.path)))
            } else {
                let stripsADTS = stream.extradata.isEmpty
                state.append(Track(info: stream, conversion: .aac(stripsADTS: stripsADTS),
                                   timescale: Timescale(stream.sampleRate)))
            }
        }
        var tracks: [TrackDescription] = []
        for (index, track) in state.enumerated() {
            guard let track else { continue }
            let format: TrackDescription.Format
            switch track.conversion {
            case .h264(_, let configuration):
                format = .h264(try Self.h264Format(track.info, configuration: configuration, path: demuxer.path))
            case .hevc(_, let configuration):
                format = .hevc(try Self.hevcFormat(track.info, configuration: configuration, path: demuxer.path))
            case .aac(let stripsADTS):
                let config: AudioSpecificConfig
                do {
                    config = stripsADTS
                        ? try Self.adtsConfiguration(streamIndex: index, demuxer: demuxer, readAhead: &readAhead)
                        : try AudioSpecificConfig(parsing: track.info.extradata)
                } catch let error as BitstreamError {
                    throw CopyError(path: demuxer.path, reason: "unreadable AAC configuration (\(error))")
                }
                format = .aac(AACFormat(audioSpecificConfig: config))
            }
            tracks.append(TrackDescription(trackID: UInt32(index + 1), timescale: track.timescale,
                                           format: format))
        }
        self.tracks = tracks
        self.state = state
        self.readAhead = readAhead
    }

    /// Where the container's timeline starts, in microseconds.
    public var startMicroseconds: Int64 { demuxer.startMicroseconds }

    /// The samples' timeline is the container's, whose input time starts at its start time.
    public var inputTimeOffsetMicroseconds: Int64 { -demuxer.startMicroseconds }

    /// The input's chapters and the cut points asked for; the samples' timeline is the container's.
    public var cutMicroseconds: [Int64] { chapterStartMicroseconds + askedCutMicroseconds }

    /// The next sample in file order, or nil at the end of the file.
    public func nextSample() throws -> EncodedSample? {
        while let item = try next() {
            if case .sample(let sample) = item { return sample }
        }
        return nil
    }

    /// The next sample, or packet of a stream not copied, in file order; nil at the end of the input.
    public func next() throws -> Item? {
        while true {
            let packet: DemuxedPacket
            if !readAhead.isEmpty {
                packet = readAhead.removeFirst()
            } else if let next = try demuxer.nextPacket() {
                packet = next
            } else {
                return nil
            }
            guard state[packet.streamIndex] != nil else { return .packet(packet) }
            if let sample = try sample(from: packet) { return .sample(sample) }
        }
    }

    private func sample(from packet: DemuxedPacket) throws -> EncodedSample? {
        let index = packet.streamIndex
        guard var track = state[index] else { return nil }
        let timeBase = track.info.timeBase
        if isLive, track.lastDecodeTime == nil, holdsUntimed(packet, of: &track) {
            state[index] = track
            return nil
        }
        guard let sourceDecodeTime = packet.dts ?? packet.pts ?? track.lastDecodeTime.map({ $0 + 1 }) else {
            throw CopyError(path: path, reason: "its \(track.info.codecName) packets have no timestamps, which copying "
                + "needs", transcodingHelps: true)
        }
        try checkTimelineContinues(sourceDecodeTime, track: track)
        let decodeTime = rescale(sourceDecodeTime, timeBase, track.timescale)
        let presentationTime = packet.pts.map { rescale($0, timeBase, track.timescale) } ?? decodeTime
        let duration = packet.duration > 0 ? rescale(packet.duration, timeBase, track.timescale) : nil
        track.lastDecodeTime = sourceDecodeTime
        state[index] = track

        switch track.conversion {
        case .h264(let framing, let configuration):
            let unit: H264AccessUnit
            do {
                unit = try H264AccessUnit(packet.data, framing: framing, configuration: configuration)
            } catch {
                throw CopyError(path: path, reason: "broken H.264 sample at \(seconds(decodeTime, track)) s "
                    + "(\(error)); the file is corrupt")
            }
            try checkParameterSets(in: unit.bytes, of: index, at: decodeTime)
            return EncodedSample(track: index, decodeTime: decodeTime,
                                 compositionOffset: Int32(clamping: presentationTime - decodeTime),
                                 durationHint: duration, isSync: unit.isIDR, data: unit.bytes)
        case .hevc(let framing, let configuration):
            let unit: HEVCAccessUnit
            do {
                unit = try HEVCAccessUnit(packet.data, framing: framing, configuration: configuration)
            } catch {
                throw CopyError(path: path, reason: "broken HEVC sample at \(seconds(decodeTime, track)) s "
                    + "(\(error)); the file is corrupt")
            }
            try checkParameterSets(in: unit.bytes, of: index, at: decodeTime)
            return EncodedSample(track: index, decodeTime: decodeTime,
                                 compositionOffset: Int32(clamping: presentationTime - decodeTime),
                                 durationHint: duration, isSync: unit.isIntraRandomAccessPoint, data: unit.bytes)
        case .aac(let stripsADTS):
            var data = packet.data
            if stripsADTS {
                do {
                    data = Array(try ADTSHeader.payload(ofFrame: data))
                } catch {
                    throw CopyError(path: path, reason: "broken ADTS frame at \(seconds(decodeTime, track)) s "
                        + "(\(error)); the file is corrupt")
                }
            }
            return EncodedSample(track: index, decodeTime: decodeTime, durationHint: duration, isSync: true,
                                 data: data)
        }
    }

    /// The sample entry's parameter sets, when a decoder takes every SPS among them: the validator's rule.
    private static func decodable(_ sets: InBandParameterSets, path: String) throws -> InBandParameterSets {
        if let problem = sets.sampleEntryProblem { throw CopyError(path: path, reason: problem, transcodingHelps: true) }
        return sets
    }

    /// A copied sample's own parameter sets must be ones a decoder takes and agree with the sample entry:
    /// a copy that carried them would not decode, so copying gives way to transcoding.
    private func checkParameterSets(in sample: [UInt8], of index: Int, at decodeTime: Int64) throws {
        guard state[index]?.parameterSets != nil,
              let units = try? LengthPrefixed.nalUnits(in: sample),
              let problem = state[index]?.parameterSets?.check(units), let track = state[index] else { return }
        throw CopyError(path: path, reason: "\(problem), at \(seconds(decodeTime, track)) s",
                        transcodingHelps: true)
    }

    /// The demuxer re-stamps a few samples stamped far off; a track that stays far away jumps in
    /// time, which one segment sequence cannot carry.
    private func checkTimelineContinues(_ sourceDecodeTime: Int64, track: Track) throws {
        let timeBase = track.info.timeBase
        guard !isLive, let previous = track.lastDecodeTime,
              abs(sourceDecodeTime - previous) > TimestampJump.limit(in: timeBase) else { return }
        throw CopyError(path: path, reason: "its \(track.info.codecName) timestamps jump from "
            + "\(seconds(rescale(previous, timeBase, track.timescale), track)) s to "
            + "\(seconds(rescale(sourceDecodeTime, timeBase, track.timescale), track)) s; the file is damaged")
    }

    /// A live track's first packets may come without timestamps (an RTSP camera's first keyframe): they
    /// are held until the first timed packet, then read again before it, stamped a frame apart back from
    /// it. True when `packet` was held, or held packets were put back to be read again before it.
    private func holdsUntimed(_ packet: DemuxedPacket, of track: inout Track) -> Bool {
        guard let first = packet.dts ?? packet.pts else {
            if track.untimed.count == Self.untimedLimit { track.untimed.removeFirst() }
            track.untimed.append(packet)
            return true
        }
        guard !track.untimed.isEmpty else { return false }
        let untimed = track.untimed
        track.untimed = []
        // Without a known spacing they cannot be placed: left out.
        guard let spacing = Self.frameSpacing(of: track.info, packet: packet) else { return false }
        let stamped = untimed.enumerated().map { position, untimedPacket in
            var stamped = untimedPacket
            stamped.dts = first - Int64(untimed.count - position) * spacing
            stamped.pts = stamped.dts
            return stamped
        }
        readAhead.insert(contentsOf: stamped + [packet], at: 0)
        return true
    }

    private func seconds(_ ticks: Int64, _ track: Track) -> String {
        String(format: "%.3f", track.timescale.seconds(ticks))
    }

    /// How far apart two packets of the stream are, in its time base: the packet's own duration, a
    /// picture at the stream's frame rate, or an AAC frame at its sample rate. Nil when none is known.
    private static func frameSpacing(of stream: InputStreamInfo, packet: DemuxedPacket) -> Int64? {
        if packet.duration > 0 { return packet.duration }
        let base = stream.timeBase
        switch stream.kind {
        case .video:
            return stream.pictureTicks(in: base)
        case .audio:
            guard base.numerator > 0, base.denominator > 0, stream.sampleRate > 0 else { return nil }
            let ticks = Int64(AudioEncoder.frameSampleCount) * Int64(base.denominator)
                / (Int64(base.numerator) * Int64(stream.sampleRate))
            return ticks > 0 ? ticks : nil
        }
    }

    private func rescale(_ value: Int64, _ timeBase: Rational, _ timescale: Timescale) -> Int64 {
        HLSKit.rescale(value, multipliedBy: Int64(timeBase.numerator) * timescale.perSecond,
                       dividedBy: Int64(timeBase.denominator))
    }

    private static func videoConfiguration(
        _ stream: InputStreamInfo, streamIndex: Int, demuxer: FileDemuxer, readAhead: inout [DemuxedPacket]
    ) throws -> (H264AccessUnit.Framing, AVCDecoderConfiguration) {
        if let first = stream.extradata.first, first == 1 {
            do {
                let configuration = try AVCDecoderConfiguration(parsing: stream.extradata)
                return (.lengthPrefixed(lengthSize: configuration.nalUnitLengthSize), configuration)
            } catch {
                throw CopyError(path: demuxer.path, reason: "unreadable H.264 configuration (\(error))")
            }
        }
        if let configuration = H264ParameterSetChoice.usableConfiguration(annexB: stream.extradata) {
            return (.annexB, configuration)
        }
        // MPEG-TS carries SPS and PPS in the stream, in front of keyframes: start from the first good ones.
        let packet = try readUntil(streamIndex: streamIndex, demuxer: demuxer, readAhead: &readAhead) {
            H264ParameterSetChoice.usableConfiguration(annexB: $0.data) != nil
        }
        if let packet, let configuration = H264ParameterSetChoice.usableConfiguration(annexB: packet.data),
           let start = readAhead.firstIndex(where: { $0.streamIndex == streamIndex && $0.data == packet.data }) {
            readAhead = readAhead.enumerated().filter { $0.offset >= start || $0.element.streamIndex != streamIndex }
                .map(\.element)
            return (.annexB, configuration)
        }
        // None is usable: the first that parses at all, so that the error says what is wrong with it.
        let parsed = ([stream.extradata] + readAhead.filter { $0.streamIndex == streamIndex }.map(\.data))
            .lazy.compactMap(H264ParameterSetChoice.parsedConfiguration(annexB:)).first
        guard let configuration = parsed else {
            throw CopyError(path: demuxer.path, reason: "no H.264 parameter sets (SPS/PPS) found; "
                + "the video cannot be decoded")
        }
        return (.annexB, configuration)
    }

    private static func adtsConfiguration(
        streamIndex: Int, demuxer: FileDemuxer, readAhead: inout [DemuxedPacket]
    ) throws -> AudioSpecificConfig {
        let packet = try readUntil(streamIndex: streamIndex, demuxer: demuxer, readAhead: &readAhead) { _ in true }
        guard let packet, let header = try? ADTSHeader(parsing: packet.data),
              let config = try? header.audioSpecificConfig() else {
            throw CopyError(path: demuxer.path, reason: "AAC audio without a decoder configuration or ADTS "
                + "headers; the audio cannot be decoded")
        }
        return config
    }

    /// Reads on (keeping every packet for later) until a packet of `streamIndex` matches. Not private:
    /// HEVC's in-band parameter sets are looked for the same way.
    static func readUntil(
        streamIndex: Int, demuxer: FileDemuxer, readAhead: inout [DemuxedPacket],
        where matches: (DemuxedPacket) -> Bool
    ) throws -> DemuxedPacket? {
        if let found = readAhead.first(where: { $0.streamIndex == streamIndex && matches($0) }) {
            return found
        }
        while readAhead.count < readAheadLimit, let packet = try demuxer.nextPacket() {
            readAhead.append(packet)
            if packet.streamIndex == streamIndex && matches(packet) { return packet }
        }
        return nil
    }

    /// The sample entry of copied H.264 (a camera's own as well).
    static func h264Format(_ stream: InputStreamInfo, configuration: AVCDecoderConfiguration,
                                   path: String) throws -> H264Format {
        let sps: H264SequenceParameterSet
        do {
            sps = try configuration.parsedSequenceParameterSet()
        } catch {
            throw CopyError(path: path, reason: "unreadable H.264 sequence parameter set (\(error))")
        }
        let width = stream.width > 0 ? stream.width : sps.width
        let height = stream.height > 0 ? stream.height : sps.height
        if let problem = H264ParameterSetChoice.pictureSizeProblem(width: width, height: height) {
            throw CopyError(path: path, reason: problem)
        }
        var displayWidth = width
        if let aspect = stream.sampleAspectRatio, aspect.numerator > 0, aspect.denominator > 0 {
            displayWidth = Int(HLSKit.rescale(Int64(width), multipliedBy: Int64(aspect.numerator),
                                              dividedBy: Int64(aspect.denominator)))
        }
        return H264Format(decoderConfiguration: configuration, width: width, height: height,
                          displayWidth: displayWidth, displayHeight: height, matrix: stream.displayMatrix,
                          colourDescription: sps.colourDescription)
    }
}
