import CFFmpeg
import Glibc
import HLSKit

/// Reads the compressed packets of a media file: its best video stream and its audio streams (every
/// one, or those asked for), in file order. Use one instance from one thread at a time.
///
/// A truncated file fails with `.corrupt` rather than ending early, as far as the container
/// lets that be known: FFmpeg's MP4 demuxer cannot open one cut before its index, and its
/// MP4 and Matroska demuxers log a cut in the media data and then report a plain end of
/// file, which `nextPacket()` turns back into an error. MPEG-TS has no index or total size;
/// a file that ends inside a transport packet is refused when it is opened.
public final class FileDemuxer {
    public let path: String
    /// Opened by URL: a read that fails is the connection's failure, not the data's.
    private let isNetwork: Bool
    /// Which audio streams to read.
    public enum AudioSelection: Sendable, Equatable {
        /// FFmpeg's best audio stream only.
        case best
        /// Every audio stream, in file order.
        case all
        /// These audio streams, numbered from 1 in file order.
        case numbers([Int])
    }

    /// The selected streams: video first, then audio; at least one of them.
    public let streams: [InputStreamInfo]
    /// Where the container's timeline starts, in microseconds (0 when it does not say).
    public var startMicroseconds: Int64 { input.startMicroseconds }
    /// The start of each chapter, in microseconds of the container's timeline, ascending.
    public var chapterStartMicroseconds: [Int64] { input.chapterStartMicroseconds }

    private let input: InputFormatContext
    private var packet: Packet
    /// For each FFmpeg stream index, the position of that stream in `streams`.
    private let positionsByStreamIndex: [Int?]
    /// Packets read ahead to judge a timestamp far from its stream's previous one.
    private var queued: [DemuxedPacket] = []
    /// The last decode time handed out, by position in `streams`.
    private var lastDecodeTimes: [Int: Int64] = [:]
    /// Packets whose timestamps were re-stamped between their neighbours.
    public private(set) var restampedPacketCount = 0
    /// The most packets read ahead for one judgement: a few seconds of interleaved media.
    private static let readAheadLimit = 2_000

    /// MPEG-TS packet sizes: plain, M2TS (with a timestamp prefix) and with FEC bytes.
    private static let transportPacketSizes = [188, 192, 204]

    public init(path: String, audio audioSelection: AudioSelection = .best) throws(MediaInputError) {
        self.path = path
        isNetwork = false
        let fileSize = try Self.sizeOfReadableFile(path)
        do {
            // The "file:" prefix keeps a colon in a file name from being read as a protocol,
            // and the whitelist keeps playlists and the like from reaching for the network.
            input = try InputFormatContext(url: "file:" + path, options: ["protocol_whitelist": "file"])
            try input.findStreamInfo()
            packet = try Packet()
        } catch {
            throw Self.openingError(error, path: path)
        }
        try Self.checkTransportStreamIsWhole(input, fileSize: fileSize, path: path)
        (positionsByStreamIndex, streams) = try Self.select(in: input, audio: audioSelection, path: path)
    }

    /// Opens any input libavformat reads by URL (`rtsp://…`, `srt://…`, `udp://…`, `http://…`) with
    /// demuxer or protocol `options`; `interrupt` lets another thread abort a blocking call (a stall, a
    /// stop). `name` is the input as messages show it, without credentials. With `trust`, every https
    /// server it opens must present a certificate that `trust` accepts.
    public init(url: String, name: String, options: [String: String], interrupt: AVIOInterruptCB,
                trust: CertificateTrust? = nil, audio audioSelection: AudioSelection = .best) throws(MediaInputError) {
        path = name
        isNetwork = true
        do {
            input = try InputFormatContext(url: url, options: options, interrupt: interrupt, trust: trust)
            try input.findStreamInfo()
            packet = try Packet()
        } catch {
            if CertificateTrust.isCertificateFailure(error.loggedMessage), let logged = error.loggedMessage {
                throw MediaInputError(kind: .untrusted, path: name, detail: logged)
            }
            throw MediaInputError(kind: .unreachable, path: name, detail: error.description)
        }
        (positionsByStreamIndex, streams) = try Self.select(in: input, audio: audioSelection, path: name)
    }

    /// The input's streams that are neither video nor audio (data such as KLV, subtitles), as
    /// "codec kind": what packaging leaves out.
    public var otherStreams: [String] {
        (0..<input.streamCount).compactMap { index in
            let parameters = input.stream(at: index).pointee.codecpar.pointee
            guard parameters.codec_type != AVMEDIA_TYPE_VIDEO, parameters.codec_type != AVMEDIA_TYPE_AUDIO else { return nil }
            let kind = av_get_media_type_string(parameters.codec_type).map { String(cString: $0) } ?? "unknown"
            return "\(String(cString: avcodec_get_name(parameters.codec_id))) \(kind)"
        }
    }

