import Foundation
import HLSKit
import HLSMedia

/// What the user asked of file packaging, option by option, nothing decided: nil is "not given".
public struct FileRequest: Sendable {
    public var inputs: [String] = []
    public var copy = false
    public var transcode = false
    /// "1280x720", "1280x" or "x720", as written.
    public var size: String?
    public var frameRate: Rational?
    /// Audio tracks to keep, numbered from 1; empty keeps every one.
    public var audioTracks: [Int] = []
    public var videoCodec: VideoCodec?
    public var ladder: [LadderRung]?
    public var videoBitrate: Int?
    public var preset: String?
    public var audioBitrate: Int?
    public var audioSampleRate: Int?
    public var audioChannelCount: Int?
    public var segmentMilliseconds: Int64?
    public var cutMicroseconds: [Int64] = []
    public var outputDirectory: String?
    /// One MP4 file for a clip of recordings.
    public var outputFile: String?
    public var publishing = false
    public var encryption = EncryptionRequest()
    /// A clip of recordings: where it starts, and where it ends or how long it is.
    public var clipFrom: Date?
    public var clipTo: Date?
    public var clipDurationSeconds: Int?

    public init() {}

    /// What this request makes; throws the first rule it breaks. `isDirectory` says whether a path names
    /// a folder.
    public func plan(isDirectory: (String) -> Bool = FilePlan.isDirectory) throws(PlanError) -> FilePlan {
        try FilePlan(self, isDirectory: isDirectory)
    }
}

/// What file packaging does with a `FileRequest`: copy, encode, or decide per input; the encoding's
/// settings; or a clip of recordings, which is only ever copied.
public struct FilePlan: Sendable {
    public let request: FileRequest
    public let mode: FilePackager.Mode
    public let transcodeSettings: TranscodeSettings
    /// The options given that ask for an encoding, in the order they are said ("size", "fps" …).
    public let encodingOptions: [String]
    /// A clip of the recordings in the one input folder.
    public let clip: ClipRange?
    public let encryption: EncryptionPlan?

    public struct ClipRange: Sendable, Equatable {
        public var from: Date
        public var to: Date

        public init(from: Date, to: Date) {
            self.from = from
            self.to = to
        }
    }

    public init(_ request: FileRequest, isDirectory: (String) -> Bool = FilePlan.isDirectory) throws(PlanError) {
        self.request = request
        if request.ladder?.contains(where: \.isSource) == true { throw .ladderSourceInFile }
        var settings = TranscodeSettings()
        settings.size = request.size
        settings.frameRate = request.frameRate
        if !request.audioTracks.isEmpty { settings.audioTracks = .numbers(request.audioTracks) }
        settings.videoCodec = request.videoCodec ?? settings.videoCodec
        settings.ladder = request.ladder
        settings.videoBitrate = request.videoBitrate
        settings.preset = request.preset ?? settings.preset
        settings.audio.bitrate = request.audioBitrate ?? settings.audio.bitrate
        settings.audio.sampleRate = request.audioSampleRate ?? settings.audio.sampleRate
        settings.audio.channelCount = request.audioChannelCount ?? settings.audio.channelCount
        // Choosing audio tracks asks for no encoding; each of these does.
        let encodingOptions = [
            ("size", request.size != nil), ("fps", request.frameRate != nil), ("video-codec", request.videoCodec != nil),
            ("ladder", request.ladder != nil), ("video-bitrate", request.videoBitrate != nil),
            ("preset", request.preset != nil), ("audio-bitrate", request.audioBitrate != nil),
            ("audio-rate", request.audioSampleRate != nil), ("audio-channels", request.audioChannelCount != nil),
        ].filter(\.1).map(\.0)
        settings.segmentMilliseconds = request.segmentMilliseconds ?? settings.segmentMilliseconds
        guard (500...60_000).contains(settings.segmentMilliseconds) else { throw .segmentDuration }
        if settings.ladder != nil, let conflict = ["size", "video-bitrate"].first(where: encodingOptions.contains) {
            throw .ladderConflict(conflict)
        }
        switch (request.copy, request.transcode || !encodingOptions.isEmpty) {
        case (true, true): throw .copyConflict(request.transcode ? "transcode" : encodingOptions[0])
        case (true, false): mode = .copy
        case (false, true): mode = .transcode
        case (false, false): mode = .automatic
        }
        clip = try Self.clipRange(request)
        if clip != nil || request.outputFile != nil {
            try Self.checkClip(request, encoding: request.transcode ? ["transcode"] : encodingOptions)
        }
        encryption = try EncryptionPlan(request.encryption, outputDirectory: request.outputDirectory,
                                        publishing: request.publishing)
        if let outputFile = request.outputFile, encryption != nil { throw .clipFileEncrypted(outputFile) }
        guard request.outputDirectory != nil || request.publishing || request.outputFile != nil else {
            throw .noDestination
        }
        guard !request.inputs.isEmpty else { throw .noInputFile }
        let folder = request.inputs.count == 1 && isDirectory(request.inputs[0])
        if clip != nil, !folder { throw .clipNeedsFolder(request.inputs) }
        if clip == nil, folder { throw .folderWithoutClip(request.inputs[0]) }
        transcodeSettings = settings
        self.encodingOptions = encodingOptions
    }

    /// Whether `path` names a folder on this machine.
    public static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// The clip's start with its end or its duration; nil when none is given.
    static func clipRange(_ request: FileRequest) throws(PlanError) -> ClipRange? {
        guard request.clipFrom != nil || request.clipTo != nil || request.clipDurationSeconds != nil else { return nil }
        guard let from = request.clipFrom else { throw .clipStartMissing }
        let to: Date
        switch (request.clipTo, request.clipDurationSeconds) {
        case (let date?, nil): to = date
        case (nil, let seconds?): to = from.addingTimeInterval(Double(seconds))
        case (nil, nil): throw .clipEndMissing
        case (_?, _?): throw .clipEndTwice
        }
        guard to > from else { throw .clipEndNotAfterStart(from: from, to: to) }
        return ClipRange(from: from, to: to)
    }

    /// A clip is copied into a stream or one .mp4 file, never encoded or cut.
    static func checkClip(_ request: FileRequest, encoding: [String]) throws(PlanError) {
        if let outputFile = request.outputFile {
            guard request.clipFrom != nil || request.clipTo != nil || request.clipDurationSeconds != nil else {
                throw .clipFileWithoutClip(outputFile)
            }
            guard outputFile.hasSuffix(".mp4") else { throw .clipFileName(outputFile) }
            if request.outputDirectory != nil || request.publishing {
                throw .clipFileAndStream(request.publishing ? "publish" : "out")
            }
        }
        if let conflict = encoding.first { throw .clipEncoded(conflict) }
        if !request.cutMicroseconds.isEmpty { throw .clipCuts }
    }
}
