import Foundation

/// The progress line of `hlscap file` on a terminal: percent, media time, speed and time left.
final class Progress {
    /// Redraw at most this often: a few times a second.
    static let redrawIntervalMicroseconds: Int64 = 250_000

    var totalSeconds: Double?
    private let startMicroseconds = Progress.nowMicroseconds()
    private var lastDrawMicroseconds: Int64 = 0
    private var drewLine = false

    /// nil unless stderr is a terminal: scripts and logs get only the summary line.
    static func onTerminal() -> Progress? {
        isatty(STDERR_FILENO) != 0 ? Progress() : nil
    }

    func advance(toSeconds mediaSeconds: Double) {
        let now = Self.nowMicroseconds()
        guard now - lastDrawMicroseconds >= Self.redrawIntervalMicroseconds else { return }
        lastDrawMicroseconds = now
        let elapsed = Double(now - startMicroseconds) / 1_000_000
        let speed = elapsed > 0 ? mediaSeconds / elapsed : 0
        var line = String(format: "%@  %.1fx", Self.clock(mediaSeconds), speed)
        if let totalSeconds, totalSeconds > 0 {
            let fraction = min(1, mediaSeconds / totalSeconds)
            let left = speed > 0 ? (totalSeconds - mediaSeconds) / speed : 0
            line = String(format: "%3.0f%%  ", fraction * 100) + line + "  ETA " + Self.clock(max(0, left))
        }
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
        drewLine = true
    }

    func clear() {
        if drewLine { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    private static func nowMicroseconds() -> Int64 {
        Int64(DispatchTime.now().uptimeNanoseconds / 1000)
    }

    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds)
        return String(format: "%02d:%02d:%02d", whole / 3600, whole / 60 % 60, whole % 60)
    }
}
