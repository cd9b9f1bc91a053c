import HLSKit
import HLSMedia
import HLSOutput

/// What the engine tells the user on the way that is not its outcome: warnings and notices. Libraries
/// never print; the command line turns each into a line.
public enum EngineMessage: Sendable {
    /// A device failed or went away; a stand-in keeps its track flowing while it is waited for.
    case deviceLost(CaptureError)
    /// A lost device is back after `seconds`; the stream goes on after a discontinuity.
    case deviceBack(device: String, seconds: Double)
    /// `waiting` copied samples of `source` wait to be written (a ladder's rungs encode more slowly than it
    /// sends): from now on it is read only as fast as they are written. Said once a run.
    case copiedSourceHeldBack(source: String, waiting: Int)
    /// The upload backlog is full: this segment will not reach the origin.
    case uploadDropped(path: String)
    /// Writing the stream failed, so the stream stopped; the recording beside it goes on.
    case streamStopped(StoreError)
    /// The recording beside the stream failed; the stream goes on.
    case recordingStopped(path: String, reason: String)
    /// A recording split by time started a file.
    case recordingFileStarted(path: String)
    /// A recording split by time finished a file whole.
    case recordingFileFinished(path: String, byteCount: Int)
    /// Retention deleted a recording file.
    case recordingRemoved(path: String, reason: RecordingRetention.Reason, byteCount: Int64)
    /// A file that left the playlist could not be deleted.
    case removalFailed(StoreError)
    /// A failed run could not remove a file it had stored.
    case takeBackFailed(StoreError)
    /// The stream has ended (ENDLIST is written); `fileCount` files that left the playlist are deleted
    /// in `seconds`, once no viewer holding an earlier playlist can still ask for them.
    case waitingForRetention(fileCount: Int, seconds: Double)
    /// A second interrupt left `fileCount` files that were waiting for their retention time; the next
    /// run that continues the stream deletes them when their time comes.
    case leftForNextRun(fileCount: Int)
    /// Ending the playlists at a second interrupt failed.
    case endFailed(StoreError)
}
