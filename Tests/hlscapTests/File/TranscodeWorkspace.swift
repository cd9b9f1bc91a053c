import Foundation
import HLSTestSupport
import Testing

/// One input set for `hlscap file`, what to pass and what the stream must look like.
struct TranscodeCase: Sendable, CustomTestStringConvertible {
    var name: String
    var clips: [SyncClip]
    var arguments: [String] = []
    /// Upright output size; nil for audio only.
    var outputSize: (width: Int, height: Int)?

    var testDescription: String { name }
    var hasVideo: Bool { clips.contains { $0.video != nil } }
    var hasAudio: Bool { clips.contains { $0.audio != nil } }
    /// Flashes with a beep that av_sync.py can pair: the beep at 0 s follows no quiet, so it is not an onset.
    var syncPairs: Int { Int(clips.reduce(0) { $0 + $1.seconds }.rounded(.down)) - 1 }
}

/// Inputs and packaged streams shared by the transcoding suites: each made once per test run, on first
/// use, in a temporary directory removed when the test process exits.
final class TranscodeWorkspace: @unchecked Sendable {
    static let shared = TranscodeWorkspace()

    let directory: URL
    private let lock = NSLock()
    private var keyLocks: [String: NSLock] = [:]
    private var inputs: [String: Result<URL, any Error>] = [:]
    private var streams: [String: Result<PackagedStream, any Error>] = [:]

    private init() {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("hlscap-transcode-\(ProcessInfo.processInfo.processIdentifier)", isDirectory: true)
        try? FileManager.default.removeItem(at: directory)
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        atexit {
            try? FileManager.default.removeItem(at: TranscodeWorkspace.shared.directory)
        }
    }

    /// The clip's file, made on first use.
    func input(_ clip: SyncClip) throws -> URL {
        try once(clip.name, cache: \.inputs) { try clip.make(in: self.directory) }
    }

    /// The case's inputs packaged by the built hlscap into their own directory, on first use.
    func stream(_ testCase: TranscodeCase) throws -> PackagedStream {
        try once(testCase.name, cache: \.streams) {
            let paths = try testCase.clips.map { try self.input($0).path }
            let output = self.directory.appendingPathComponent("out-\(testCase.name)", isDirectory: true)
            let result = try ExternalTools.runHlscap(["file"] + paths + ["--out", output.path] + testCase.arguments,
                                                     timeoutSeconds: 300)
            guard result.succeeded else {
                throw ExternalToolError.failed(command: "hlscap file \(paths.joined(separator: " "))", result: result)
            }
            return PackagedStream(directory: output, result: result)
        }
    }

    /// Runs `make` once per key, even when tests ask at the same time; later calls get its result.
    private func once<Value>(_ key: String, cache: ReferenceWritableKeyPath<TranscodeWorkspace, [String: Result<Value, any Error>]>,
                             _ make: () throws -> Value) throws -> Value {
        lock.lock()
        let keyLock = keyLocks[key] ?? NSLock()
        keyLocks[key] = keyLock
        lock.unlock()
        keyLock.lock()
        defer { keyLock.unlock() }
        lock.lock()
        let cached = self[keyPath: cache][key]
        lock.unlock()
        if let cached { return try cached.get() }
        let made = Result { try make() }
        lock.lock()
        self[keyPath: cache][key] = made
        lock.unlock()
        return try made.get()
    }
}

/// The inputs: every one an A/V sync clip, small and short so that the matrix stays quick.
enum TranscodeInputs {
    static let x264 = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"]
    static let aac = ["-c:a", "aac", "-b:a", "96k"]
    static let stereo48k = SyncClip.Audio(sampleRate: 48_000, layout: "stereo")

    static func video(_ width: Int, _ height: Int, _ rate: Int, filters: [String] = []) -> SyncClip.Video {
        SyncClip.Video(width: width, height: height, frameRate: String(rate), framesPerFlash: rate, extraFilters: filters)
    }

