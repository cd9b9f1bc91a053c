import Foundation

/// An A/V sync test input made with the ffmpeg CLI: a dark moving picture with one fully white frame
/// every `framesPerFlash` frames (each whole second) and a 50 ms 1 kHz beep starting at the same instants,
/// the pattern Tests/Tools/av_sync.py measures.
public struct SyncClip: Sendable {
    public struct Video: Sendable {
        public var width: Int
        public var height: Int
        /// As ffmpeg takes it: "25", "30000/1001".
        public var frameRate: String
        /// Frames from one flash to the next: one second's worth, rounded.
        public var framesPerFlash: Int
        /// Filters after the flash is drawn, e.g. timestamp jitter.
        public var extraFilters: [String] = []

        public init(width: Int, height: Int, frameRate: String, framesPerFlash: Int, extraFilters: [String] = []) {
            self.width = width
            self.height = height
            self.frameRate = frameRate
            self.framesPerFlash = framesPerFlash
            self.extraFilters = extraFilters
        }

        /// Seconds from one flash to the next.
        var flashPeriodSeconds: Double {
            let parts = frameRate.split(separator: "/").compactMap { Double($0) }
            let perSecond = parts.count == 2 ? parts[0] / parts[1] : parts[0]
            return Double(framesPerFlash) / perSecond
        }
    }

    public struct Audio: Sendable {
        public var sampleRate: Int
        public var layout: String

        public init(sampleRate: Int, layout: String) {
            self.sampleRate = sampleRate
            self.layout = layout
        }
    }

    /// File name, whose extension picks the container.
    public var name: String
    public var seconds: Double
    public var video: Video?
    public var audio: Audio?
    /// Codec options for ffmpeg's output.
    public var encoding: [String]
    /// Display rotation written into the container afterwards (`rotate` tag, clockwise degrees).
    public var rotationDegrees: Int?

    public init(name: String, seconds: Double, video: Video?, audio: Audio?, encoding: [String],
                rotationDegrees: Int? = nil) {
        self.name = name
        self.seconds = seconds
        self.video = video
        self.audio = audio
        self.encoding = encoding
        self.rotationDegrees = rotationDegrees
    }

    /// Luma scale for the moving test pattern: dark enough that only the flash reads as white.
    static let backgroundLumaScale = 0.35
    static let beepSeconds = 0.05
    static let beepAmplitude = 0.5
    static let beepHertz = 1000

    /// Flash and beep share one period: a flash every second of frames, so a beep every such second.
    private var periodSeconds: Double { video?.flashPeriodSeconds ?? 1 }

    /// Writes the clip into `directory` and returns its path.
    public func make(in directory: URL) throws -> URL {
        let output = directory.appendingPathComponent(name)
        var arguments = ["-nostdin", "-v", "error", "-y"]
        if let video {
            let filters = ["testsrc2=size=\(video.width)x\(video.height):rate=\(video.frameRate)",
                           "lutyuv=y=val*\(Self.backgroundLumaScale)",
                           "drawbox=color=white:thickness=fill:enable='eq(mod(n\\,\(video.framesPerFlash))\\,0)'"]
                + video.extraFilters
            arguments += ["-f", "lavfi", "-i", filters.joined(separator: ",")]
        }
        if let audio {
            // aevalsrc is evaluated per sample, so the beep's edges are sample-exact.
            let beep = "if(lt(mod(t\\,\(periodSeconds))\\,\(Self.beepSeconds))\\,"
                + "\(Self.beepAmplitude)*sin(2*PI*\(Self.beepHertz)*t)\\,0)"
            arguments += ["-f", "lavfi", "-i",
                          "aevalsrc='\(beep)':sample_rate=\(audio.sampleRate):channel_layout=\(audio.layout)"]
        }
        let encoded = rotationDegrees == nil ? output : directory.appendingPathComponent("unrotated-" + name)
        arguments += ["-t", String(seconds)] + encoding + [encoded.path]
        try Self.ffmpeg(arguments)
        if let rotationDegrees {
            // FFmpeg 5.1 turns the tag into a display matrix only when copying, not when encoding.
            try Self.ffmpeg(["-nostdin", "-v", "error", "-y", "-i", encoded.path, "-c", "copy",
                             "-metadata:s:v:0", "rotate=\(rotationDegrees)", output.path])
            try FileManager.default.removeItem(at: encoded)
        }
        return output
    }

    /// Runs the ffmpeg CLI and throws when it fails.
    public static func ffmpeg(_ arguments: [String]) throws {
        let result = try ExternalTools.run("ffmpeg", arguments, timeoutSeconds: 300)
        guard result.succeeded else {
            throw ExternalToolError.failed(command: "ffmpeg " + arguments.joined(separator: " "), result: result)
        }
    }
}
