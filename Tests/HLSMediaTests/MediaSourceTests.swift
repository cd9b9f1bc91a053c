import Foundation
@testable import HLSMedia
import Testing

/// What `MediaSource` takes for a URL, and how it names one in messages.
struct MediaSourceTests {
    @Test func aURLIsASchemeAndTwoSlashes() {
        #expect(MediaSource.Configuration.isURL("rtsp://camera/stream"))
        #expect(MediaSource.Configuration.isURL("srt://:9000"))
        #expect(MediaSource.Configuration.isURL("rtp+tcp://host"))
        #expect(!MediaSource.Configuration.isURL("/dev/video0"))
        #expect(!MediaSource.Configuration.isURL("recordings/a://b.mp4"))
        #expect(!MediaSource.Configuration.isURL("://nothing"))
    }

    @Test func aPasswordNeverReachesAMessage() {
        #expect(MediaSource.displayName("rtsp://admin:s3cret@10.0.0.5:554/Streaming/101") == "rtsp://admin@10.0.0.5:554/Streaming/101")
        #expect(MediaSource.displayName("rtsp://admin@10.0.0.5/a") == "rtsp://admin@10.0.0.5/a")
        #expect(MediaSource.displayName("rtsp://10.0.0.5/a@b:c") == "rtsp://10.0.0.5/a@b:c")
        #expect(MediaSource.displayName("clip.mp4") == "clip.mp4")
    }

    /// Each scheme gets only the options its demuxer takes: an option nothing takes is an error.
    @Test func optionsFollowTheScheme() {
        var configuration = MediaSource.Configuration(location: "RTSP://camera/1")
        configuration.rtspTransport = "udp"
        #expect(MediaSource.options(for: configuration) == ["rtsp_transport": "udp"])
        #expect(MediaSource.options(for: .init(location: "srt://host:9000")).isEmpty)
    }

    @Test func aMissingFileIsMissing() {
        #expect(throws: CaptureError.self) { try MediaSource(.init(location: "/nonexistent/clip.mp4")) }
        do {
            _ = try MediaSource(.init(location: "/nonexistent/clip.mp4"))
        } catch {
            #expect(error.isMissing && error.device == "/nonexistent/clip.mp4" && !error.message.hasPrefix("/nonexistent"),
                    "\(error)")
        }
    }
}
