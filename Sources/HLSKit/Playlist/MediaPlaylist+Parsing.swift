import Foundation

extension MediaPlaylist {
    /// How a reading treats what it cannot read.
    public enum Strictness: Sendable {
        /// Stops at the first value the model needs and cannot read, naming the line: what continuing a
        /// stream (`--resume`) relies on.
        case strict
        /// Reads past it, as a player would; what cannot be read is left out.
        case lenient
    }

    /// Reads a media playlist. `MediaPlaylistDocument` is the one reader of playlist text (the
    /// validator's too): it accepts LF or CRLF line endings, blank lines, comments and tags the model
    /// does not carry, and records what it cannot read; a strict reading throws the first of those.
    public static func parse(_ text: String, strictness: Strictness = .strict) throws(PlaylistError) -> MediaPlaylist {
        try MediaPlaylist(MediaPlaylistDocument(text: text), strictness: strictness)
    }

    /// The model of a document: its segments with their durations (to the millisecond), init sections,
    /// discontinuities and program date-times, and the tags around them.
    public init(_ document: MediaPlaylistDocument, strictness: Strictness = .strict) throws(PlaylistError) {
        if strictness == .strict {
            guard document.hasHeader else { throw PlaylistError(line: 1, problem: .missingHeader) }
            if let error = document.issues.lazy.compactMap(\.error).first { throw error }
            guard document.targetDuration != nil else {
                throw PlaylistError(line: document.lineCount, problem: .missingTargetDuration)
            }
        }
        self.init(targetDurationSeconds: document.targetDuration?.value ?? 0,
                  mediaSequence: document.mediaSequence?.value ?? 0,
                  discontinuitySequence: document.discontinuitySequence?.value ?? 0,
                  playlistType: document.playlistType.flatMap { PlaylistType(rawValue: $0.value) },
                  independentSegments: document.independentSegments,
                  segments: document.segments.map { segment in
                      var model = Segment(uri: segment.uri,
                                          durationSeconds: PlaylistNumber.quantizedToMilliseconds(segment.durationSeconds),
                                          mapURI: segment.map?.uri, discontinuity: segment.discontinuity,
                                          programDateTime: segment.programDateTime)
                      if let key = segment.key, let method = Key.Method(rawValue: key.method) {
                          model.key = Key(uri: key.uri, iv: key.iv, method: method)
                      }
                      return model
                  },
                  endList: !document.endList.isEmpty)
    }
}
