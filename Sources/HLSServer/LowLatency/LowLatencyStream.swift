import Dispatch
import Foundation
import HLSBase
import HLSKit

/// The parts and LL-HLS playlists of a live stream, kept in memory by the process that captures it,
/// and the requests waiting for them (RFC 8216bis 6.2.5.2): a blocking playlist reload is answered the
/// instant the engine hands over the part it waits for, and a GET of the hinted part the instant the
/// part's first chunk exists, its body growing chunk by chunk until the part is whole. Never by polling.
///
/// The engine calls `addChunk`, `addPart` and `update`; the server calls `playlistReply` and `partReply`.
public final class LowLatencyStream: Sendable {
    /// One rendition: its directory in the stream (`""`, `720p`, `audio`) and its regular playlist.
    public struct Rendition: Sendable {
        public var directory: String
        public var base: MediaPlaylist

        public init(directory: String, base: MediaPlaylist) {
            self.directory = directory
            self.base = base
        }
    }

    private struct RenditionState {
        var directory: String
        var playlist: LowLatencyPlaylist
        var partBytes: [LowLatencyPlaylist.Position: [UInt8]] = [:]
        /// Parts not whole yet, as the bytes of their chunks so far: every request for one reads it.
        var growingParts: [LowLatencyPlaylist.Position: GrowingBody] = [:]
    }

    private enum Awaited {
        case playlist(sequenceNumber: Int, part: Int?, skip: LowLatencyPlaylist.Skip, gzip: Bool)
        case part(LowLatencyPlaylist.Position)
    }

    private struct Waiter {
        var rendition: Int
        var awaited: Awaited
        var respond: @Sendable (HTTPResponse) -> Void
    }

    /// An answer as the state gives it under the lock: a response, or a playlist to render and gzip
    /// once the lock is released, so requests and the engine do not wait on that work.
    private enum Answer {
        case response(HTTPResponse)
        case playlist(PlaylistForm)

        var response: HTTPResponse {
            switch self {
            case .response(let response): response
            case .playlist(let form): form.response
            }
        }
    }

    /// A rendition's playlist as it stood, in the form a request asked for.
    private struct PlaylistForm {
        /// What makes two forms of one state render the same bytes.
        struct Key: Hashable {
            var rendition: Int
            var skip: LowLatencyPlaylist.Skip
            var blocking: Bool
            var gzip: Bool
        }

        var key: Key
        /// The state's `version` it was taken from.
        var version: Int
        var playlist: LowLatencyPlaylist
        var reports: [MediaPlaylist.RenditionReport]

        var response: HTTPResponse {
            let text = playlist.playlist(skip: key.skip, renditionReports: reports).render()
            // A response to a blocking request stays right for whoever asks the same URL later: a cache
            // may keep it for about a part; the plain URL changes with every part.
            let caching = key.blocking ? "public, max-age=1" : "no-cache"
            return ServerHeaders.playlist(Array(text.utf8), cacheControl: caching, gzip: key.gzip)
        }
    }

    private struct State {
        var renditions: [RenditionState]
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
        /// Counts the changes the engine made: playlists rendered from one version are the same.
        var version = 0
    }

    public let metrics: ServerMetrics
    private let state: Locked<State>
    /// The last playlist answer made in each form, and the version of the state it was made from.
    private let renderedPlaylists = Locked<[PlaylistForm.Key: (version: Int, response: HTTPResponse)]>([:])
    /// Times out blocking requests.
    private let clock: any Scheduler

    /// A stream whose renditions are not known yet: until `begin`, requests go to the files on disk.
    public init(metrics: ServerMetrics, clock: any Scheduler = SystemClock()) {
        self.metrics = metrics
        self.clock = clock
        state = Locked(State(renditions: []))
    }

    /// The stream's renditions, in the order the engine numbers them, with their first playlists, and
    /// the PART-TARGET they all declare.
    public func begin(_ renditions: [Rendition], partTargetSeconds: Double) {
        wake { state in
            state.renditions = renditions.map {
                RenditionState(directory: $0.directory,
                               playlist: LowLatencyPlaylist(base: $0.base, partTargetSeconds: partTargetSeconds))
            }
        }
    }