    /// The streams to read (the best video, then the audio asked for) and, for each FFmpeg stream index,
    /// its position among them; every other stream is discarded.
    private static func select(in input: borrowing InputFormatContext, audio audioSelection: AudioSelection,
                               path: String) throws(MediaInputError) -> (positions: [Int?], streams: [InputStreamInfo]) {
        var selected: [(index: Int, kind: InputStreamInfo.Kind)] = []
        let video = input.bestStream(of: AVMEDIA_TYPE_VIDEO)
        if let video, !Self.isAttachedPicture(input.stream(at: video)) { selected.append((video, .video)) }
        var audioStreams: [Int] = []
        for index in 0..<input.streamCount
        where input.stream(at: index).pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO {
            audioStreams.append(index)
        }
        switch audioSelection {
        case .best:
            if let audio = input.bestStream(of: AVMEDIA_TYPE_AUDIO, relatedTo: video) { selected.append((audio, .audio)) }
        case .all:
            selected += audioStreams.map { ($0, .audio) }
        case .numbers(let numbers):
            for number in numbers {
                guard (1...max(1, audioStreams.count)).contains(number), !audioStreams.isEmpty else {
                    throw MediaInputError(kind: .noMediaStreams, path: path,
                                          detail: "it has \(audioStreams.count) audio track(s); there is no audio track \(number)")
                }
                selected.append((audioStreams[number - 1], .audio))
            }
        }
        guard !selected.isEmpty else {
            throw MediaInputError(kind: .noMediaStreams, path: path, detail: Self.describeStreams(of: input))
        }
        input.discardStreams(except: selected.map(\.index))

        var positions = [Int?](repeating: nil, count: input.streamCount)
        var infos: [InputStreamInfo] = []
        for (position, stream) in selected.enumerated() {
            positions[stream.index] = position
            infos.append(InputStreamInfo(stream: input.stream(at: stream.index), kind: stream.kind, in: input))
        }
        return (positions, infos)
    }

    /// The next packet of a selected stream, or `nil` once the whole file has been read.
    ///
    /// Packets stamped more than `TimestampJump.limitSeconds` away from their stream's previous
    /// packet, when the stream comes back in step soon after (a damaged PES header), are re-stamped
    /// evenly between their neighbours, as a player would play them; otherwise one bad timestamp
    /// would stretch a segment, or make the transcoder fill the gap, over hours. A stream that stays
    /// at the far time is handed on as it is.
    public func nextPacket() throws(MediaInputError) -> DemuxedPacket? {
        guard var packet = queued.isEmpty ? try readPacket() : queued.removeFirst() else { return nil }
        let position = packet.streamIndex
        if let stamped = packet.dts ?? packet.pts, let previous = lastDecodeTimes[position],
           case let limit = TimestampJump.limit(in: streams[position].timeBase), abs(stamped - previous) > limit {
            var upcoming = queued.filter { $0.streamIndex == position }
            while upcoming.count < TimestampJump.lookaheadSamples, queued.count < Self.readAheadLimit,
                  let next = try readPacket() {
                queued.append(next)
                if next.streamIndex == position { upcoming.append(next) }
            }
            let verdict = TimestampJump.judge(
                previous: previous, current: stamped,
                upcoming: upcoming.prefix(TimestampJump.lookaheadSamples).compactMap { $0.dts ?? $0.pts },
                durationHint: packet.duration, limit: limit)
            if case .repaired(let decodeTime) = verdict {
                let shift = decodeTime - stamped
                packet.dts = packet.dts.map { $0 + shift }
                packet.pts = packet.pts.map { $0 + shift }
                restampedPacketCount += 1
            }
        }
        // A composition time that far from the decode time is damage as well (a flipped PTS bit, a
        // broken ctts entry): without it the decoder guesses the time, and copying presents at the
        // decode time, instead of the transcoder filling the gap or failing.
        if let pts = packet.pts, let dts = packet.dts, abs(pts - dts) > TimestampJump.limit(in: streams[position].timeBase) {
            packet.pts = nil
            restampedPacketCount += 1
        }
        if let decodeTime = packet.dts ?? packet.pts { lastDecodeTimes[position] = decodeTime }
        return packet
    }

