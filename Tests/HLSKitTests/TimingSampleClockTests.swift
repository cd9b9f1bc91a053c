import Testing
@testable import HLSKit

@Suite struct TimingSampleClockTests {
    @Test func oneSamplePacketsWithJitterAreTimedBySampleCount() {
        var clock = SampleClock(sampleRate: 48_000)
        let start: Int64 = 1_000_000
        // One sample per packet, each stamped up to ±3 ms off its true time; the first 3 ms early.
        for index in 0..<48_000 {
            let jitter = Int64((index * 7919) % 6001) - 3000
            clock.receive(samples: 1, clockMicroseconds: start + Int64(index) * 1_000_000 / 48_000 + jitter)
        }
        #expect(clock.sampleCount == 48_000)
        #expect(clock.resyncCount == 0)
        let anchor = start - 3000
        #expect(clock.time(ofSample: 0) == anchor)
        #expect(clock.time(ofSample: 48_000) == anchor + 1_000_000)
        #expect(clock.time(ofSample: 1024) == anchor + 21_333)
    }

    @Test func reanchorsOnlyBeyondTheThreshold() {
        var clock = SampleClock(sampleRate: 48_000, resyncThresholdMicroseconds: 50_000)
        // Half a second each: too little to measure the device's rate, so the count rules.
        clock.receive(samples: 24_000, clockMicroseconds: 0)
        // 40 ms late: within the threshold, the count still rules.
        clock.receive(samples: 24_000, clockMicroseconds: 540_000)
        #expect(clock.resyncCount == 0)
        #expect(clock.time(ofSample: 24_000) == 500_000)
        // 60 ms late (samples were lost): the anchor moves to the clock.
        clock.receive(samples: 1024, clockMicroseconds: 1_060_000)
        #expect(clock.resyncCount == 1)
        #expect(clock.time(ofSample: 48_000) == 1_060_000)
        #expect(clock.time(ofSample: 48_000 + 48) == 1_061_000)
    }

    /// A microphone 0.5 % fast (48,240 samples a real second, said to be 48 kHz), its packets stamped
    /// up to ±2 ms off: counted at 48 kHz its samples would be 0.5 % late, 50 ms after 10 s. The clock
    /// measures the rate and keeps every sample within 1 ms of when it was really captured.
    @Test(arguments: [5_000, -5_000, 100])
    func aDriftingDeviceIsTimedByItsRealRate(partsPerMillion: Int) {
        var clock = SampleClock(sampleRate: 48_000)
        let realRate = 48_000 * (1 + Double(partsPerMillion) / 1_000_000)
        let start: Int64 = 5_000_000
        var worstAfterSettling: Double = 0
        var first = true
        for packet in 0..<(60 * 48_000 / 1024) {
            let index = Int64(packet * 1024)
            let trueTime = Double(start) + Double(index) * 1_000_000 / realRate
            let jitter = Double((packet * 7919) % 4001 - 2000)
            // The first packet is stamped without jitter, so the timeline starts where the samples do.
            clock.receive(samples: 1024, clockMicroseconds: Int64(trueTime + (first ? 0 : jitter)))
            first = false
            if index > 10 * 48_000 {
                worstAfterSettling = max(worstAfterSettling, abs(Double(clock.time(ofSample: index)) - trueTime))
            }
        }
        #expect(clock.resyncCount == 0)
        #expect(worstAfterSettling <= 1_000, "\(worstAfterSettling) µs off")
        #expect(abs(clock.partsPerMillion - Double(partsPerMillion)) <= 50, "\(clock.partsPerMillion) ppm")
    }
}
