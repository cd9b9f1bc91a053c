import Foundation
import HLSBase
import HLSKit

/// Uploads a stream of several renditions (a ladder, several audio tracks): one `StreamPublisher` per
/// rendition directory, each with its own playlist, segments, retries and deletions, and the master
/// playlist last, once the origin holds every rendition's first playlist. A stream of one rendition
/// at the top of the directory is one publisher that also carries the master playlist.
///
/// Unchecked sendable: `masterWaiting` is read and written under `lock`; the publishers are themselves
/// thread-safe and never replaced.
public final class LayoutPublisher: @unchecked Sendable {
    /// By rendition directory ("" for the top), longest first so paths find their own.
    private let publishers: [(directory: String, publisher: StreamPublisher)]
    /// Uploads the master playlist (and whatever else lies at the top).
    private let top: StreamPublisher
    /// Uploads the encryption keys to `keys/` at the origin (`--publish-keys`); nil keeps them home.
    private let keys: StreamPublisher?
    private let lock = NSLock()
    private var masterWaiting = false

    /// `makePublisher` gives the publisher of one directory, given a store rooted there. With a
    /// `keyStore`, keys handed over with `addKey` go to `keys/` at the origin before any playlist there
    /// lists a segment encrypted with them.
    public init(layout: StreamLayout, store: any StreamStore, keyStore: (any StreamStore)? = nil,
                makePublisher: (_ store: any StreamStore, _ directory: String) throws(StoreError) -> StreamPublisher)
        throws(StoreError) {
        var publishers: [(String, StreamPublisher)] = []
        for directory in layout.renditions.map(\.directory) {
            let own = store.below(directory)
            publishers.append((directory, try makePublisher(own, directory)))
        }
        if let atTop = publishers.first(where: { $0.0.isEmpty })?.1 {
            top = atTop
        } else {
            top = try makePublisher(store, "")
        }
        self.publishers = publishers.sorted { $0.0.count > $1.0.count }
        keys = try keyStore.map { store throws(StoreError) in try makePublisher(store, SegmentEncryption.serverFolder) }
        let everyPublisher = self.publishers.map(\.publisher) + (publishers.contains { $0.1 === top } ? [] : [top])
        keys?.onUploaded = { name in
            for publisher in everyPublisher { publisher.keyArrived(named: name) }
        }
    }

    /// Uploads a new key from the key store; until it is up, no playlist at the origin names it.
    public func addKey(_ name: String) {
        guard let keys else { return }
        for publisher in publishers.map(\.publisher) + [top] { publisher.awaitKey(named: name) }
        keys.addFile(name)
    }

    private func route(_ path: String) -> (StreamPublisher, String) {
        for (directory, publisher) in publishers where directory.isEmpty || path.hasPrefix(directory + "/") {
            return (publisher, directory.isEmpty ? path : String(path.dropFirst(directory.count + 1)))
        }
        return (top, path)
    }

    /// Uploads a stored file that is not a segment, by its path below the stream directory.
    public func addFile(_ path: String) {
        if path == StreamLayout.masterPlaylistName, publishers.count > 1 || publishers.first?.directory != "" {
            lock.withLock { masterWaiting = true }
            offerMaster()
            return
        }
        let (publisher, relative) = route(path)
        publisher.addFile(relative)
    }

    /// Uploads a stored segment; returns the segments dropped because the backlog was full.
    @discardableResult
    public func addSegment(_ path: String, durationSeconds: Double) -> [String] {
        let (publisher, relative) = route(path)
        return publisher.addSegment(relative, durationSeconds: durationSeconds)
    }

    /// Hands every rendition its media playlist, by path (`720p/playlist.m3u8`).
    public func updatePlaylists(_ playlists: [(path: String, playlist: MediaPlaylist)]) {
        for (path, playlist) in playlists where path.hasSuffix(StreamLayout.playlistName) {
            let (publisher, relative) = route(path)
            if relative == StreamLayout.playlistName { publisher.updatePlaylist(playlist) }
        }
        offerMaster()
    }

    public func removeFile(_ path: String, afterSeconds retentionSeconds: Double) {
        let (publisher, relative) = route(path)
        publisher.removeFile(relative, afterSeconds: retentionSeconds)
    }

    /// The master playlist goes up once every rendition's playlist is at the origin, so a player that
    /// reads it finds every playlist it names.
    private func offerMaster() {
        let ready = publishers.allSatisfy { $0.publisher.originHoldsPlaylist }
        let send = lock.withLock {
            guard masterWaiting, ready else { return false }
            masterWaiting = false
            return true
        }
        if send { top.addFile(StreamLayout.masterPlaylistName) }
    }

    public var status: PublishStatus {
        Self.sum(publishers.map(\.publisher.status) + (publishers.contains { $0.publisher === top } ? [] : [top.status])
                 + (keys.map { [$0.status] } ?? []))
    }

    /// Waits for every rendition's uploads and final playlist, then the master playlist's.
    public func finish() -> PublishReport {
        let work = publishers.map(\.publisher)
        let reports = concurrentMap(work.count) { work[$0].finish() }
        var all = zip(publishers, reports).map { entry, report in
            Self.prefixed(report, directory: entry.directory)
        }
        let masterWasWaiting = lock.withLock { masterWaiting }
        if masterWasWaiting {
            // Every rendition is finished: the master goes up whatever happened to them.
            top.addFile(StreamLayout.masterPlaylistName)
        }
        if !publishers.contains(where: { $0.publisher === top }) { all.append(top.finish()) }
        if let keys { all.append(Self.prefixed(keys.finish(), directory: SegmentEncryption.serverFolder)) }
        return Self.merged(all)
    }

    private static func prefixed(_ report: PublishReport, directory: String) -> PublishReport {
        guard !directory.isEmpty else { return report }
        var report = report
        report.undelivered = report.undelivered.map { .init(path: directory + "/" + $0.path, reason: $0.reason) }
        report.removalsNotDone = report.removalsNotDone.map { .init(path: directory + "/" + $0.path, reason: $0.reason) }
        return report
    }

    private static func sum(_ all: [PublishStatus]) -> PublishStatus {
        PublishStatus(uploadedCount: all.reduce(0) { $0 + $1.uploadedCount },
                      queuedCount: all.reduce(0) { $0 + $1.queuedCount },
                      failedCount: all.reduce(0) { $0 + $1.failedCount },
                      uploadedBytes: all.reduce(0) { $0 + $1.uploadedBytes },
                      queuedMediaSeconds: all.map(\.queuedMediaSeconds).max() ?? 0,
                      retryCount: all.reduce(0) { $0 + $1.retryCount },
                      bytesPerSecond: all.reduce(0) { $0 + $1.bytesPerSecond })
    }

    private static func merged(_ reports: [PublishReport]) -> PublishReport {
        var latency = PublishReport.ListingLatency()
        var putLatency = PublishReport.ListingLatency()
        for report in reports {
            for sample in report.listingLatency.samplesSeconds { latency.record(sample) }
            for sample in report.putLatency.samplesSeconds { putLatency.record(sample) }
        }
        return PublishReport(status: sum(reports.map(\.status)), undelivered: reports.flatMap(\.undelivered),
                             removalsNotDone: reports.flatMap(\.removalsNotDone),
                             finalPlaylistDelivered: reports.allSatisfy(\.finalPlaylistDelivered),
                             listingLatency: latency, putLatency: putLatency)
    }
}
