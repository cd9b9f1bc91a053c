import Testing
@testable import HLSMedia

@Suite struct CaptureSampleClockTests {
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
        clock.receive(samples: 48_000, clockMicroseconds: 0)
        // 40 ms late: within the threshold, the count still rules.
        clock.receive(samples: 48_000, clockMicroseconds: 1_040_000)
        #expect(clock.resyncCount == 0)
        #expect(clock.time(ofSample: 48_000) == 1_000_000)
        // 60 ms late (samples were lost): the anchor moves to the clock.
        clock.receive(samples: 1024, clockMicroseconds: 2_060_000)
        #expect(clock.resyncCount == 1)
        #expect(clock.time(ofSample: 96_000) == 2_060_000)
        #expect(clock.time(ofSample: 96_000 + 48) == 2_061_000)
    }
}
