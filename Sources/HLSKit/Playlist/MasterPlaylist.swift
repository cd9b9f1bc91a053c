/// An HLS multivariant ("master") playlist listing one or more variant streams (RFC 8216bis 4.4.6).
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
        /// VIDEO-RANGE (RFC 8216bis 4.4.6.2); left out when the colour description is unknown.
        public var videoRange: VideoRange?

        public init(uri: String, bandwidthBitsPerSecond: Int, averageBandwidthBitsPerSecond: Int? = nil,
                    codecs: [String]? = nil, resolution: Resolution? = nil, framesPerSecond: Double? = nil) {
            self.uri = uri
            self.bandwidthBitsPerSecond = bandwidthBitsPerSecond
            self.averageBandwidthBitsPerSecond = averageBandwidthBitsPerSecond
            self.codecs = codecs
            self.resolution = resolution
            self.framesPerSecond = framesPerSecond
        }
    }

    /// None of the tags written here needs more than version 1, so the caller chooses: usually the
    /// version of the media playlists, so a client that cannot play them skips the whole stream.
    public var version: Int
    public var independentSegments: Bool
    public var variants: [Variant]

    public init(version: Int, independentSegments: Bool = false, variants: [Variant]) {
        self.version = version
        self.independentSegments = independentSegments
        self.variants = variants
    }

    /// The playlist text: LF line endings and a final newline.
    public func render() -> String {
        var lines = [PlaylistTag.header, "\(PlaylistTag.version):\(version)"]
        if independentSegments {
            lines.append(PlaylistTag.independentSegments)
        }
        for variant in variants {
            lines.append("\(PlaylistTag.streamInfo):\(variant.attributeList)")
            lines.append(variant.uri)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

private extension MasterPlaylist.Variant {
    var attributeList: String {
        var attributes = ["BANDWIDTH=\(bandwidthBitsPerSecond)"]
        if let averageBandwidthBitsPerSecond {
            attributes.append("AVERAGE-BANDWIDTH=\(averageBandwidthBitsPerSecond)")
        }
        if let codecs {
            attributes.append("CODECS=\"\(codecs.joined(separator: ","))\"")
        }
        if let resolution {
            attributes.append("RESOLUTION=\(resolution.width)x\(resolution.height)")
        }
        if let framesPerSecond {
            attributes.append("FRAME-RATE=\(PlaylistNumber.threeDecimals(framesPerSecond))")
        }
        if let videoRange { attributes.append("VIDEO-RANGE=\(videoRange.rawValue)") }
        return attributes.joined(separator: ",")
    }
}
