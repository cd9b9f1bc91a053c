/// An HLS multivariant ("master") playlist listing one or more variant streams (RFC 8216bis 4.4.6).
///
///     #EXT-X-MEDIA:TYPE=AUDIO,…           one per audio rendition, in a group the variants name
///     #EXT-X-STREAM-INF:BANDWIDTH=…       one per variant, the first the one players start with
///     URI
///     #EXT-X-I-FRAME-STREAM-INF:…,URI=…   one per I-frame playlist
public struct MasterPlaylist: Sendable, Equatable {
    public struct Resolution: Sendable, Equatable {
        public var width: Int
        public var height: Int

        public init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }
    }

    /// One EXT-X-STREAM-INF entry; attributes that are `nil` are left out.
    public struct Variant: Sendable, Equatable {
        public var uri: String
        /// Peak segment bit rate, the only attribute RFC 8216bis requires.
        public var bandwidthBitsPerSecond: Int
        public var averageBandwidthBitsPerSecond: Int?
        /// RFC 6381 codec strings, such as `avc1.64001f` and `mp4a.40.2`.
        public var codecs: [String]?
        public var resolution: Resolution?
        public var framesPerSecond: Double?
        /// GROUP-ID of the audio renditions this variant plays with.
        public var audioGroup: String?
        /// VIDEO-RANGE (RFC 8216bis 4.4.6.2); left out when the colour description is unknown.
        public var videoRange: VideoRange?

        public init(uri: String, bandwidthBitsPerSecond: Int, averageBandwidthBitsPerSecond: Int? = nil,
                    codecs: [String]? = nil, resolution: Resolution? = nil, framesPerSecond: Double? = nil,
                    videoRange: VideoRange? = nil, audioGroup: String? = nil) {
            self.videoRange = videoRange
            self.uri = uri
            self.bandwidthBitsPerSecond = bandwidthBitsPerSecond
            self.averageBandwidthBitsPerSecond = averageBandwidthBitsPerSecond
            self.codecs = codecs
            self.resolution = resolution
            self.framesPerSecond = framesPerSecond
            self.audioGroup = audioGroup
        }
    }

    /// One EXT-X-MEDIA entry of TYPE=AUDIO.
    public struct AudioRendition: Sendable, Equatable {
        public var groupID: String
        public var name: String
        /// RFC 5646 tag, such as `en` or `fr`; nil when unknown.
        public var language: String?
        public var isDefault: Bool
        public var channelCount: Int?
        public var uri: String

        public init(groupID: String, name: String, language: String? = nil, isDefault: Bool,
                    channelCount: Int? = nil, uri: String) {
            self.groupID = groupID
            self.name = name
            self.language = language
            self.isDefault = isDefault
            self.channelCount = channelCount
            self.uri = uri
        }
    }

    /// One EXT-X-I-FRAME-STREAM-INF entry.
    public struct IFrameStream: Sendable, Equatable {
        public var uri: String
        public var bandwidthBitsPerSecond: Int
        public var averageBandwidthBitsPerSecond: Int?
        public var codecs: [String]?
        public var resolution: Resolution?

        public init(uri: String, bandwidthBitsPerSecond: Int, averageBandwidthBitsPerSecond: Int? = nil,
                    codecs: [String]? = nil, resolution: Resolution? = nil) {
            self.uri = uri
            self.bandwidthBitsPerSecond = bandwidthBitsPerSecond
            self.averageBandwidthBitsPerSecond = averageBandwidthBitsPerSecond
            self.codecs = codecs
            self.resolution = resolution
        }
    }

    /// None of the tags written here needs more than version 1, so the caller chooses: usually the
    /// version of the media playlists, so a client that cannot play them skips the whole stream.
    public var version: Int
    public var independentSegments: Bool
    public var audioRenditions: [AudioRendition]
    public var variants: [Variant]
    public var iFrameStreams: [IFrameStream]

    public init(version: Int, independentSegments: Bool = false, audioRenditions: [AudioRendition] = [],
                variants: [Variant], iFrameStreams: [IFrameStream] = []) {
        self.version = version
        self.independentSegments = independentSegments
        self.audioRenditions = audioRenditions
        self.variants = variants
        self.iFrameStreams = iFrameStreams
    }

    /// The playlist text: LF line endings and a final newline.
    public func render() -> String {
        var lines = [PlaylistTag.header, "\(PlaylistTag.version):\(version)"]
        if independentSegments {
            lines.append(PlaylistTag.independentSegments)
        }
        for rendition in audioRenditions {
            lines.append("\(PlaylistTag.media):\(rendition.attributeList)")
        }
        for variant in variants {
            lines.append("\(PlaylistTag.streamInfo):\(variant.attributeList)")
            lines.append(variant.uri)
        }
        for stream in iFrameStreams {
            lines.append("\(PlaylistTag.iFrameStreamInfo):\(stream.attributeList)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

private func streamAttributes(bandwidth: Int, averageBandwidth: Int?, codecs: [String]?,
                              resolution: MasterPlaylist.Resolution?) -> [String] {
    var attributes = ["BANDWIDTH=\(bandwidth)"]
    if let averageBandwidth {
        attributes.append("AVERAGE-BANDWIDTH=\(averageBandwidth)")
    }
    if let codecs {
        attributes.append("CODECS=\"\(codecs.joined(separator: ","))\"")
    }
    if let resolution {
        attributes.append("RESOLUTION=\(resolution.width)x\(resolution.height)")
    }
    return attributes
}

private extension MasterPlaylist.Variant {
    var attributeList: String {
        var attributes = streamAttributes(bandwidth: bandwidthBitsPerSecond,
                                          averageBandwidth: averageBandwidthBitsPerSecond, codecs: codecs,
                                          resolution: resolution)
        if let framesPerSecond {
            attributes.append("FRAME-RATE=\(PlaylistNumber.threeDecimals(framesPerSecond))")
        }
        if let videoRange {
            attributes.append("VIDEO-RANGE=\(videoRange.rawValue)")
        }
        if let audioGroup {
            attributes.append("AUDIO=\"\(audioGroup)\"")
        }
        return attributes.joined(separator: ",")
    }
}

private extension MasterPlaylist.IFrameStream {
    var attributeList: String {
        (streamAttributes(bandwidth: bandwidthBitsPerSecond, averageBandwidth: averageBandwidthBitsPerSecond,
                          codecs: codecs, resolution: resolution) + ["URI=\"\(uri)\""]).joined(separator: ",")
    }
}

private extension MasterPlaylist.AudioRendition {
    var attributeList: String {
        var attributes = ["TYPE=AUDIO", "GROUP-ID=\"\(groupID)\"", "NAME=\"\(name)\""]
        if let language {
            attributes.append("LANGUAGE=\"\(language)\"")
        }
        attributes.append("DEFAULT=\(isDefault ? "YES" : "NO")")
        attributes.append("AUTOSELECT=YES")
        if let channelCount {
            attributes.append("CHANNELS=\"\(channelCount)\"")
        }
        attributes.append("URI=\"\(uri)\"")
        return attributes.joined(separator: ",")
    }
}
