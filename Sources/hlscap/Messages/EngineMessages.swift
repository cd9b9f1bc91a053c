import Foundation
import HLSEngine

extension EngineMessage {
    /// The line the user reads, after `hlscap: `.
    var line: String {
        switch self {
        case .deviceLost(let error):
            "warning: \(error); waiting for it to come back (--reconnect)"
        case .deviceBack(let device, let seconds):
            String(format: "%@ is back after %.1f s; the stream goes on after a discontinuity", device, seconds)
        case .copiedSourceHeldBack(let source, let waiting):
            "warning: \(waiting) samples of \(source) wait to be written; it is read only as fast as they are "
                + "written from now on, so its sender may drop pictures: give fewer or smaller rungs, or a faster --preset"
        case .uploadDropped(let path):
            "warning: the upload backlog is full; \(path) will not reach the origin"
        case .streamStopped(let error):
            "warning: \(error); the stream stopped, the recording goes on"
        case .recordingStopped(let path, let reason):
            "warning: the recording \(path) stopped: \(reason); the stream goes on"
        case .recordingFileStarted(let path):
            "recording into \(path)"
        case .recordingFileFinished(let path, let byteCount):
            String(format: "recorded %@ (%.1f MB)", path, Double(byteCount) / 1_000_000)
        case .recordingRemoved(let path, let reason, let byteCount):
            String(format: "deleted %@: %@ (%.1f MB)", path, reason.rawValue, Double(byteCount) / 1_000_000)
        case .removalFailed(let error):
            "warning: \(error)"
        case .takeBackFailed(let error):
            "warning: \(error); it is part of the stream that failed: delete it by hand"
        case .waitingForRetention(let fileCount, let seconds):
            String(format: "the stream has ended; %d %@ that left the playlist %@ deleted in %.0f s, when no "
                   + "viewer can still ask for them (RFC 8216bis 6.2.2); Ctrl-C again leaves them for --resume to delete",
                   fileCount, fileCount == 1 ? "file" : "files", fileCount == 1 ? "is" : "are", seconds.rounded(.up))
        case .leftForNextRun(let fileCount):
            "left \(fileCount) \(fileCount == 1 ? "file" : "files") that left the playlist; --resume in the same "
                + "directory deletes them once no viewer can still ask for them"
        case .endFailed(let error):
            "warning: \(error); the playlist may lack EXT-X-ENDLIST"
        }
    }

    /// Writes the line to stderr.
    @Sendable static func print(_ message: EngineMessage) {
        FileHandle.standardError.write(Data("hlscap: \(message.line)\n".utf8))
    }
}
