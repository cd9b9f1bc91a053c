import CFFmpeg
import Glibc
import HLSBase
import HLSKit
import Synchronization

/// A URL or a file read through libavformat as a live source: `--video rtsp://camera/stream`,
/// `srt://`, `rtmp://`, `udp://`, `http://`, or `--video clip.mp4 --loop`. Its video and audio are
/// decoded, stamped on the monotonic clock, and handed on at the pace their timestamps give (a file
/// like ffmpeg's `-re`; without `realtime`, a file as fast as it is encoded).
///
/// The input is opened when the source is made, so that its size, rate and streams are known before
/// the engine is configured and a URL that does not answer is said before anything is written.
public final class MediaSource: CaptureSource {
    public struct Configuration: Sendable {
        /// A URL (`scheme://…`) or a file path.
        public var location: String
        public var video = true
        public var audio = true
        /// Frames at the pace their timestamps give. Off (a file only): as fast as they are encoded.
        public var realtime = true
        /// At the end of a file, start it again; the timeline goes on without a gap.
        public var loop = false
        /// RTSP over `tcp` (the default: no losses through NAT and firewalls) or `udp`.
        public var rtspTransport = "tcp"
        /// What https servers must present: a certificate signed for their name by an authority in the
        /// system's store, or in the trust's file (for the first URL and every playlist and segment after).
        public var trust = CertificateTrust()
        /// An input that delivers nothing for this long has stalled: opening it, or the stream, fails.
        public var stallTimeoutSeconds = 10.0
        /// Stream time after which the source ends (`--duration` out of real time); nil: the input's end.
        public var durationMicroseconds: Int64?
        /// H.264 or HEVC video and AAC sound are handed on as they are (`copiedTracks`), not decoded.
        public var copy = false
        /// A URL that stalls, fails or ends is `.lost` and opened again until it answers (`.restored`),
        /// stand-ins keeping its tracks flowing meanwhile; it is decoded (`copy` is not for it), so that
        /// the stand-ins' pictures and the camera's are encoded alike.
        public var reconnect = false
        /// The URL waits for a publisher to connect (`--listen`): opening waits as long as it takes, and
        /// the publisher leaving ends the stream cleanly (with `reconnect`, the next one is waited for).
        public var listen: Listen?

        public struct Listen: Sendable {
            /// How the input is named in messages (the address hlscap listens on, without a key).
            public var name: String
            /// Protocol options that make libavformat listen (`listen=1`, `mode=listener`).
            public var options: [String: String]
            /// How many connections have been handed to libavformat's listener so far: an open that fails
            /// after a new one was a publisher refused or gone before it began, and is tried again.
            public var handedOn: @Sendable () -> Int

            public init(name: String, options: [String: String], handedOn: @escaping @Sendable () -> Int = { 0 }) {
                self.name = name
                self.options = options
                self.handedOn = handedOn
            }
        }

        public init(location: String) {
            self.location = location
        }

        /// Whether `location` names a network input rather than a file.
        public var isURL: Bool { Self.isURL(location) }

        public static func isURL(_ text: String) -> Bool {
            guard let colon = text.range(of: "://") else { return false }
            let scheme = text[..<colon.lowerBound]
            return !scheme.isEmpty && scheme.allSatisfy { $0.isLetter || $0 == "+" || $0 == "-" || $0 == "." }
        }
    }

    /// Timestamps that move by more than this between two frames of a stream are a jump of the
    /// source's clock (an RTP wrap, a recorder's bad clock), not time that passed.
    static let jumpForwardMicroseconds: Int64 = 10_000_000
    static let jumpBackMicroseconds: Int64 = 1_000_000
    /// A network frame due further ahead than this is not waited for: the source's clock runs far from
    /// the local one (or a long burst was read ahead), and holding frames back would only add delay.
    static let longestWaitMicroseconds: Int64 = 5_000_000
    /// How early a paced frame may be handed on.
    static let paceLeadMicroseconds: Int64 = 50_000
    static let networkPaceLeadMicroseconds: Int64 = 200_000
    /// With `reconnect`, the longest wait between tries to open a lost input again: the waits start at a
    /// device's half second and double.
    static let longestRetryMicroseconds: Int64 = 8_000_000