    private func readPacket() throws(MediaInputError) -> DemuxedPacket? {
        while true {
            let result: InputFormatContext.ReadResult
            do {
                result = try input.readFrame(into: &packet)
            } catch {
                throw MediaInputError(kind: isNetwork ? .connectionLost : .corrupt, path: path, detail: error.description)
            }
            switch result {
            case .endOfFile:
                try checkEndIsComplete()
                return nil
            case .tryAgain:
                // Files are opened blocking; a demuxer may still ask to be called again.
                continue
            case .packet:
                // Packets buffered while probing, and streams that appear mid-file, may still
                // belong to streams we did not select.
                let streamIndex = packet.streamIndex
                guard streamIndex < positionsByStreamIndex.count,
                      let position = positionsByStreamIndex[streamIndex] else { continue }
                return DemuxedPacket(packet, streamIndex: position)
            }
        }
    }

    /// The codec parameters of the selected stream at `position` in `streams`, valid while
    /// this demuxer lives; a decoder copies them.
    func codecParameters(ofStream position: Int) -> UnsafePointer<AVCodecParameters> {
        UnsafePointer(input.stream(at: streams[position].index).pointee.codecpar)
    }

    /// Throws when the end of file was the demuxer giving up rather than the data ending.
    private func checkEndIsComplete() throws(MediaInputError) {
        if let reported = input.recordedError {
            throw MediaInputError(kind: .corrupt, path: path, detail: reported)
        }
    }

    // MARK: Opening

    /// Checks the path before FFmpeg sees it, whose errors would be vaguer, and which would
    /// wait forever on a FIFO; returns the file's size in bytes.
    private static func sizeOfReadableFile(_ path: String) throws(MediaInputError) -> Int {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let error = errno
            switch error {
            case ENOENT, ENOTDIR: throw MediaInputError(kind: .notFound, path: path)
            default: throw MediaInputError(kind: .unreadable, path: path, detail: systemMessage(error))
            }
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw MediaInputError(kind: .unreadable, path: path, detail: "it is a directory")
        default: throw MediaInputError(kind: .unreadable, path: path, detail: "it is not a regular file")
        }
        guard access(path, R_OK) == 0 else {
            throw MediaInputError(kind: .unreadable, path: path, detail: systemMessage(errno))
        }
        guard status.st_size > 0 else {
            throw MediaInputError(kind: .notMedia, path: path, detail: "the file is empty")
        }
        return Int(status.st_size)
    }

    /// FFmpeg drops a final partial transport packet without a word, and a stream cut
    /// between two video packets looks complete; a size that is not a whole number of
    /// packets is the one sign of truncation left.
    private static func checkTransportStreamIsWhole(
        _ input: borrowing InputFormatContext, fileSize: Int, path: String
    ) throws(MediaInputError) {
        guard input.formatName == "mpegts",
              !transportPacketSizes.contains(where: { fileSize % $0 == 0 }) else { return }
        throw MediaInputError(kind: .corrupt, path: path, detail: "the file ends inside a transport stream packet")
    }

    private static func openingError(_ error: FFmpegError, path: String) -> MediaInputError {
        switch error.code {
        case hlscap_averror(ENOENT):
            return MediaInputError(kind: .notFound, path: path)
        case hlscap_averror(EACCES), hlscap_averror(EISDIR):
            return MediaInputError(kind: .unreadable, path: path, detail: error.text)
        case FFmpegError.invalidData.code:
            // A demuxer that logged why it failed recognised its format: the data is broken.
            // Without one, no demuxer recognised the file at all.
            if let reported = error.loggedMessage {
                return MediaInputError(kind: .corrupt, path: path, detail: reported)
            }
            return MediaInputError(kind: .notMedia, path: path, detail: "no demuxer recognises its contents")
        default:
            return MediaInputError(kind: .notMedia, path: path, detail: error.description)
        }
    }

    /// Cover art is a video stream of one picture; it is not the video we package.
    private static func isAttachedPicture(_ stream: UnsafeMutablePointer<AVStream>) -> Bool {
        stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0
    }

    /// What the file holds instead of video or audio, e.g. "it holds 1 subtitle stream".
    private static func describeStreams(of input: borrowing InputFormatContext) -> String {
        guard input.streamCount > 0 else { return "it holds no streams" }
        var counts: [String: Int] = [:]
        for index in 0..<input.streamCount {
            let type = input.stream(at: index).pointee.codecpar.pointee.codec_type
            let name = av_get_media_type_string(type).map { String(cString: $0) } ?? "unknown"
            counts[name, default: 0] += 1
        }
        let parts = counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key) stream\($0.value == 1 ? "" : "s")" }
        return "it holds " + parts.joined(separator: ", ")
    }

    private static func systemMessage(_ error: Int32) -> String {
        String(cString: strerror(error)).lowercased()
    }
}