    // MARK: From the engine

    /// The next bytes of a part not whole yet (a chunk of its frames): requests for the part get them now.
    public func addChunk(rendition: Int, position: LowLatencyPlaylist.Position, bytes: [UInt8]) {
        wake { state in
            guard state.renditions[rendition].partBytes[position] == nil,
                  !state.renditions[rendition].playlist.isEnded else { return }
            // Parts come whole in order: one still growing before this one will never be whole.
            for (earlier, body) in state.renditions[rendition].growingParts where earlier < position {
                body.abandon()
                state.renditions[rendition].growingParts[earlier] = nil
            }
            let body = state.renditions[rendition].growingParts[position] ?? GrowingBody()
            body.append(bytes)
            state.renditions[rendition].growingParts[position] = body
        }
    }

    /// A part of the segment being written, whole, with the bytes clients fetch: those of its chunks, if
    /// it had any, which the requests reading them get to the end.
    public func addPart(rendition: Int, position: LowLatencyPlaylist.Position, durationSeconds: Double,
                        independent: Bool, endsSegment: Bool = false, followsDiscontinuity: Bool = false,
                        bytes: [UInt8]) {
        wake { state in
            state.renditions[rendition].playlist.addPart(position, durationSeconds: durationSeconds,
                                                         independent: independent, endsSegment: endsSegment,
                                                         followsDiscontinuity: followsDiscontinuity)
            state.renditions[rendition].partBytes[position] = bytes
            if let body = state.renditions[rendition].growingParts.removeValue(forKey: position) {
                // The chunks were the part's bytes so far; a part that differs would be taken for another.
                if body.count == bytes.count { body.finish() } else { body.abandon() }
            }
        }
        metrics.countPart()
    }

    /// A rendition's regular playlist after a segment was stored, or the stream ended.
    public func update(rendition: Int, base: MediaPlaylist) {
        wake { state in
            state.renditions[rendition].playlist.update(base: base)
            // Bytes of parts no longer listed are dropped: a segment's file has them all.
            let oldest = base.mediaSequence + base.segments.count - Self.keptSegments
            state.renditions[rendition].partBytes = state.renditions[rendition].partBytes.filter {
                $0.key.sequenceNumber >= oldest
            }
            // A stream that ended leaves no part to finish: its readers must not take what they got for one.
            if base.endList {
                for body in state.renditions[rendition].growingParts.values { body.abandon() }
                state.renditions[rendition].growingParts = [:]
            }
        }
    }


    /// Parts are kept for the segments whose parts a playlist lists (three target durations) and one more.
    static let keptSegments = 5

    private func wake(_ change: (inout State) -> Void) {
        let ready: [(answer: Answer, waiters: [Waiter])] = state.withLock { state in
            change(&state)
            state.version += 1
            // Waiters for the same playlist get the same answer, rendered once (after the lock).
            var shared: [String: (answer: Answer?, waiters: [Waiter])] = [:]
            for (id, waiter) in state.waiters {
                let key = Self.sharingKey(waiter)
                if shared[key] == nil {
                    shared[key] = (Self.answer(waiter.awaited, rendition: waiter.rendition, in: state), [])
                }
                guard shared[key]?.answer != nil else { continue }
                shared[key]?.waiters.append(waiter)
                state.waiters[id] = nil
            }
            return shared.values.compactMap { entry in entry.answer.map { (answer: $0, waiters: entry.waiters) } }
        }
        for (answer, waiters) in ready {
            let response = self.response(for: answer)
            for waiter in waiters {
                metrics.endWait()
                waiter.respond(response)
            }
        }
    }

    /// Waiters whose answers are the same once they can be given: a playlist's form, or a part.
    private static func sharingKey(_ waiter: Waiter) -> String {
        switch waiter.awaited {
        case .playlist(let sequenceNumber, let part, let skip, let gzip):
            "\(waiter.rendition) \(sequenceNumber) \(part ?? -1) \(skip) \(gzip)"
        case .part(let position):
            "\(waiter.rendition) part \(position.sequenceNumber) \(position.part)"
        }
    }

