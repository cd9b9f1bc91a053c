import Foundation
import HLSKit
@testable import HLSMedia

/// Synthetic pictures and sounds for the codec tests.
enum CodecTestMedia {
    /// A yuv420p frame with a moving diagonal pattern; from `sceneChangeFrame` on the
    /// pattern turns into something unrelated, which an encoder with scene-cut detection
    /// would start a new GOP for.
    static func pattern(index: Int, width: Int, height: Int, timeBase: Rational,
                        sceneChangeFrame: Int = .max) throws -> Frame {
        let frame = try Frame.yuv420p(width: width, height: height, timeBase: timeBase)
        frame.pts = Int64(index)
        let changed = index >= sceneChangeFrame
        for plane in 0..<3 {
            let (base, bytesPerRow) = frame.plane(plane)
            let planeWidth = plane == 0 ? width : width / 2
            let planeHeight = plane == 0 ? height : height / 2
            for y in 0..<planeHeight {
                for x in 0..<planeWidth {
                    let value = changed ? (x * 7 ^ y * 13) &+ index * 3 : x + y + index * 2
                    base[y * bytesPerRow + x] = UInt8(truncatingIfNeeded: plane == 0 ? value : value / 4 + 64)
                }
            }
        }
        return frame
    }

    /// `sampleCount` samples of a 440 Hz sine as fltp, `pts` counted in samples.
    static func sine(startSample: Int, sampleCount: Int, sampleRate: Int, channelCount: Int) throws -> Frame {
        let frame = try Frame.fltp(sampleCount: sampleCount, sampleRate: sampleRate, channelCount: channelCount)
        frame.pts = Int64(startSample)
        for channel in 0..<channelCount {
            let samples = UnsafeMutableRawPointer(frame.plane(channel).base).assumingMemoryBound(to: Float.self)
            for index in 0..<sampleCount {
                let time = Double(startSample + index) / Double(sampleRate)
                samples[index] = Float(0.5 * sin(2 * Double.pi * 440 * time))
            }
        }
        return frame
    }

    /// Gives each sample the time to the next one as its duration; the last one gets `lastDuration`.
    static func timed(_ samples: [EncodedSample], shiftedBy offset: Int64, lastDuration: Int64) -> [TimedSample] {
        samples.indices.map { index in
            let sample = samples[index]
            let duration = index + 1 < samples.count ? samples[index + 1].decodeTime - sample.decodeTime : lastDuration
            return TimedSample(decodeTime: sample.decodeTime + offset, durationTicks: UInt32(duration),
                               compositionOffset: sample.compositionOffset, isSync: sample.isSync, data: sample.data)
        }
    }
}
