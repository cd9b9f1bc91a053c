/// How a stream's tracks are spread over renditions, each a playlist in its own directory.
///
///     one rendition (default)     DIR/playlist.m3u8, DIR/iframes.m3u8, DIR/init.mp4, DIR/seg/…
///     a ladder                    DIR/720p/…, DIR/480p/…, DIR/audio/… (DIR/audio/<lang>/… for several)
///     several audio tracks        DIR/playlist.m3u8 (video), DIR/audio/<lang>/…
///
/// `DIR/master.m3u8` lists them all. Every rendition's segment N covers the same time, because one
/// segmenter cuts all tracks; a rendition's fragments carry only its own tracks, numbered from 1.
public struct StreamLayout: Sendable, Equatable {
    public struct Rendition: Sendable, Equatable {
        /// Relative to the stream directory; "" is the directory itself.
        public var directory: String
        /// Indexes into the stream's track list.
        public var trackIndexes: [Int]
        /// NAME of an audio rendition.
        public var name: String
        /// RFC 5646 language of an audio rendition, when known.
        public var language: String?
        /// The peak and average bit rates the encoder holds this rendition to (live, before anything
        /// is measured); nil when they come from the written segments.
        public var declaredPeakBitrate: Int?
        public var declaredAverageBitrate: Int?

        public init(directory: String, trackIndexes: [Int], name: String = "", language: String? = nil,
                    declaredPeakBitrate: Int? = nil, declaredAverageBitrate: Int? = nil) {
            self.directory = directory
            self.trackIndexes = trackIndexes
            self.name = name
            self.language = language
            self.declaredPeakBitrate = declaredPeakBitrate
            self.declaredAverageBitrate = declaredAverageBitrate
        }

        /// A path inside this rendition's directory, relative to the stream directory.
        public func path(_ name: String) -> String {
            directory.isEmpty ? name : directory + "/" + name
        }
    }

    public var renditions: [Rendition]

    public static let audioGroupID = "audio"
    /// The names of a stream's files, the same in every rendition directory and in live and file mode.
    public static let playlistName = "playlist.m3u8"
    public static let masterPlaylistName = "master.m3u8"
    public static let iFramePlaylistName = "iframes.m3u8"
    public static let initName = "init.mp4"
    public static let segmentDirectory = "seg"
    /// Files a stopped live stream left waiting for their retention time, for the run that continues it.
    public static let retiredListName = ".retired"

    public static func segmentPath(_ sequenceNumber: Int) -> String {
        let digits = String(sequenceNumber)
        return segmentDirectory + "/" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits + ".m4s"
    }

    /// The number in a segment path such as `seg/000042.m4s`; nil for other paths.
    public static func sequenceNumber(ofPath path: String) -> Int? {
        let prefix = segmentDirectory + "/"
        guard path.hasPrefix(prefix), path.hasSuffix(".m4s") else { return nil }
        return Int(path.dropFirst(prefix.count).dropLast(4))
    }

    /// 1 for `init.mp4`, N for `init-N.mp4`, nil for other names.
    public static func initNumber(ofName name: String) -> Int? {
        if name == StreamLayout.initName { return 1 }
        guard name.hasPrefix("init-"), name.hasSuffix(".mp4") else { return nil }
        return Int(name.dropFirst("init-".count).dropLast(".mp4".count))
    }


    public init(renditions: [Rendition]) {
        precondition(!renditions.isEmpty, "a stream has at least one rendition")
        self.renditions = renditions
    }

    /// Every track in one playlist at the top of the directory: hlscap's layout without a ladder.
    public static func single(trackCount: Int) -> StreamLayout {
        StreamLayout(renditions: [Rendition(directory: "", trackIndexes: Array(0..<trackCount))])
    }

    /// The layout for these tracks: one rendition at the top, unless there is a ladder (`videoNames`,
    /// one per video track, name the directories) or more than one audio track, which then each get
    /// a rendition of their own. `audioLanguages` has one entry per audio track.
    public static func make(tracks: [TrackDescription], videoNames: [String]?,
                            audioLanguages: [String?] = []) -> StreamLayout {
        let video = tracks.indices.filter { tracks[$0].isVideo }
        let audio = tracks.indices.filter { !tracks[$0].isVideo }
        guard videoNames != nil || audio.count > 1 || video.count > 1 else { return .single(trackCount: tracks.count) }
        var renditions = video.enumerated().map { position, index in
            Rendition(directory: videoNames.map { $0[position] } ?? "", trackIndexes: [index],
                      name: videoNames.map { $0[position] } ?? "")
        }
        var taken = Set<String>()
        for (position, index) in audio.enumerated() {
            let language = position < audioLanguages.count ? audioLanguages[position] : nil
            let directory = video.isEmpty && audio.count == 1
                ? "" : audioDirectory(index: position, count: audio.count, language: language, taken: taken)
            taken.insert(directory)
            renditions.append(Rendition(directory: directory, trackIndexes: [index],
                                        name: Self.audioName(language: language, position: position),
                                        language: language.flatMap(Self.languageTag)))
        }
        return StreamLayout(renditions: renditions)
    }

