import Foundation
import HLSTestSupport
import Testing
@testable import HLSKit

/// A live playlist renders each segment's lines once, as it is listed; its text must be, at every
/// update, exactly what rendering the whole playlist from scratch gives.
@Suite struct PlaylistIncrementalRenderTests {
    private static let keys = [
        nil,
        MediaPlaylist.Key(uri: "keys/a.key"),
        MediaPlaylist.Key(uri: "keys/b.key"),
        MediaPlaylist.Key(uri: "keys/c.key", iv: "0x000102030405060708090a0b0c0d0e0f", method: .sampleAES),
    ]

    /// Random histories: windows of several sizes, discontinuities, init sections and keys that change,
    /// segments with and without a date; every update compared, and a stream resumed half-way.
    @Test(arguments: [0, 3, 5, 40])
    func everyUpdateRendersAsTheWholePlaylistWould(windowSize: Int) {
        for seed in UInt64(1)...20 {
            var random = SeededGenerator(state: seed * 7919 + UInt64(windowSize))
            var live = LivePlaylist(targetDurationSeconds: 2, windowSize: windowSize)
            var map = "init.mp4"
            var key = Self.keys[0]
            for number in 1...120 {
                if Int.random(in: 0..<10, using: &random) == 0 { live.markDiscontinuity() }
                if Int.random(in: 0..<12, using: &random) == 0 { map = "init-\(number).mp4" }
                if Int.random(in: 0..<8, using: &random) == 0 { key = Self.keys.randomElement(using: &random)! }
                var segment = MediaPlaylist.Segment(uri: String(format: "seg/%06d.m4s", number),
                                                    durationSeconds: Double.random(in: 1.5...2.0, using: &random),
                                                    mapURI: Int.random(in: 0..<6, using: &random) == 0 ? nil : map)
                if Bool.random(using: &random) {
                    segment.programDateTime = Date(timeIntervalSince1970: 1_764_000_000 + Double(number) * 2)
                }
                segment.key = key
                _ = live.append(segment)
                #expect(live.render() == live.playlist.render(), "seed \(seed), segment \(number)")
                if number == 60 {
                    live = LivePlaylist(resuming: live.playlist, windowSize: windowSize)
                    #expect(live.render() == live.playlist.render(), "seed \(seed), resumed")
                }
            }
            live.end()
            #expect(live.render() == live.playlist.render(), "seed \(seed), ended")
        }
    }
}