    /// A phone's portrait recording: HEVC stored landscape with a display matrix turning it upright.
    static let hevcPortrait = SyncClip(
        name: "hevc-portrait.mp4", seconds: 3, video: video(1920, 1080, 30), audio: stereo48k,
        encoding: ["-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error",
                   "-pix_fmt", "yuv420p"] + aac,
        rotationDegrees: 90)
    static let vp9Opus = SyncClip(
        name: "vp9-opus.webm", seconds: 4, video: video(320, 240, 25), audio: stereo48k,
        encoding: ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "300k",
                   "-c:a", "libopus", "-b:a", "64k"])
    static let mjpegPCM = SyncClip(
        name: "mjpeg-pcm.mov", seconds: 4, video: video(320, 240, 25), audio: stereo48k,
        encoding: ["-c:v", "mjpeg", "-q:v", "5", "-pix_fmt", "yuvj420p", "-c:a", "pcm_s16le"])
    static let ntscMono = SyncClip(
        name: "ntsc-44k-mono.mp4", seconds: 4,
        video: SyncClip.Video(width: 320, height: 240, frameRate: "30000/1001", framesPerFlash: 30),
        audio: SyncClip.Audio(sampleRate: 44_100, layout: "mono"), encoding: x264 + aac)
    /// Frame times jitter by up to ±0.3 frame, except on the flashes, so they keep their second.
    static let variableFrameRate = SyncClip(
        name: "variable-rate.mkv", seconds: 4,
        video: video(320, 240, 30, filters: ["setpts='(N+if(mod(N\\,30)\\,0.3*sin(N)\\,0))/(30*TB)'"]),
        audio: stereo48k, encoding: x264 + aac + ["-fps_mode", "vfr"])
    static let fullHD60 = SyncClip(
        name: "1080p60.mp4", seconds: 2.1, video: video(1920, 1080, 60), audio: stereo48k, encoding: x264 + aac)
    static let videoOnly = SyncClip(
        name: "video-only.mkv", seconds: 3, video: video(320, 240, 25), audio: nil,
        encoding: ["-c:v", "mpeg4", "-q:v", "5"])
    static let audioOnly = SyncClip(
        name: "audio-only.flac", seconds: 3, video: nil, audio: SyncClip.Audio(sampleRate: 44_100, layout: "stereo"),
        encoding: ["-c:a", "flac"])
    /// A WAV file states a channel count but no layout. 2.5 s: at 2 s the last segment would hold a
    /// single AAC frame, which GStreamer 1.22's HLS reader leaves out.
    static let wavPCM = SyncClip(
        name: "audio-only.wav", seconds: 2.5, video: nil, audio: SyncClip.Audio(sampleRate: 44_100, layout: "stereo"),
        encoding: ["-c:a", "pcm_s16le"])
    /// The first of two joined clips, and a wider, flatter second one to be letterboxed into its size.
    static let joinFirst = SyncClip(
        name: "join-first.mp4", seconds: 3, video: video(320, 240, 25), audio: stereo48k, encoding: x264 + aac)
    static let joinWide = SyncClip(
        name: "join-wide.mkv", seconds: 3, video: video(320, 180, 25), audio: stereo48k,
        encoding: ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "200k",
                   "-c:a", "libopus", "-b:a", "64k"])

    static let cases: [TranscodeCase] = [
        // HEVC is copied now; --transcode keeps this case turning the pixels upright.
        TranscodeCase(name: "hevc-portrait-rotated", clips: [hevcPortrait], arguments: ["--transcode"],
                      outputSize: (1080, 1920)),
        TranscodeCase(name: "vp9-opus-webm", clips: [vp9Opus], outputSize: (320, 240)),
        TranscodeCase(name: "mjpeg-pcm-mov", clips: [mjpegPCM], outputSize: (320, 240)),
        // H.264/AAC inputs would be copied: --transcode makes them go through the encoders.
        TranscodeCase(name: "29.97fps-44.1kHz-mono", clips: [ntscMono], arguments: ["--transcode"],
                      outputSize: (320, 240)),
        TranscodeCase(name: "variable-frame-rate", clips: [variableFrameRate], arguments: ["--transcode"],
                      outputSize: (320, 240)),
        TranscodeCase(name: "60fps-1080p", clips: [fullHD60], arguments: ["--transcode"], outputSize: (1920, 1080)),
        TranscodeCase(name: "video-only", clips: [videoOnly], outputSize: (320, 240)),
        TranscodeCase(name: "audio-only", clips: [audioOnly], outputSize: nil),
        TranscodeCase(name: "wav-without-layout", clips: [wavPCM], outputSize: nil),
        TranscodeCase(name: "joined-sizes", clips: [joinFirst, joinWide], arguments: ["--transcode"],
                      outputSize: (320, 240)),
    ]
}
