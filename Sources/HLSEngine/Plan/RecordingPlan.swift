import Foundation
import HLSKit
import HLSMedia
import HLSOutput

/// The recording beside a live stream: its encoding, and where its files go, one file or split by time
/// with retention. Refuses what would make two files collide.
public struct RecordingPlan: Sendable, Equatable {
    /// The path as given, placeholders and all.
    public var path: String
    public var size: OutputSize?
    public var codec: VideoCodec
    public var bitrate: Int?
    /// A size, codec or rate of its own was asked for, so even a copied source is encoded for it.
    public var encodes: Bool
    /// The path's placeholders; nil for a plain path without a period.
    public var pattern: RecordingPattern?
    /// A new file at each boundary of this period; nil records one file.
    public var period: RecordingPeriod?
    /// Where boundaries and names are reckoned.
    public var timeZone: TimeZone
    public var retention: RecordingRetention
    /// Split by time: the files' names below the folder before the first placeholder.
    var splitName: RecordingPattern?

    /// Where the recording goes as the stream starts.
    public struct Layout: Sendable {
        /// The folder the recording's store is rooted at.
        public var directory: String
        /// The file's path in it (split by time: the first placeholder's folder and below).
        public var name: String
        public var split: LiveConfiguration.Recording.Split?
    }

    /// nil without a recording; its options without one are refused.
    init?(_ request: LiveRequest) throws(PlanError) {
        guard let path = request.record else {
            if request.recordSize != nil { throw .needsRecording("record-size") }
            if request.recordCodec != nil { throw .needsRecording("record-codec") }
            if request.recordBitrate != nil { throw .needsRecording("record-bitrate") }
            if request.recordEvery != nil { throw .needsRecording("record-every") }
            if request.recordLocalTime { throw .needsRecording("record-local-time") }
            if !request.retention.isEmpty { throw .retentionWithoutSplit }
            return nil
        }
        self.path = path
        size = request.recordSize
        codec = request.recordCodec ?? .hevc
        bitrate = request.recordBitrate
        encodes = request.recordSize != nil || request.recordCodec != nil || request.recordBitrate != nil
        let pattern: RecordingPattern
        do {
            pattern = try RecordingPattern(path)
        } catch {
            throw .recordingPattern(path: path, error)
        }
        timeZone = request.recordLocalTime ? TimeZone.current : TimeZone(identifier: "UTC")!
        retention = request.retention
        if let every = request.recordEvery {
            let period: RecordingPeriod
            do {
                period = try RecordingPeriod(parsing: every)
            } catch {
                throw .recordingPeriod(error)
            }
            guard let finest = pattern.finestSeconds else { throw .recordingNameWithoutTime(path: path) }
            guard finest <= period.seconds else {
                throw .recordingNamesCollide(path: path, finestSeconds: finest, periodSeconds: period.seconds)
            }
            self.pattern = pattern
            self.period = period
            do {
                splitName = try RecordingPattern(pattern.fixedFolder.rest)
            } catch {
                throw .recordingPattern(path: path, error)
            }
        } else {
            self.pattern = pattern.hasPlaceholder ? pattern : nil
            period = nil
        }
        if !retention.isEmpty {
            // Retention deletes whole files, never the one being written.
            guard let period else { throw .retentionWithoutSplit }
            if let keep = retention.keepSeconds, keep < period.seconds {
                throw .keepShorterThanPeriod(keepSeconds: keep, periodSeconds: period.seconds)
            }
        }
    }

    /// Where the files go for a stream that starts at `start`: split by time, files below the folder
    /// before the first placeholder, named as they start; with placeholders and no period, one file named
    /// once, as the stream starts; else the path as it is.
    public func layout(startingAt start: Date) -> Layout {
        guard let pattern else {
            let (directory, name) = Self.split(path)
            return Layout(directory: directory, name: name)
        }
        guard let period, let splitName else {
            let (directory, name) = Self.split(pattern.expand(start, timeZone: timeZone))
            return Layout(directory: directory, name: name)
        }
        let (folder, rest) = pattern.fixedFolder
        var split = LiveConfiguration.Recording.Split(pattern: splitName, period: period, timeZone: timeZone)
        split.retention = retention
        return Layout(directory: folder, name: rest, split: split)
    }

    /// The engine's recording, its store rooted at the layout's folder.
    public func configuration(startingAt start: Date) throws(StoreError) -> LiveConfiguration.Recording {
        let layout = layout(startingAt: start)
        var recording = LiveConfiguration.Recording(store: try DirectoryStore(root: layout.directory), path: layout.name)
        recording.split = layout.split
        recording.size = size
        recording.codec = codec
        recording.bitrate = bitrate
        recording.encodes = encodes
        return recording
    }

    /// A file's directory and name: `rec/a.mp4` → (`rec`, `a.mp4`), `a.mp4` → (`.`, `a.mp4`).
    public static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }
}
