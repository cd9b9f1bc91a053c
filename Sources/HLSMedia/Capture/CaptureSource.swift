import HLSKit

/// What a capture source hands its handler, on the source's own thread.
public enum CaptureEvent {
    /// A yuv420p picture; `pts` in microseconds on `MonotonicClock`.
    case video(Frame)
    /// A block of samples in the format the device delivered; `pts` in microseconds on
    /// `MonotonicClock`, derived from the count of samples received.
    case audio(Frame)
    /// A sample of one of the source's `copiedTracks`, handed on without decoding; its decode time
    /// is on `MonotonicClock`, in its track's timescale.
    case copied(EncodedSample)
    /// A new measurement of the audio device's sample clock against the system clock: parts per
    /// million above its nominal rate, and how often samples were lost so far (see `SampleClock`).
    case audioClock(partsPerMillion: Double, resyncs: Int)
    /// The device failed or disappeared; no event follows.
    case failed(CaptureError)
    /// The device failed or disappeared, and the source waits for it to come back (its `reconnect`
    /// setting): `.restored` comes when it has, unless the source is stopped first.
    case lost(CaptureError)
    /// The device is back after `.lost`, opened again; its frames follow, on a new timeline (a microphone's
    /// sample clock starts again).
    case restored
    /// The source has nothing more to give (a test source's duration is over, an input pipe
    /// closed); no event follows.
    case ended
}

/// What a source delivers.
public struct CaptureKinds: OptionSet, Sendable {
    public let rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let video = CaptureKinds(rawValue: 1)
    public static let audio = CaptureKinds(rawValue: 2)
}

/// A camera, a microphone or a synthetic source that reads on its own thread: what the live engine
/// captures. A new kind of input is a new type that conforms; the engine asks it, not its type.
///
/// `start` opens the device, so an unusable device fails there with a `CaptureError`;
/// afterwards every result arrives through the handler, one event at a time. After `stop()`
/// returns the handler is not called again; calling `stop()` from inside the handler is allowed.
public protocol CaptureSource: AnyObject {
    /// The device as the user named it, for messages.
    var name: String { get }
    var delivers: CaptureKinds { get }
    /// Whether frames come at the source's own pace, as a device's do: when the writing queue falls
    /// behind, late video frames are dropped. A source that is not live (a test source making frames
    /// as fast as it can) waits for the queue instead, and ends on its own.
    var isLive: Bool { get }
    /// What keeps each of its tracks flowing while the device is away (`.lost` until `.restored`), as the
    /// device would have delivered it; empty when the source is never lost.
    var standIns: [StandInSource.Content] { get }
    /// Tracks the source delivers already encoded (`.copied`): the engine writes them as they are instead
    /// of encoding that kind. A sample's track is its position here.
    var copiedTracks: [TrackDescription] { get }
    func start(handler: @escaping (CaptureEvent) -> Void) throws
    func stop()
}

extension CaptureSource {
    public var isLive: Bool { true }
    public var standIns: [StandInSource.Content] { [] }
    public var copiedTracks: [TrackDescription] { [] }
}

/// A capture device that cannot be opened, or that failed while it was being read.
public struct CaptureError: Error, Equatable, CustomStringConvertible {
    /// The device as the user named it: "/dev/video0", "hw:1,0", "test".
    public var device: String
    public var message: String
    /// There is no such device (as opposed to one that cannot be used).
    public var isMissing: Bool
    /// A network input that refused, did not answer or is not up: a service, not a device, is missing.
    public var isUnreachable: Bool
    /// An https server whose certificate is not trusted: another authority may be.
    public var isUntrusted: Bool

    public init(device: String, message: String, isMissing: Bool = false, isUnreachable: Bool = false,
                isUntrusted: Bool = false) {
        self.device = device
        self.message = message
        self.isMissing = isMissing
        self.isUnreachable = isUnreachable
        self.isUntrusted = isUntrusted
    }

    public var description: String { "\(device): \(message)" }
}
