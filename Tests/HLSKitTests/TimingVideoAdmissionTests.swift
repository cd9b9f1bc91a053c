import Testing
@testable import HLSKit

@Suite struct TimingVideoAdmissionTests {
    /// Frames at 30 fps while nothing is encoded: the queue's eight, then one every quarter second
    /// up to the hard limit, then none.
    @Test func aStalledQueueStillTakesAFrameEveryQuarterSecondUpToItsHardLimit() {
        var admission = VideoAdmission()
        let frameMicroseconds: Int64 = 33_333
        let taken = (0..<300).map { Int64($0) * frameMicroseconds }.filter { admission.take(captureMicroseconds: $0) }
        #expect(taken.count == VideoAdmission.hardLimit)
        #expect(taken.prefix(VideoAdmission.queueLimit) == ArraySlice((0..<8).map { Int64($0) * frameMicroseconds }))
        let gaps = zip(taken.dropFirst(VideoAdmission.queueLimit), taken.dropFirst(VideoAdmission.queueLimit - 1)).map { $0 - $1 }
        #expect(gaps.allSatisfy { $0 >= VideoAdmission.longestGapMicroseconds && $0 < VideoAdmission.longestGapMicroseconds + frameMicroseconds })
        #expect(admission.queued == VideoAdmission.hardLimit)
    }

    /// Once frames are encoded again, the ordinary limit holds: a frame soon after the last one taken
    /// waits for room below it.
    @Test func belowTheHardLimitOnlyOverdueFramesPassTheQueueLimit() {
        var admission = VideoAdmission()
        let filled = (0..<VideoAdmission.queueLimit).map { admission.take(captureMicroseconds: Int64($0) * 1000) }
        #expect(filled.allSatisfy { $0 })
        let full = admission.take(captureMicroseconds: 8000)
        admission.release()
        let afterRoom = admission.take(captureMicroseconds: 9000)
        let soonAfter = admission.take(captureMicroseconds: 10_000)
        let overdue = admission.take(captureMicroseconds: 9000 + VideoAdmission.longestGapMicroseconds)
        #expect(!full && afterRoom && !soonAfter && overdue)
        #expect(admission.queued == VideoAdmission.queueLimit + 1)
    }
}
