import Foundation
import HLSKit
import HLSTestSupport
import Testing

/// `hlscap live` recording a real ALSA capture PCM: the `file` plugin reading a FIFO that
/// Tests/Tools/alsa_fifo.py fills at real-time pace (DESIGN.md).
@Suite(.serialized) struct LiveMicrophoneTests {
    static let pcmName = "hlscapfifo"
    static let captureSeconds = 5.0
    /// The writer outlasts the capture: after its end the plugin would deliver silence.
    static let writerSeconds = 60.0
    /// The AAC encoder's priming and the last partial frame make the audio a little shorter or longer.
    static let durationToleranceSeconds = 0.1
    static let configPrefix = "ALSA_CONFIG_PATH="

    /// (start, duration) in seconds of stream `stream` in `path`, from ffprobe.
    func timing(_ path: String, stream: String) throws -> (start: Double, duration: Double) {
        let result = try ExternalTools.run("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries",
                                                       "stream=start_time,duration", "-of", "csv=p=0", path])
        let values = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").compactMap { Double($0) }
        guard values.count == 2 else {
            throw ExternalToolError.unexpectedOutput(command: "ffprobe \(path)", output: result.stdout + result.stderr)
        }
        return (values[0], values[1])
    }

    @Test func aFifoFedALSADeviceBecomesTheStreamsAudio() throws {
        let directory = try PackagedStream.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let device = directory.appendingPathComponent("alsa")
        try FileManager.default.createDirectory(at: device, withIntermediateDirectories: true)
        let writer = try BackgroundProcess("python3", [
            ExternalTools.toolsDirectory.appendingPathComponent("alsa_fifo.py").path, device.path,
            String(Self.writerSeconds)])
        defer { writer.send(SIGKILL) }
        let deadline = Date(timeIntervalSinceNow: LiveStream.startupSeconds)
        var configLine: Substring?
        while configLine == nil && Date() < deadline && writer.isRunning {
            configLine = writer.stdout.split(separator: "\n").first { $0.hasPrefix(Self.configPrefix) }
            Thread.sleep(forTimeInterval: LiveStream.pollSeconds)
        }
        let configPath = try #require(configLine, "alsa_fifo.py printed no configuration: \(writer.stderr)")
            .dropFirst(Self.configPrefix.count)

        let stream = directory.appendingPathComponent("stream")
        let hlscap = try ExternalTools.startHlscap([
            "live", "--video", "test", "--audio", Self.pcmName, "--size", "640x360",
            "--duration", String(Self.captureSeconds), "--out", stream.path, "--quiet"],
            environment: ["ALSA_CONFIG_PATH": String(configPath)])
        let result = hlscap.finish(timeoutSeconds: LiveStream.stopSeconds)
        #expect(result.exitStatus == 0 && !result.timedOut, "\(result.stderr)")

        let report = try ExternalTools.checkFinishedLiveStream(directory: stream,
                                                               copyDirectory: directory.appendingPathComponent("copy"))
        #expect(report.violations.isEmpty && report.endList, "\(report.violations)")
        let concatenated = try #require(report.concatenated)
        let errors = try ExternalTools.ffmpegDecodeErrors(path: concatenated)
        #expect(errors.isEmpty, "\(errors)")
        let audio = try timing(concatenated, stream: "a:0")
        let video = try timing(concatenated, stream: "v:0")
        #expect(abs(audio.duration - audio.start - Self.captureSeconds) <= Self.durationToleranceSeconds,
                "audio from \(audio.start) s to \(audio.duration) s")
        #expect(abs(audio.start - video.start) <= Self.durationToleranceSeconds,
                "audio starts at \(audio.start) s, video at \(video.start) s")
        // The writer's sample counter is a full-scale ramp: nothing like silence.
        let level = try ExternalTools.run("ffmpeg", ["-nostdin", "-hide_banner", "-i", concatenated, "-map", "0:a:0",
                                                     "-af", "volumedetect", "-f", "null", "-"])
        #expect(level.stderr.contains("max_volume: 0.0 dB") || level.stderr.contains("max_volume: -0."),
                "\(level.stderr.split(separator: "\n").filter { $0.contains("volume") })")
    }
}
