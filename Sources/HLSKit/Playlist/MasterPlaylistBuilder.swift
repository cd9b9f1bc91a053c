/// What is known of one rendition's rates when its master playlist is written.
public struct RenditionMeasure: Sendable, Equatable {
    public var tracks: [TrackDescription]
    public var peakBitrate: Int
    public var averageBitrate: Int
    public var framesPerSecond: Double?
    public var iFramePeakBitrate: Int
    public var iFrameAverageBitrate: Int
    /// Tracks of earlier sections (joined recordings, a resumed stream) whose formats CODECS must
    /// also list (RFC 8216bis 4.4.6.2: every format in the variant).
    public var earlierTracks: [TrackDescription] = []
    /// The rates are a guess (a copied camera's, unknown before it is measured): a live master playlist
    /// declares the first segment's measure instead, and is written again when a segment goes past it.
    public var isEstimate = false

    public init(tracks: [TrackDescription], peakBitrate: Int, averageBitrate: Int, framesPerSecond: Double?,
                iFramePeakBitrate: Int, iFrameAverageBitrate: Int) {
        self.tracks = tracks
        self.peakBitrate = peakBitrate
        self.averageBitrate = averageBitrate
        self.framesPerSecond = framesPerSecond
        self.iFramePeakBitrate = iFramePeakBitrate
        self.iFrameAverageBitrate = iFrameAverageBitrate
    }

    /// Whether a master playlist that declared this guess must declare `measured` instead: a segment went
    /// past the declared peak, or the measured average is more than a tenth off the declared one (Apple's
    /// HLS authoring specification asks AVERAGE-BANDWIDTH within 10 % of what the stream measures).
    public func isOutdated(by measured: RenditionMeasure) -> Bool {
        guard isEstimate else { return false }
        return measured.peakBitrate > peakBitrate || measured.iFramePeakBitrate > iFramePeakBitrate
            || Self.isMoreThanATenthOff(measured.averageBitrate, from: averageBitrate)
            || Self.isMoreThanATenthOff(measured.iFrameAverageBitrate, from: iFrameAverageBitrate)
    }

    private static func isMoreThanATenthOff(_ measured: Int, from declared: Int) -> Bool {
        abs(Int64(measured) - Int64(declared)) * 10 > Int64(declared)
    }

    /// Every format of the variant, video first, each once.
    var codecs: [String] {
        let all = earlierTracks + tracks
        var seen: [String] = []
        for codec in all.filter(\.isVideo).map(Self.codec) + all.filter({ !$0.isVideo }).map(Self.codec)
        where !seen.contains(codec) {
            seen.append(codec)
        }
        return seen
    }

    var videoCodecs: [String] {
        codecs.filter { !$0.hasPrefix("mp4a") }
    }

    private static func codec(_ track: TrackDescription) -> String {
        switch track.format {
        case .h264(let format): format.decoderConfiguration.codecsString
        case .hevc(let format): format.decoderConfiguration.codecsString
        case .aac(let format): format.audioSpecificConfig.codecsString
        }
    }

    var resolution: MasterPlaylist.Resolution? {
        for track in tracks {
            switch track.format {
            case .h264(let format): return MasterPlaylist.Resolution(width: format.displayWidth, height: format.displayHeight)
            case .hevc(let format): return MasterPlaylist.Resolution(width: format.displayWidth, height: format.displayHeight)
            case .aac: continue
            }
        }
        return nil
    }

    var videoRange: MasterPlaylist.VideoRange? {
        tracks.lazy.compactMap(\.colourDescription).first
            .map { MasterPlaylist.VideoRange(transferCharacteristics: $0.transferCharacteristics) }
    }

    var channelCount: Int? {
        for track in tracks {
            if case .aac(let format) = track.format { return format.audioSpecificConfig.channelCount }
        }
        return nil
    }
}

/// Builds the master playlist of a layout: audio renditions in one group, a variant per video
/// rendition (its BANDWIDTH the sum with the largest audio rendition, as RFC 8216bis 4.4.6.2 asks),
/// the variant nearest 2 Mb/s first (Apple's authoring specification 1.32), and an I-frame stream
/// per video rendition.
public struct MasterPlaylistBuilder: Sendable {
    public var layout: StreamLayout
    public var allTracks: [TrackDescription]
    public var measured: [RenditionMeasure]

    /// The rate Apple's authoring specification wants the first listed variant near.
    public static let startingBitrate = 2_000_000

    public init(layout: StreamLayout, allTracks: [TrackDescription], measured: [RenditionMeasure]) {
        self.layout = layout
        self.allTracks = allTracks
        self.measured = measured
    }

    public func make(version: Int) -> MasterPlaylist {
        let audioIndexes = layout.renditions.indices.filter { layout.isAudioRendition($0, in: allTracks) }
        let variantIndexes = layout.renditions.indices.filter { !audioIndexes.contains($0) }
        let audio = audioIndexes.enumerated().map { position, index in
            let rendition = layout.renditions[index]
            return MasterPlaylist.AudioRendition(
                groupID: StreamLayout.audioGroupID,
                name: rendition.name.isEmpty ? (rendition.language ?? "Audio \(position + 1)") : rendition.name,
                language: rendition.language, isDefault: position == 0,
                channelCount: measured[index].channelCount, uri: rendition.path(StreamLayout.playlistName))
        }
        let audioPeak = audioIndexes.map { measured[$0].peakBitrate }.max() ?? 0
        let audioAverage = audioIndexes.first.map { measured[$0].averageBitrate } ?? 0
        let audioCodecs = audioIndexes.first.map { measured[$0].codecs } ?? []
        var variants = variantIndexes.map { index in
            MasterPlaylist.Variant(
                uri: layout.renditions[index].path(StreamLayout.playlistName),
                bandwidthBitsPerSecond: measured[index].peakBitrate + audioPeak,
                averageBandwidthBitsPerSecond: measured[index].averageBitrate + audioAverage,
                codecs: measured[index].codecs + audioCodecs, resolution: measured[index].resolution,
                framesPerSecond: measured[index].framesPerSecond, videoRange: measured[index].videoRange,
                audioGroup: audioIndexes.isEmpty ? nil : StreamLayout.audioGroupID)
        }
        variants.sort { $0.bandwidthBitsPerSecond > $1.bandwidthBitsPerSecond }
        if let start = variants.indices.min(by: {
            abs(variants[$0].bandwidthBitsPerSecond - Self.startingBitrate)
                < abs(variants[$1].bandwidthBitsPerSecond - Self.startingBitrate)
        }) {
            variants.insert(variants.remove(at: start), at: 0)
        }
        let iFrames = variantIndexes.filter { measured[$0].resolution != nil }.map { index in
            MasterPlaylist.IFrameStream(
                uri: layout.renditions[index].path(StreamLayout.iFramePlaylistName),
                bandwidthBitsPerSecond: max(1, measured[index].iFramePeakBitrate),
                averageBandwidthBitsPerSecond: measured[index].iFrameAverageBitrate > 0
                    ? measured[index].iFrameAverageBitrate : nil,
                codecs: measured[index].videoCodecs,
                resolution: measured[index].resolution)
        }
        return MasterPlaylist(version: version, independentSegments: true, audioRenditions: audio,
                              variants: variants, iFrameStreams: iFrames)
    }
}