    public let configuration: Configuration
    /// The input as messages name it: the path, or the URL without its password.
    public let name: String
    /// The selected streams, as the input described them when it opened.
    public let streams: [InputStreamInfo]
    private let watchdog: Watchdog
    private var opened: Opened?
    private var thread: CaptureThread?

    /// Opens the input and its decoders; a URL that does not answer within the stall timeout, a file
    /// that is not media, or an input without the video or audio asked for fails here.
    public init(_ configuration: Configuration) throws(CaptureError) {
        FFmpegLog.installIfNeeded()
        self.configuration = configuration
        name = configuration.listen?.name ?? Self.displayName(configuration.location)
        watchdog = Watchdog(stallMicroseconds: Int64(configuration.stallTimeoutSeconds * 1_000_000))
        let opened = try Self.open(configuration, name: name, watchdog: watchdog)
        streams = opened.demuxer.streams
        copiedTracks = opened.copiedTracks
        keyframeIntervalSeconds = opened.keyframeIntervalMicroseconds.map { Double($0) / 1_000_000 }
        copyRefusal = opened.copyRefusal
        otherStreams = opened.demuxer.otherStreams
        self.opened = opened
    }

    /// A source never started closes its input here, before the watchdog that the input's interrupt
    /// callback points at goes (closing an RTSP input still sends its TEARDOWN through that callback).
    deinit {
        opened = nil
    }

    /// The input's data and subtitle streams ("klv data"), which the stream leaves out.
    public let otherStreams: [String]

    /// The tracks handed on without decoding (`configuration.copy`): the video first, then its sound.
    public let copiedTracks: [TrackDescription]
    /// With copied video: from its first keyframe to the next, which copied segments cannot be shorter than.
    public let keyframeIntervalSeconds: Double?
    /// Why copying was asked for and the video is decoded all the same (a codec HLS cannot carry).
    public let copyRefusal: String?

    /// What the stream gets from this input: only the kinds asked of it (`--audio none` leaves a file's
    /// sound out, and no track waits for it).
    public var delivers: CaptureKinds {
        var kinds: CaptureKinds = []
        if configuration.video, streams.contains(where: { $0.kind == .video }) { kinds.insert(.video) }
        if configuration.audio, streams.contains(where: { $0.kind == .audio }) { kinds.insert(.audio) }
        return kinds
    }

    /// A dark picture the input's size and rate, and silence, while a lost URL is waited for.
    public var standIns: [StandInSource.Content] {
        guard configuration.reconnect else { return [] }
        var contents: [StandInSource.Content] = []
        if configuration.video, let video, video.width >= 2, video.height >= 2 {
            contents.append(.video(width: video.width & ~1, height: video.height & ~1,
                                   framesPerSecond: video.averageFrameRate?.wholeFramesPerSecond ?? 30))
        }
        if configuration.audio, streams.contains(where: { $0.kind == .audio }) {
            contents.append(.audio(sampleRate: 48_000, channelCount: 2))
        }
        return contents
    }

    /// A file out of real time is read as fast as the writing queue takes it, and ends on its own.
    public var isLive: Bool { configuration.realtime || configuration.isURL }

    /// The video stream as it opened: its size and rate, for an engine that takes them from the source.
    public var video: InputStreamInfo? { streams.first { $0.kind == .video } }

    public func start(handler: @escaping (CaptureEvent) -> Void) throws {
        precondition(thread == nil, "a capture source starts once")
        guard let opened else { preconditionFailure("a capture source starts once") }
        self.opened = nil
        let thread = CaptureThread(handler: handler)
        self.thread = thread
        let reader = Reader(opened: opened, configuration: configuration, name: name, watchdog: watchdog)
        thread.start(name: "hlscap input") { reader.run(on: thread) }
    }

    public func stop() {
        watchdog.stop()
        thread?.stop()
    }

