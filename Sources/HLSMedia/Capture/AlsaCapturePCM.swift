import Foundation

/// An ALSA capture PCM of a sound card, as `/proc/asound/pcm` lists it.
public struct AlsaCapturePCM: Equatable, Sendable {
    public var card: Int
    public var device: Int
    /// The PCM's name, such as "ALC892 Analog" or "Loopback PCM".
    public var name: String

    public init(card: Int, device: Int, name: String) {
        self.card = card
        self.device = device
        self.name = name
    }

    /// The name to give `--audio`, such as "hw:1,0".
    public var pcmName: String { "hw:\(card),\(device)" }

    public static let procPath = "/proc/asound/pcm"

    /// The capture PCMs of every sound card; empty when the machine has none.
    public static func all(procPath: String = procPath) -> [AlsaCapturePCM] {
        guard let text = try? String(contentsOfFile: procPath, encoding: .utf8) else { return [] }
        return parse(text)
    }

    /// Parses lines such as `01-00: Loopback PCM : Loopback PCM : playback 8 : capture 8`,
    /// keeping those that can capture.
    static func parse(_ text: String) -> [AlsaCapturePCM] {
        text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard fields.count >= 3, fields.dropFirst(3).contains(where: { $0.hasPrefix("capture") }) else { return nil }
            let numbers = fields[0].split(separator: "-").compactMap { Int($0) }
            guard numbers.count == 2 else { return nil }
            return AlsaCapturePCM(card: numbers[0], device: numbers[1], name: fields[1])
        }
    }
}