    // MARK: From the server

    /// The rendition whose playlist is at `path` (relative to the stream directory), if this stream has it.
    public func rendition(playlistPath path: String) -> Int? {
        state.withLock { state in
            state.renditions.firstIndex { Self.join($0.directory, StreamLayout.playlistName) == path }
        }
    }

    /// The rendition and part a part path names, if this stream has that rendition.
    public func part(path: String) -> (rendition: Int, position: LowLatencyPlaylist.Position)? {
        state.withLock { state in
            for (index, rendition) in state.renditions.enumerated() {
                let prefix = rendition.directory.isEmpty ? "" : rendition.directory + "/"
                guard path.hasPrefix(prefix),
                      let position = LowLatencyPlaylist.position(ofPartURI: path.dropFirst(prefix.count)) else { continue }
                return (index, position)
            }
            return nil
        }
    }

    /// The LL-HLS playlist, at once or once `_HLS_msn`/`_HLS_part` are in it (at most three target
    /// durations, then 503); 400 for the requests RFC 8216bis 6.2.5.2 refuses.
    public func playlistReply(rendition: Int, query: [String: String], acceptsGzip: Bool) -> HTTPReply {
        let sequenceNumber: Int?
        let part: Int?
        let skip: LowLatencyPlaylist.Skip
        do throws(BadRequest) {
            sequenceNumber = try Self.number(query["_HLS_msn"], name: "_HLS_msn")
            part = try Self.number(query["_HLS_part"], name: "_HLS_part")
            switch query["_HLS_skip"] {
            case nil: skip = .none
            case "YES": skip = .segments
            case "v2": skip = .segmentsAndDateRanges
            case let other?: throw BadRequest(message: "_HLS_skip takes YES or v2, not \(other)")
            }
        } catch {
            return .now(.text(400, error.message, headers: ServerHeaders.noStore))
        }
        let awaited = Awaited.playlist(sequenceNumber: sequenceNumber ?? Int.min, part: part, skip: skip, gzip: acceptsGzip)
        let immediate: Answer? = state.withLock { state in
            do throws(LowLatencyPlaylist.RequestError) {
                try state.renditions[rendition].playlist.check(sequenceNumber: sequenceNumber, part: part)
            } catch {
                switch error {
                case .partWithoutSequenceNumber:
                    return .response(.text(400, "_HLS_part needs _HLS_msn", headers: ServerHeaders.noStore))
                case .tooFarAhead(let last):
                    return .response(.text(400, "_HLS_msn is more than two segments past the last one (\(last))",
                                           headers: ServerHeaders.noStore))
                }
            }
            return Self.answer(awaited, rendition: rendition, in: state)
        }
        if let immediate { return .now(response(for: immediate)) }
        return wait(for: awaited, rendition: rendition)
    }

    /// A part's bytes; the part the playlist hints at (and the rest of the open segment) is held until
    /// its first chunk exists, then sent as it grows.
    public func partReply(rendition: Int, position: LowLatencyPlaylist.Position) -> HTTPReply {
        let (immediate, canWait): (Answer?, Bool) = state.withLock { state in
            if let answer = Self.answer(.part(position), rendition: rendition, in: state) { return (answer, false) }
            // The hinted part, and any later part of the segment being written or of the next.
            let next = state.renditions[rendition].playlist.nextPart
            return (nil, position >= next && position.sequenceNumber <= next.sequenceNumber + 1)
        }
        if let immediate { return .now(response(for: immediate)) }
        guard canWait else { return .now(.text(404, "no such part", headers: ServerHeaders.noStore)) }
        return wait(for: .part(position), rendition: rendition)
    }