    /// The demuxer, the copier of the streams copied, a decoder for each stream that is not, and what the
    /// copier read ahead to measure the keyframe interval.
    fileprivate final class Opened {
        let demuxer: FileDemuxer
        let copier: CopySource?
        /// By position in the demuxer's streams; nil for a copied stream.
        let decoders: [Decoder?]
        var pending: [CopySource.Item]
        /// When the first sample of `pending` was live, on the monotonic clock.
        let pendingLiveMicroseconds: Int64?
        /// From the first video keyframe to the next, when video is copied and the input showed two.
        let keyframeIntervalMicroseconds: Int64?
        /// Why the video is decoded although copying was asked for.
        let copyRefusal: String?

        init(demuxer: FileDemuxer, copier: CopySource?, decoders: [Decoder?], pending: [CopySource.Item] = [],
             pendingLiveMicroseconds: Int64? = nil, keyframeIntervalMicroseconds: Int64?, copyRefusal: String?) {
            self.demuxer = demuxer
            self.copier = copier
            self.decoders = decoders
            self.pending = pending
            self.pendingLiveMicroseconds = pendingLiveMicroseconds
            self.keyframeIntervalMicroseconds = keyframeIntervalMicroseconds
            self.copyRefusal = copyRefusal
        }

        var copiedTracks: [TrackDescription] { copier?.tracks ?? [] }
    }

    /// How many items (samples and time jumps) the copier reads ahead at most for a second keyframe (the time limit is
    /// `KeyframeIntervalSearch.limitMicroseconds`): bounds the memory of a source that sends no video.
    static let keyframeSearchItems = 2_000

    fileprivate static func open(_ configuration: Configuration, name: String,
                                 watchdog: Watchdog) throws(CaptureError) -> Opened {
        let demuxer = try openDemuxer(configuration, name: name, watchdog: watchdog)
        let kinds = Set(demuxer.streams.map(\.kind))
        if configuration.video, !configuration.audio, !kinds.contains(.video) {
            throw CaptureError(device: name, message: "holds no video stream; give --video none or another input")
        }
        if configuration.audio, !configuration.video, !kinds.contains(.audio) {
            throw CaptureError(device: name, message: "holds no audio stream; give --audio none or another input")
        }
        var copier: CopySource?
        var pending: [CopySource.Item] = []
        var pendingLive: Int64?
        var interval: Int64?
        var refusal: String?
        // The streams copied come first: the video when it is H.264 or HEVC, then AAC sound beside it.
        var copying: Set<Int> = []
        if configuration.copy {
            for (position, stream) in demuxer.streams.enumerated() {
                let wanted = stream.kind == .video ? configuration.video : configuration.audio
                guard wanted, CopySource.canCopy(stream), copying.count == position else { break }
                copying.insert(position)
            }
            if let video = demuxer.streams.first, video.kind == .video, configuration.video, !copying.contains(0) {
                refusal = "its \(video.codecName) video cannot be copied into HLS; it is decoded and encoded"
            }
        }
        if !copying.isEmpty {
            watchdog.arm()
            defer { watchdog.disarm() }
            do {
                let source = try CopySource(demuxer: demuxer, copying: copying)
                source.isLive = true
                if source.tracks.first?.isVideo == true {
                    (pending, interval, pendingLive) = try measureKeyframeInterval(source, watchdog: watchdog)
                }
                copier = source
            } catch let error as CopyError {
                // Copying is an economy: a source it cannot carry is decoded instead, from the start again.
                refusal = error.reason + "; it is decoded and encoded"
                var decoding = configuration
                decoding.copy = false
                let opened = try open(decoding, name: name, watchdog: watchdog)
                return Opened(demuxer: opened.demuxer, copier: nil, decoders: opened.decoders,
                              keyframeIntervalMicroseconds: nil, copyRefusal: refusal)
            } catch {
                throw CaptureError(device: name, message: watchdog.hasStalled
                    ? String(format: "nothing received for %g s (--stall-timeout)", configuration.stallTimeoutSeconds)
                    : "reading failed: \(error)", isUnreachable: configuration.isURL)
            }
        }
        var decoders: [Decoder?] = []
        for (position, stream) in demuxer.streams.enumerated() {
            guard !copying.contains(position) else {
                decoders.append(nil)
                continue
            }
            do {
                decoders.append(try Decoder(demuxer: demuxer, streamIndex: position))
            } catch {
                throw CaptureError(device: name, message: "its \(stream.codecName) \(stream.kind) cannot be decoded: \(error)")
            }
        }
        return Opened(demuxer: demuxer, copier: copier, decoders: decoders, pending: pending,
                      pendingLiveMicroseconds: pendingLive, keyframeIntervalMicroseconds: interval, copyRefusal: refusal)
    }

