import HLSKit
import Testing
@testable import HLSMedia

@Suite struct CaptureFormatChoiceTests {
    static let yuyv = CameraPixelFormat("YUYV", name: "YUYV 4:2:2")
    static let nv12 = CameraPixelFormat("NV12", name: "Y/UV 4:2:0")
    static let mjpeg = CameraPixelFormat("MJPG", name: "Motion-JPEG", isCompressed: true)
    static let h264 = CameraPixelFormat("H264", name: "H.264", isCompressed: true)

    static func offer(_ format: CameraPixelFormat, _ width: Int, _ height: Int, _ rates: [Int32]) -> CameraFormatOffer {
        CameraFormatOffer(pixelFormat: format, width: width, height: height, frameRates: rates.map { Rational($0, 1) })
    }

    /// A typical USB webcam: raw YUYV is slow at large sizes, MJPEG is fast everywhere.
    static let webcam = [
        offer(yuyv, 640, 480, [30, 15]), offer(yuyv, 1280, 720, [10, 5]), offer(yuyv, 1920, 1080, [5]),
        offer(mjpeg, 640, 480, [30, 15]), offer(mjpeg, 1280, 720, [30, 15]), offer(mjpeg, 1920, 1080, [30]),
    ]

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var offers: [CameraFormatOffer]
        var width: Int, height: Int, fps: Rational
        var expected: CameraFormatChoice?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "webcam 720p30: only MJPEG reaches 30 fps", offers: webcam, width: 1280, height: 720, fps: Rational(30, 1),
             expected: CameraFormatChoice(pixelFormat: mjpeg, width: 1280, height: 720, frameRate: Rational(30, 1))),
        Case(name: "webcam 720p10: raw YUYV reaches it", offers: webcam, width: 1280, height: 720, fps: Rational(10, 1),
             expected: CameraFormatChoice(pixelFormat: yuyv, width: 1280, height: 720, frameRate: Rational(10, 1))),
        Case(name: "webcam 480p30: raw before MJPEG at the same rate", offers: webcam, width: 640, height: 480,
             fps: Rational(30, 1),
             expected: CameraFormatChoice(pixelFormat: yuyv, width: 640, height: 480, frameRate: Rational(30, 1))),
        Case(name: "largest rate at or below the one asked for", offers: webcam, width: 1280, height: 720,
             fps: Rational(20, 1),
             expected: CameraFormatChoice(pixelFormat: mjpeg, width: 1280, height: 720, frameRate: Rational(15, 1))),
        Case(name: "nothing at or below: the slowest above", offers: [offer(yuyv, 640, 480, [60, 30])],
             width: 640, height: 480, fps: Rational(25, 1),
             expected: CameraFormatChoice(pixelFormat: yuyv, width: 640, height: 480, frameRate: Rational(30, 1))),
        Case(name: "NTSC rate 30000/1001 is below 30", offers: [CameraFormatOffer(
                pixelFormat: nv12, width: 1280, height: 720, frameRates: [Rational(60000, 1001), Rational(30000, 1001)])],
             width: 1280, height: 720, fps: Rational(30, 1),
             expected: CameraFormatChoice(pixelFormat: nv12, width: 1280, height: 720, frameRate: Rational(30000, 1001))),
        Case(name: "size not offered: largest that fits", offers: webcam, width: 1024, height: 768, fps: Rational(30, 1),
             expected: CameraFormatChoice(pixelFormat: yuyv, width: 640, height: 480, frameRate: Rational(30, 1))),
        Case(name: "nothing fits: the smallest", offers: [offer(yuyv, 1920, 1080, [30]), offer(yuyv, 1280, 720, [30])],
             width: 320, height: 240, fps: Rational(30, 1),
             expected: CameraFormatChoice(pixelFormat: yuyv, width: 1280, height: 720, frameRate: Rational(30, 1))),
        Case(name: "device order among raw formats", offers: [offer(nv12, 640, 480, [30]), offer(yuyv, 640, 480, [30])],
             width: 640, height: 480, fps: Rational(30, 1),
             expected: CameraFormatChoice(pixelFormat: nv12, width: 640, height: 480, frameRate: Rational(30, 1))),
        Case(name: "unreadable formats are ignored", offers: [offer(h264, 1280, 720, [30]), offer(mjpeg, 640, 480, [30])],
             width: 1280, height: 720, fps: Rational(30, 1),
             expected: CameraFormatChoice(pixelFormat: mjpeg, width: 640, height: 480, frameRate: Rational(30, 1))),
        Case(name: "nothing usable", offers: [offer(h264, 1280, 720, [30])], width: 1280, height: 720,
             fps: Rational(30, 1), expected: nil),
        Case(name: "no offers", offers: [], width: 1280, height: 720, fps: Rational(30, 1), expected: nil),
    ]

    @Test(arguments: cases)
    func choice(_ test: Case) {
        #expect(CameraFormatChoice.choose(offers: test.offers, width: test.width, height: test.height,
                                          frameRate: test.fps) == test.expected)
    }

    @Test func fourCCRoundTripsAndNamesFFmpegFormats() {
        #expect(Self.yuyv.fourCC == 0x5659_5559)
        #expect(CameraPixelFormat(fourCC: 0x4750_4A4D, name: "", isCompressed: true).code == "MJPG")
        // V4L2_PIX_FMT_Y16_BE: 'Y16 ' with the big-endian bit.
        #expect(CameraPixelFormat(fourCC: 0x2036_3159 | 1 << 31, name: "", isCompressed: false).code == "Y16 -BE")
        #expect(Self.yuyv.ffmpegInputFormat == "yuyv422")
        #expect(Self.mjpeg.ffmpegInputFormat == "mjpeg")
        #expect(Self.h264.ffmpegInputFormat == "h264")
        #expect(Self.h264.inputFormat == .h264)
        #expect(Self.mjpeg.inputFormat == .mjpeg)
        #expect(Self.nv12.inputFormat == .raw)
        #expect(CameraPixelFormat("HEVC", isCompressed: true).inputFormat == nil)
    }

    /// A camera offering raw, MJPEG and H.264, as UVC H.264 webcams do.
    static let h264Webcam = webcam + [offer(h264, 1280, 720, [30, 15]), offer(h264, 1920, 1080, [30])]

    @Test func h264IsChosenOnlyWhenAskedFor() {
        let byDefault = CameraFormatChoice.choose(offers: Self.h264Webcam, width: 1920, height: 1080, frameRate: Rational(30, 1))
        #expect(byDefault?.pixelFormat == Self.mjpeg)
        let h264 = CameraFormatChoice.choose(offers: Self.h264Webcam, width: 1920, height: 1080, frameRate: Rational(30, 1),
                                             inputFormats: [.h264])
        #expect(h264 == CameraFormatChoice(pixelFormat: Self.h264, width: 1920, height: 1080, frameRate: Rational(30, 1)))
        let raw = CameraFormatChoice.choose(offers: Self.h264Webcam, width: 1280, height: 720, frameRate: Rational(30, 1),
                                            inputFormats: [.raw])
        #expect(raw == CameraFormatChoice(pixelFormat: Self.yuyv, width: 1280, height: 720, frameRate: Rational(10, 1)))
        #expect(CameraFormatChoice.choose(offers: Self.webcam, width: 1280, height: 720, frameRate: Rational(30, 1),
                                          inputFormats: [.h264]) == nil)
    }

    @Test func nativeH264FitsOnlyAtTheSizeAndRateAskedFor() {
        #expect(CameraFormatChoice.nativeH264(offers: Self.h264Webcam, width: 1280, height: 720, frameRate: Rational(15, 1))
            == CameraFormatChoice(pixelFormat: Self.h264, width: 1280, height: 720, frameRate: Rational(15, 1)))
        // Another size, a rate the camera does not reach, or a camera without H.264: not copied.
        #expect(CameraFormatChoice.nativeH264(offers: Self.h264Webcam, width: 640, height: 480, frameRate: Rational(30, 1)) == nil)
        #expect(CameraFormatChoice.nativeH264(offers: Self.h264Webcam, width: 1920, height: 1080, frameRate: Rational(60, 1)) == nil)
        #expect(CameraFormatChoice.nativeH264(offers: Self.h264Webcam, width: 1920, height: 1080, frameRate: Rational(25, 1)) == nil)
        #expect(CameraFormatChoice.nativeH264(offers: Self.webcam, width: 1280, height: 720, frameRate: Rational(30, 1)) == nil)
    }

    @Test func driverTimestampsOnTheMonotonicClockAreKept() {
        var timestamps = CameraTimestamps()
        let dequeued: Int64 = 5_000_000_000
        #expect(timestamps.captureTime(driverMicroseconds: dequeued - 40_000, dequeuedMicroseconds: dequeued) == dequeued - 40_000)
        #expect(timestamps.captureTime(driverMicroseconds: dequeued - 6_667, dequeuedMicroseconds: dequeued + 33_333)
            == dequeued - 6_667)
        #expect(timestamps.usesDriverTime)
    }

    /// A driver that stamps nothing (zero, as a Raspberry Pi's encoder does), stamps on another clock,
    /// stamps that stand still or go back: from then on the time each frame was dequeued, always increasing.
    @Test(arguments: [
        ("zero", [Int64(0), 0, 0], 0),
        ("missing", [nil, nil, nil], 0),
        ("wall clock", [1_700_000_000_000_000, 1_700_000_000_033_333, 1_700_000_000_066_667], 0),
        ("standing still", [4_999_990_000, 4_999_990_000, 4_999_990_000], 1),
        ("going back", [4_999_990_000, 4_999_900_000, 5_000_060_000], 1),
    ] as [(String, [Int64?], Int)])
    func unusableDriverTimestampsFallBackToTheCaptureClock(_ name: String, _ stamps: [Int64?], _ kept: Int) {
        var timestamps = CameraTimestamps()
        let dequeued: [Int64] = [5_000_000_000, 5_000_033_000, 5_000_066_000]
        let times = zip(stamps, dequeued).map { timestamps.captureTime(driverMicroseconds: $0, dequeuedMicroseconds: $1) }
        // The usable stamps before the first unusable one are kept; from there on, the capture clock.
        #expect(times == stamps.prefix(kept).map { $0! } + dequeued.dropFirst(kept))
        #expect(!timestamps.usesDriverTime)
        // Once on the capture clock, a good stamp does not bring the driver's clock back.
        #expect(timestamps.captureTime(driverMicroseconds: 5_000_090_000, dequeuedMicroseconds: 5_000_100_000) == 5_000_100_000)
    }

    /// Frames that waited in the driver's buffers are dequeued one right after another: on the capture
    /// clock each still comes a frame after the one before, never at the same instant.
    @Test func captureClockTimesAlwaysIncreaseByAFrame() {
        var timestamps = CameraTimestamps(frameMicroseconds: 33_333)
        #expect(timestamps.captureTime(driverMicroseconds: 0, dequeuedMicroseconds: 7_000) == 7_000)
        #expect(timestamps.captureTime(driverMicroseconds: 0, dequeuedMicroseconds: 7_000) == 40_333)
        #expect(timestamps.captureTime(driverMicroseconds: 0, dequeuedMicroseconds: 6_990) == 73_666)
        // Once the burst is drained, frames take their own dequeue times again.
        #expect(timestamps.captureTime(driverMicroseconds: 0, dequeuedMicroseconds: 200_000) == 200_000)
        // A stamp that goes back, in a burst read after it: a frame after the last good stamp.
        var burst = CameraTimestamps(frameMicroseconds: 33_333)
        #expect(burst.captureTime(driverMicroseconds: 5_000_000, dequeuedMicroseconds: 5_010_000) == 5_000_000)
        #expect(burst.captureTime(driverMicroseconds: 4_900_000, dequeuedMicroseconds: 5_010_010) == 5_033_333)
        #expect(burst.captureTime(driverMicroseconds: 0, dequeuedMicroseconds: 5_010_020) == 5_066_666)
    }

    @Test func alsaCapturePCMsFromProcAsoundPcm() {
        let text = """
            00-00: ALC892 Analog : ALC892 Analog : playback 1 : capture 1
            00-01: ALC892 Digital : ALC892 Digital : playback 1
            01-00: Loopback PCM : Loopback PCM : playback 8 : capture 8
            03-07: HDMI 1 : HDMI 1 : playback 1

            """
        #expect(AlsaCapturePCM.parse(text) == [AlsaCapturePCM(card: 0, device: 0, name: "ALC892 Analog"),
                                               AlsaCapturePCM(card: 1, device: 0, name: "Loopback PCM")])
        #expect(AlsaCapturePCM.parse(text).map(\.pcmName) == ["hw:0,0", "hw:1,0"])
        #expect(AlsaCapturePCM.all(procPath: "/nonexistent/pcm").isEmpty)
    }
}