    private func wait(for awaited: Awaited, rendition: Int) -> HTTPReply {
        let timeout = state.withLock { state in
            // RFC 8216bis 6.2.5.2: three target durations, then the server gives up.
            Double(state.renditions[rendition].playlist.base.targetDurationSeconds) * 3
        }
        return .later { [self] respond in
            let (answer, id): (Answer?, Int) = state.withLock { state in
                // The part may have come between the first look and now.
                if let answer = Self.answer(awaited, rendition: rendition, in: state) { return (answer, -1) }
                let id = state.nextWaiter
                state.nextWaiter += 1
                state.waiters[id] = Waiter(rendition: rendition, awaited: awaited, respond: respond)
                return (nil, id)
            }
            if let answer { return respond(response(for: answer)) }
            metrics.beginWait()
            clock.schedule(afterSeconds: timeout, on: .global()) { [self] in
                let expired = state.withLock { $0.waiters.removeValue(forKey: id) }
                guard let expired else { return }
                metrics.endWait()
                expired.respond(.text(503, "not available within three target durations",
                                      headers: ServerHeaders.noStore))
            }
        }
    }

    /// The response an answer gives. A playlist is rendered and gzipped once per version of the stream
    /// and form: the players that reload it between two parts get the bytes made for the first.
    private func response(for answer: Answer) -> HTTPResponse {
        guard case .playlist(let form) = answer else { return answer.response }
        if let kept = renderedPlaylists.withLock({ $0[form.key] }), kept.version == form.version { return kept.response }
        let response = form.response
        renderedPlaylists.withLock { kept in
            // Rendered outside the lock: a later version may be kept already.
            if kept[form.key].map({ $0.version < form.version }) ?? true { kept[form.key] = (form.version, response) }
        }
        return response
    }

    /// The answer to an awaited request if it can be given now.
    private static func answer(_ awaited: Awaited, rendition index: Int, in state: State) -> Answer? {
        let rendition = state.renditions[index]
        switch awaited {
        case .part(let position):
            let headers = ServerHeaders.media(contentType: StreamFileKind.segmentContentType)
            if let bytes = rendition.partBytes[position] {
                return .response(HTTPResponse(status: 200, headers: headers, body: .bytes(bytes)))
            }
            if let body = rendition.growingParts[position] {
                return .response(HTTPResponse(status: 200, headers: headers, body: .growing(body)))
            }
            let playlist = rendition.playlist
            if playlist.isEnded || position.sequenceNumber < playlist.openSequenceNumber {
                return .response(.text(404, "no such part", headers: ServerHeaders.noStore))
            }
            return nil
        case .playlist(let sequenceNumber, let part, let skip, let gzip):
            let blocking = sequenceNumber != Int.min
            if blocking, !rendition.playlist.satisfies(sequenceNumber: sequenceNumber, part: part) { return nil }
            let reports = state.renditions.indices.filter { $0 != index }.map { other in
                let playlist = state.renditions[other].playlist
                let last = playlist.lastPart
                return MediaPlaylist.RenditionReport(
                    uri: relativePath(from: rendition.directory, to: join(state.renditions[other].directory,
                                                                           StreamLayout.playlistName)),
                    lastSequenceNumber: last?.sequenceNumber ?? playlist.lastSequenceNumber, lastPart: last?.part)
            }
            return .playlist(PlaylistForm(key: .init(rendition: index, skip: skip, blocking: blocking, gzip: gzip),
                                          version: state.version, playlist: rendition.playlist, reports: reports))
        }
    }

    struct BadRequest: Error {
        var message: String
    }

    private static func number(_ text: String?, name: String) throws(BadRequest) -> Int? {
        guard let text else { return nil }
        guard let value = Int(text), value >= 0, text.allSatisfy(\.isASCII) else {
            throw BadRequest(message: "\(name) takes a whole number, not \(text)")
        }
        return value
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.isEmpty ? name : directory + "/" + name
    }

    /// A URI from a playlist in `directory` to `path` (both relative to the stream directory).
    static func relativePath(from directory: String, to path: String) -> String {
        let depth = directory.split(separator: "/").count
        return String(repeating: "../", count: depth) + path
    }
}