    private static func openDemuxer(_ configuration: Configuration, name: String,
                                    watchdog: Watchdog) throws(CaptureError) -> FileDemuxer {
        do throws(MediaInputError) {
            if let listen = configuration.listen {
                // No stall timeout while nobody publishes; a connection refused or lost before its stream
                // began is listened for again.
                while true {
                    let before = listen.handedOn()
                    do throws(MediaInputError) {
                        return try FileDemuxer(url: configuration.location, name: name,
                                               options: options(for: configuration), interrupt: watchdog.callback)
                    } catch {
                        guard listen.handedOn() != before, !watchdog.isStopped else { throw error }
                    }
                }
            }
            if configuration.isURL {
                watchdog.arm()
                defer { watchdog.disarm() }
                return try FileDemuxer(url: configuration.location, name: name, options: options(for: configuration),
                                       interrupt: watchdog.callback, trust: configuration.trust)
            }
            return try FileDemuxer(path: configuration.location)
        } catch {
            if configuration.isURL, watchdog.hasStalled {
                throw CaptureError(device: name, message: String(
                    format: "nothing received for %g s; check the URL and that the camera or server is up "
                        + "(--stall-timeout sets how long to wait)", configuration.stallTimeoutSeconds),
                    isUnreachable: true)
            }
            var message = error.description
            if message.hasPrefix(name + ": ") { message.removeFirst(name.count + 2) }
            throw CaptureError(device: name, message: message, isMissing: error.kind == .notFound,
                               isUnreachable: error.kind == .unreachable || error.kind == .untrusted,
                               isUntrusted: error.kind == .untrusted)
        }
    }

    /// Reads ahead to the second video keyframe (the items read are kept, to be handed on first): the
    /// camera's keyframe interval, which bounds how short a copied segment can be. And when, on the
    /// monotonic clock, the first sample's time was live: the earliest any sample read came, less its
    /// time after the first (a server sends its first packets late, after its start-up, and the rest at
    /// their pace; its sound often ahead of its picture).
    private static func measureKeyframeInterval(_ source: CopySource, watchdog: Watchdog) throws
        -> ([CopySource.Item], Int64?, Int64?) {
        var items: [CopySource.Item] = []
        var firstTime: Int64?
        var firstLive: Int64?
        var search = KeyframeIntervalSearch()
        while items.count < keyframeSearchItems {
            // Each read has the stall timeout: the search itself may take a whole keyframe interval.
            watchdog.arm()
            guard let item = try source.next() else { break }
            items.append(item)
            guard case .sample(let sample) = item else { continue }
            let time = source.tracks[sample.track].timescale.convert(sample.decodeTime, to: .microseconds)
            let live = MonotonicClock.nowMicroseconds() - (time - (firstTime ?? time))
            firstTime = firstTime ?? time
            firstLive = min(firstLive ?? live, live)
            guard sample.track == 0 else { continue }
            switch search.add(microseconds: time, isSync: sample.isSync) {
            case .searching: continue
            case .found(let interval): return (items, interval, firstLive)
            case .gaveUp: return (items, nil, firstLive)
            }
        }
        return (items, nil, firstLive)
    }

    /// Demuxer and protocol options by scheme: each is one the scheme's demuxer takes, since an
    /// option nothing takes is an error.
    static func options(for configuration: Configuration) -> [String: String] {
        if let listen = configuration.listen { return listen.options }
        let scheme = configuration.location.prefix { $0 != ":" }.lowercased()
        switch scheme {
        case "rtsp", "rtsps": return ["rtsp_transport": configuration.rtspTransport]
        default: return [:]
        }
    }