    /// NAME of an audio rendition: its language's English name when known, else "Audio N".
    static func audioName(language: String?, position: Int) -> String {
        guard let language, let name = languageNames[language] else { return "Audio \(position + 1)" }
        return name
    }

    /// The RFC 5646 tag for an ISO 639-2 code from a container ("eng" → "en"); nil when unknown.
    static func languageTag(_ code: String) -> String? {
        if code.count == 2 { return code }
        return twoLetterCodes[code]
    }

    private static let twoLetterCodes: [String: String] = [
        "eng": "en", "fra": "fr", "fre": "fr", "deu": "de", "ger": "de", "spa": "es", "ita": "it", "por": "pt",
        "nld": "nl", "dut": "nl", "rus": "ru", "jpn": "ja", "zho": "zh", "chi": "zh", "kor": "ko", "ara": "ar",
        "hin": "hi", "pol": "pl", "swe": "sv", "nor": "no", "dan": "da", "fin": "fi", "tur": "tr", "ces": "cs",
        "cze": "cs", "ell": "el", "gre": "el", "heb": "he", "hun": "hu", "ukr": "uk",
    ]

    private static let languageNames: [String: String] = [
        "eng": "English", "en": "English", "fra": "Français", "fre": "Français", "fr": "Français",
        "deu": "Deutsch", "ger": "Deutsch", "de": "Deutsch", "spa": "Español", "es": "Español",
        "ita": "Italiano", "it": "Italiano", "por": "Português", "pt": "Português", "nld": "Nederlands",
        "jpn": "日本語", "ja": "日本語", "rus": "Русский", "ru": "Русский",
    ]

    /// The directory of the `index`-th of `count` audio renditions: `audio` alone, else named after its
    /// language, or its number when the language is unknown or taken.
    public static func audioDirectory(index: Int, count: Int, language: String?, taken: Set<String>) -> String {
        guard count > 1 else { return "audio" }
        if let language, !language.isEmpty, language != "und", !taken.contains("audio/" + language) {
            return "audio/" + language
        }
        return "audio/\(index + 1)"
    }

    /// The tracks of one rendition, numbered from 1 as its init section and fragments have them.
    public func tracks(of rendition: Int, in all: [TrackDescription]) -> [TrackDescription] {
        renditions[rendition].trackIndexes.enumerated().map { position, index in
            var track = all[index]
            track.trackID = UInt32(position + 1)
            return track
        }
    }

    /// Whether a rendition holds no video: an audio rendition of a stream that has video elsewhere.
    public func isAudioRendition(_ rendition: Int, in all: [TrackDescription]) -> Bool {
        let hasVideo = { (index: Int) in all[index].isVideo }
        return !renditions[rendition].trackIndexes.contains(where: hasVideo)
            && renditions.contains { $0.trackIndexes.contains(where: hasVideo) }
    }

    /// The part of `segment` that belongs to each rendition, its tracks renumbered; nil where a
    /// rendition has no samples in it.
    public func split(_ segment: Segment, timescales: [Timescale]) -> [Segment?] {
        renditions.map { rendition in
            var tracks: [FragmentTrack] = []
            for (position, index) in rendition.trackIndexes.enumerated() {
                guard var track = segment.tracks.first(where: { $0.trackID == UInt32(index + 1) }) else { continue }
                track.trackID = UInt32(position + 1)
                tracks.append(track)
            }
            guard let first = tracks.first else { return nil }
            var own = segment
            own.tracks = tracks
            own.parts = []
            if tracks.count == segment.tracks.count { return own }
            // The rendition's own first track times it: its EXTINF is what it really holds.
            own.timescale = timescales[rendition.trackIndexes[Int(first.trackID) - 1]]
            own.durationTicks = first.samples.reduce(Int64(0)) { $0 + Int64($1.durationTicks) }
            own.startTicks = Int64(first.baseDecodeTime)
            return own
        }
    }
}
