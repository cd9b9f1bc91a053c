import Foundation

/// Any time range of the recordings as a VOD media playlist, without copying a byte: each segment is a
/// fragment of a recording file by byte range (`EXT-X-BYTERANGE`, the `moof` and its `mdat`), each
/// file's init section by byte range too (`EXT-X-MAP` with `BYTERANGE`, its `ftyp` and `moov`), every
/// segment dated (`EXT-X-PROGRAM-DATE-TIME`), and `EXT-X-DISCONTINUITY` wherever the file changes or
/// the recording has a gap.
public enum RecordingRangePlaylist {
    public struct File: Sendable {
        /// The file's URI as the playlist names it.
        public var uri: String
        public var summary: RecordingFileSummary

        public init(uri: String, summary: RecordingFileSummary) {
            self.uri = uri
            self.summary = summary
        }
    }

    /// Fragments further apart than this are a gap in the recording: a discontinuity here, a gap in
    /// `hlscap recordings`.
    public static let gapSeconds = 0.5

    /// The fragments that overlap `from..<to`, in order of time; nil when none does.
    public static func make(files: [File], from: Date, to: Date) -> MediaPlaylist? {
        var segments: [MediaPlaylist.Segment] = []
        var previousEnd: Date?
        var previousURI: String?
        let ordered = files.filter { $0.summary.initByteCount > 0 && $0.summary.start != nil }
            .sorted { ($0.summary.start!, $0.uri) < ($1.summary.start!, $1.uri) }
        for file in ordered {
            for fragment in file.summary.fragments {
                guard let start = fragment.start, fragment.durationSeconds > 0 else { continue }
                let end = start.addingTimeInterval(fragment.durationSeconds)
                // A fragment that ends within the published precision after `from` does not hold it: `from`
                // was read, to the millisecond, from the start of the fragment after it.
                guard start < to, end.timeIntervalSince(from) > ProgramDateTime.precisionSeconds else { continue }
                var segment = MediaPlaylist.Segment(
                    uri: file.uri, durationSeconds: fragment.durationSeconds, mapURI: file.uri,
                    programDateTime: start,
                    byteRange: MediaPlaylist.ByteRange(length: fragment.byteCount, offset: fragment.offset))
                segment.mapByteRange = MediaPlaylist.ByteRange(length: file.summary.initByteCount, offset: 0)
                if let previousEnd, let previousURI {
                    segment.discontinuity = previousURI != file.uri || abs(start.timeIntervalSince(previousEnd)) > gapSeconds
                }
                segments.append(segment)
                previousEnd = end
                previousURI = file.uri
            }
        }
        guard !segments.isEmpty else { return nil }
        var playlist = MediaPlaylist(
            targetDurationSeconds: MediaPlaylist.targetDuration(forSegmentDurations: segments.map(\.durationSeconds)),
            mediaSequence: 0, playlistType: .vod, independentSegments: true)
        playlist.segments = segments
        playlist.endList = true
        return playlist
    }
}