    /// `rtsp://user:secret@camera/stream` → `rtsp://user@camera/stream`: a password never reaches a message.
    static func displayName(_ location: String) -> String {
        guard let schemeEnd = location.range(of: "://") else { return location }
        let rest = location[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@"),
              let colon = rest[..<at].firstIndex(of: ":") else { return location }
        return String(location[..<colon]) + String(rest[at...])
    }

    /// Interrupts libavformat's blocking calls when the source is stopped, or when a call has waited
    /// longer than the stall timeout.
    fileprivate final class Watchdog: Sendable {
        let stallMicroseconds: Int64
        private let stopped = Atomic<Bool>(false)
        /// When the current call gives up, on the monotonic clock; `Int64.max` while not waiting.
        private let deadline = Atomic<Int64>(.max)
        private let stalled = Atomic<Bool>(false)

        init(stallMicroseconds: Int64) {
            self.stallMicroseconds = stallMicroseconds
        }

        func stop() { stopped.store(true, ordering: .releasing) }

        /// A blocking call starts: it has the stall timeout to deliver something.
        func arm() {
            stalled.store(false, ordering: .relaxed)
            deadline.store(MonotonicClock.nowMicroseconds() + stallMicroseconds, ordering: .releasing)
        }

        func disarm() { deadline.store(.max, ordering: .releasing) }

        /// Whether the last call was given up for the stall timeout.
        var hasStalled: Bool { stalled.load(ordering: .acquiring) }

        /// `stop()` is the one way the source's thread is stopped, and it stops the watchdog first.
        var isStopped: Bool { stopped.load(ordering: .acquiring) }

        /// Asked by libavformat many times a packet: an atomic or two, and the clock only while a call is armed.
        fileprivate func shouldInterrupt() -> Bool {
            if isStopped { return true }
            let deadline = deadline.load(ordering: .acquiring)
            guard deadline != .max, MonotonicClock.nowMicroseconds() > deadline else { return false }
            stalled.store(true, ordering: .releasing)
            return true
        }

        /// For `AVFormatContext.interrupt_callback`; the watchdog outlives every context it is given to.
        var callback: AVIOInterruptCB {
            AVIOInterruptCB(
                callback: { opaque in
                    guard let opaque else { return 0 }
                    return Unmanaged<Watchdog>.fromOpaque(opaque).takeUnretainedValue().shouldInterrupt() ? 1 : 0
                },
                opaque: Unmanaged.passUnretained(self).toOpaque())
        }
    }
}

extension MediaSource {
    /// The reading loop: packets to decoders, frames onto the timeline and the monotonic clock, paced.
    fileprivate final class Reader: @unchecked Sendable {
        private var opened: Opened?
        private let configuration: Configuration
        private let name: String
        private let watchdog: Watchdog
        private var timeline = SourceTimeline(jumpForwardMicroseconds: MediaSource.jumpForwardMicroseconds,
                                              jumpBackMicroseconds: MediaSource.jumpBackMicroseconds)
        /// Each copied track's decode times, as a coarse sender's stamps are made fit to write; by track.
        private var copiedTiming: [Int: CopiedSampleTiming] = [:]
        /// The monotonic time of timeline 0.
        private var anchorMicroseconds: Int64?
        /// When a network input's first sample was live, measured while reading ahead (a copied camera's
        /// read-ahead to its second keyframe): timeline 0 is set from it, so that the stream does not run
        /// the read-ahead's length behind the camera, each frame waiting that long to be handed on.
        private var firstLiveMicroseconds: Int64?
        /// Streams past `durationMicroseconds`, by position.
        private var streamsAtEnd: Set<Int> = []
        private let wantedStreamCount: Int
        /// `configuration.isURL`, read for every frame: found once.
        private let isURL: Bool

        init(opened: Opened, configuration: Configuration, name: String, watchdog: Watchdog) {
            self.opened = opened
            self.configuration = configuration
            isURL = configuration.isURL
            self.name = name
            self.watchdog = watchdog
            firstLiveMicroseconds = isURL ? opened.pendingLiveMicroseconds : nil
            wantedStreamCount = opened.demuxer.streams.filter { $0.kind == .video ? configuration.video : configuration.audio }.count
        }

        private enum Outcome: Equatable {
            case stopped, ended
            /// `durationMicroseconds` of stream time were handed on.
            case finished
            case failed(CaptureError)
        }

        func run(on thread: CaptureThread) {
            while let current = opened {
                switch read(current, on: thread) {
                case .stopped:
                    return
                case .finished:
                    thread.emit(.ended)
                    return
                case .failed(let error):
                    guard reconnect(after: error, on: thread) else { return }
                case .ended:
                    if configuration.listen != nil, !configuration.reconnect {
                        // A publisher that leaves ends its stream.
                        thread.emit(.ended)
                        return
                    }
                    if isURL {
                        // A camera or a server does not end: that it did is a failure to be told, so a
                        // service manager restarts the stream.
                        let ended = CaptureError(device: name, message: "the input ended: the camera or server "
                            + "closed the stream")
                        guard reconnect(after: ended, on: thread) else { return }
                        continue
                    }
                    guard configuration.loop else {
                        thread.emit(.ended)
                        return
                    }
                    opened = nil
                    do {
                        opened = try MediaSource.open(configuration, name: name, watchdog: watchdog)
                    } catch {
                        thread.emit(.failed(error))
                        return
                    }
                    timeline.startAgain()
                    copiedTiming = [:]
                }
            }
        }

        /// Without `reconnect`, `.failed` and false. With it, `.lost`, the input opened again after a wait
        /// that doubles from half a second up to `longestRetryMicroseconds` until it answers or the source
        /// is stopped, `.restored`, and the timeline goes on from the latest frame, on the clock from now.
        private func reconnect(after failure: CaptureError, on thread: CaptureThread) -> Bool {
            opened = nil
            let (configuration, name, watchdog) = (configuration, name, watchdog)
            opened = thread.recover(from: failure, reconnect: configuration.reconnect,
                                    longestIntervalMicroseconds: MediaSource.longestRetryMicroseconds) {
                () throws(CaptureError) in try MediaSource.open(configuration, name: name, watchdog: watchdog)
            }
            guard opened != nil else { return false }
            timeline.startAgain()
            copiedTiming = [:]
            anchorMicroseconds = nil
            return true
        }

        private func read(_ opened: Opened, on thread: CaptureThread) -> Outcome {
            let streams = opened.demuxer.streams
            while !thread.isStopRequested {
                var item: CopySource.Item?
                watchdog.arm()
                do {
                    if !opened.pending.isEmpty {
                        item = opened.pending.removeFirst()
                    } else if let copier = opened.copier {
                        item = try copier.next()
                    } else {
                        item = try opened.demuxer.nextPacket().map(CopySource.Item.packet)
                    }
                } catch {
                    watchdog.disarm()
                    if watchdog.isStopped { return .stopped }
                    if watchdog.hasStalled {
                        return .failed(CaptureError(device: name, message: String(
                            format: "nothing received for %g s (--stall-timeout)", configuration.stallTimeoutSeconds)))
                    }
                    let detail = (error as? MediaInputError)?.detail ?? "\(error)"
                    // A publisher that disconnects ends its stream with a read error, not an end of file.
                    guard configuration.listen != nil else {
                        return .failed(CaptureError(device: name, message: "reading failed: \(detail)"))
                    }
                    item = nil
                }
                watchdog.disarm()
                switch item {
                case nil:
                    for (position, decoder) in opened.decoders.enumerated() {
                        guard let decoder, isWanted(streams[position]) else { continue }
                        try? decoder.sendEndOfStream()
                        if let outcome = drain(decoder, stream: streams[position], position: position, on: thread) {
                            return outcome
                        }
                    }
                    return .ended
                case .sample(let sample):
                    if let outcome = hand(copied: sample, track: opened.copiedTracks[sample.track], on: thread) {
                        return outcome
                    }
                case .packet(let packet):
                    let position = packet.streamIndex
                    guard isWanted(streams[position]), let decoder = opened.decoders[position] else { continue }
                    do {
                        try decoder.send(packet)
                    } catch CodecError.corruptPacket {
                        continue
                    } catch {
                        return .failed(CaptureError(device: name, message: "\(error)"))
                    }
                    if let outcome = drain(decoder, stream: streams[position], position: position, on: thread) {
                        return outcome
                    }
                }
            }
            return .stopped
        }

        private func isWanted(_ stream: InputStreamInfo) -> Bool {
            stream.kind == .video ? configuration.video : configuration.audio
        }

        /// Places a copied sample on the timeline and the monotonic clock, paced; nil to go on reading.
        private func hand(copied source: EncodedSample, track: TrackDescription, on thread: CaptureThread) -> Outcome? {
            let timescale = track.timescale
            var timing = copiedTiming[source.track] ?? CopiedSampleTiming(timescale: timescale, isVideo: track.isVideo)
            let placedSample = timing.place(source)
            copiedTiming[source.track] = timing
            guard let sample = placedSample else { return nil }
            let input = timescale.convert(sample.decodeTime, to: .microseconds)
            let duration = sample.durationHint.map { timescale.convert($0, to: .microseconds) } ?? 0
            let placed = timeline.place(inputMicroseconds: input, durationMicroseconds: duration, stream: sample.track)
            if let outcome = reachesEnd(placed, stream: sample.track) { return outcome == .finished ? outcome : nil }
            _ = clockTime(of: placed, on: thread)
            guard let anchor = anchorMicroseconds else { return nil }
            // One offset for as long as the shift and the anchor hold: the sample's own ticks stay exact.
            var copied = sample
            copied.decodeTime += Timescale.microseconds.convert(anchor + placed - input, to: timescale)
            guard !thread.isStopRequested, thread.emit(.copied(copied)) else { return .stopped }
            return nil
        }

        /// With a duration: `.finished` once every stream reached it, `.ended` (skip this one) while some
        /// have not; nil before the end.
        private func reachesEnd(_ placed: Int64, stream position: Int) -> Outcome? {
            guard let end = configuration.durationMicroseconds, placed >= end else { return nil }
            // Every stream plays to the end: the one that gets there first waits for the others.
            streamsAtEnd.insert(position)
            return streamsAtEnd.count == wantedStreamCount ? .finished : .ended
        }

        /// Hands on every frame the decoder has ready; nil to go on reading.
        private func drain(_ decoder: Decoder, stream: InputStreamInfo, position: Int, on thread: CaptureThread) -> Outcome? {
            while true {
                let result: Decoder.DecodeResult
                do {
                    result = try decoder.receive()
                } catch CodecError.corruptPacket {
                    // A damaged picture or block is skipped, as a player would; the next one decodes.
                    continue
                } catch {
                    return nil
                }
                guard case .frame(let frame) = result else { return nil }
                guard let pts = frame.pts else { continue }
                let input = stream.timeBase.microseconds(pts)
                let placed = timeline.place(inputMicroseconds: input, durationMicroseconds: duration(of: frame, stream),
                                            stream: position)
                if let outcome = reachesEnd(placed, stream: position) {
                    if outcome == .finished { return outcome }
                    continue
                }
                frame.pts = clockTime(of: placed, on: thread)
                frame.timeBase = MonotonicClock.timeBase
                guard !thread.isStopRequested, thread.emit(stream.kind == .video ? .video(frame) : .audio(frame))
                else { return .stopped }
            }
        }

        /// How long a frame lasts, in microseconds: an audio block's samples, a picture's duration.
        private func duration(of frame: Frame, _ stream: InputStreamInfo) -> Int64 {
            if stream.kind == .audio {
                let rate = Int64(max(1, frame.pointer.pointee.sample_rate))
                return Int64(frame.sampleCount) * 1_000_000 / rate
            }
            let ticks = frame.pointer.pointee.pkt_duration
            if ticks > 0 { return stream.timeBase.microseconds(ticks) }
            return stream.pictureTicks(in: Rational(1, 1_000_000)) ?? 33_333
        }

        /// The monotonic time of timeline time `placed`, on one anchor for the whole run (until a
        /// reconnection), so that copied samples keep the source's own spacing; paced sources wait for it.
        private func clockTime(of placed: Int64, on thread: CaptureThread) -> Int64 {
            let now = MonotonicClock.nowMicroseconds()
            let anchor = anchorMicroseconds ?? ((firstLiveMicroseconds ?? now) - placed)
            anchorMicroseconds = anchor
            let time = anchor + placed
            if isURL, time - now > MediaSource.longestWaitMicroseconds { return time }
            if isURL {
                // A network input arrives at its pace, its sound often some tens of milliseconds ahead of its
                // picture: only a burst (a whole segment of an HLS input, a stall caught up) waits.
                _ = thread.wait(until: time - MediaSource.networkPaceLeadMicroseconds)
            } else if configuration.realtime {
                // Up to a frame or two early is on time: a file's pictures and sound go on without a sleep
                // for each.
                _ = thread.wait(until: time - MediaSource.paceLeadMicroseconds)
            }
            return time
        }
    }
}
