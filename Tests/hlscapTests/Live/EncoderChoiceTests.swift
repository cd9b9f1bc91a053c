import Foundation
import HLSTestSupport
import Testing

/// `--encoder`: a hardware encoder named but missing exits 69 saying what is missing and writes nothing;
/// `auto` uses what the machine has and otherwise encodes in software with one line saying why.
@Suite(.serialized) struct EncoderChoiceTests {
    /// What each hardware encoder needs, as the refusal names it.
    static let needs = ["vaapi": "/dev/dri/renderD128", "v4l2m2m": "/dev/video", "nvenc": "libcuda.so.1"]

    @Test(arguments: ["vaapi", "v4l2m2m", "nvenc"])
    func aNamedHardwareEncoderIsUsedOrRefusedNamingWhatIsMissing(name: String) throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let run = try ExternalTools.runHlscap(["live"] + LiveStream.testSource + ["--duration", "3", "--encoder", name,
                                                                                 "--out", stream.path, "--quiet"])
        if run.exitStatus == 69 {
            let lines = run.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].contains("--encoder \(name): ") && lines[0].contains(Self.needs[name]!)
                    && lines[0].contains("--encoder x264"), "\(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: stream.appendingPathComponent("playlist.m3u8").path))
        } else {
            // A machine with the hardware: the stream is made with it.
            #expect(run.succeeded, "\(run.stderr)")
            try ExternalTools.validateStream(stream)
        }
    }

    @Test func autoFallsBackToSoftwareWithOneLine() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let stream = directory.appendingPathComponent("stream")
        let run = try ExternalTools.runHlscap(["live"] + LiveStream.testSource + ["--duration", "3", "--encoder", "auto",
                                                                                 "--out", stream.path, "--quiet"])
        #expect(run.succeeded, "\(run.stderr)")
        try ExternalTools.validateStream(stream)
        let lines = run.stderr.split(separator: "\n")
        // Without hardware, one line names each encoder tried and why it could not, then libx264.
        #expect(lines.isEmpty || (lines.count == 1 && lines[0].contains("--encoder auto: no hardware encoder here")
                                  && Self.needs.keys.allSatisfy { lines[0].contains("\($0): ") }
                                  && lines[0].hasSuffix("encoding with libx264")), "\(run.stderr)")
    }

    @Test func anUnknownEncoderIsAUsageError() throws {
        let run = try ExternalTools.runHlscap(["live", "--video", "test", "--encoder", "quicksync", "--out", "/tmp/never"])
        #expect(run.exitStatus == 64 && run.stderr.contains("--encoder quicksync: give x264"), "\(run.stderr)")
    }
}
