import Foundation
import Testing
@testable import HLSKit

@Suite("Publish: backoff and answers")
struct PublishBackoffTests {
    @Test func backoffDoublesFromAQuarterSecondUpToItsCap() {
        let backoff = Backoff()
        let delays = (1...8).map { backoff.delaySeconds(afterFailedAttempts: $0) }
        #expect(delays == [0.25, 0.5, 1, 2, 4, 8, 8, 8])
        #expect(backoff.delaySeconds(afterFailedAttempts: 1_000) == 8)
    }

    @Test func retryAfterReplacesTheBackoffWithinItsCap() {
        let backoff = Backoff()
        #expect(backoff.delaySeconds(afterFailedAttempts: 1, retryAfterSeconds: 3) == 3)
        #expect(backoff.delaySeconds(afterFailedAttempts: 6, retryAfterSeconds: 0) == 0)
        #expect(backoff.delaySeconds(afterFailedAttempts: 1, retryAfterSeconds: 86_400) == 60)
    }

    @Test func retryAfterIsReadAsSecondsOrAsAnHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_445_412_480)  // Wed, 21 Oct 2015 07:28:00 GMT
        #expect(Backoff.retryAfterSeconds("120", now: now) == 120)
        #expect(Backoff.retryAfterSeconds(" 5 ", now: now) == 5)
        #expect(Backoff.retryAfterSeconds("Wed, 21 Oct 2015 07:28:30 GMT", now: now) == 30)
        #expect(Backoff.retryAfterSeconds("Wed, 21 Oct 2015 07:27:00 GMT", now: now) == 0)
        #expect(Backoff.retryAfterSeconds("-1", now: now) == nil)
        #expect(Backoff.retryAfterSeconds("soon", now: now) == nil)
    }

    @Test(arguments: [
        (PublishResponse.status(201), PublishRequest.Method.put, RequestOutcome.succeeded),
        (.status(204), .put, .succeeded),
        (.status(503), .put, .retry(reason: "HTTP 503", afterSeconds: nil)),
        (.status(500), .put, .retry(reason: "HTTP 500", afterSeconds: nil)),
        (.status(429, retryAfterSeconds: 2), .put, .retry(reason: "HTTP 429", afterSeconds: 2)),
        (.status(408), .put, .retry(reason: "HTTP 408", afterSeconds: nil)),
        (.status(403), .put, .failed(reason: "HTTP 403")),
        (.status(404), .put, .failed(reason: "HTTP 404")),
        (.status(404), .delete, .succeeded),
        (.status(405), .delete, .succeeded),
        (.status(401), .delete, .failed(reason: "HTTP 401")),
        (.noResponse("reset", permanent: false), .put, .retry(reason: "reset", afterSeconds: nil)),
        (.noResponse("bad URL", permanent: true), .put, .failed(reason: "bad URL")),
    ])
    func answersAreSuccessesRetriesOrFailures(response: PublishResponse, method: PublishRequest.Method,
                                              expected: RequestOutcome) {
        #expect(RequestOutcome(response, method: method) == expected)
    }

    @Test func headerLinesNeedANameBeforeTheColon() {
        #expect(HTTPHeader(line: "Authorization: Bearer a:b") == HTTPHeader(name: "Authorization", value: "Bearer a:b"))
        #expect(HTTPHeader(line: "X-Empty:") == HTTPHeader(name: "X-Empty", value: ""))
        #expect(HTTPHeader(line: ": value") == nil)
        #expect(HTTPHeader(line: "no colon") == nil)
        #expect(HTTPHeader(line: "Two words: x") == nil)
    }

    @Test func contentTypeAndCachingFollowTheFileKind() {
        #expect(StreamPublisher.contentHeaders(forPath: "playlist.m3u8")
                    == ("application/vnd.apple.mpegurl", "no-cache"))
        #expect(StreamPublisher.contentHeaders(forPath: "init.mp4") == ("video/mp4", "max-age=31536000, immutable"))
        #expect(StreamPublisher.contentHeaders(forPath: "seg/000001.m4s")
                    == ("video/iso.segment", "max-age=31536000, immutable"))
    }
}

@Suite("Publish: schedule")
struct PublishScheduleTests {
    static let playlistPath = "playlist.m3u8"

    static func segmentPath(_ number: Int) -> String { StreamWriter.segmentPath(number) }

    /// A VOD playlist of segments 1…count, 2 s each, as StreamWriter makes it.
    static func playlist(segments count: Int) -> MediaPlaylist {
        MediaPlaylist(targetDurationSeconds: 2, mediaSequence: 1, playlistType: .vod, independentSegments: true,
                      segments: (1...count).map { .init(uri: segmentPath($0), durationSeconds: 2, mapURI: "init.mp4") },
                      endList: true)
    }

    /// A schedule holding the init section and `count` segments, with the playlist that lists them.
    static func schedule(segments count: Int, limits: PublishSchedule.Limits = .init()) -> PublishSchedule {
        var schedule = PublishSchedule(limits: limits)
        schedule.addFile("init.mp4", now: 0)
        for number in 1...count {
            _ = schedule.addSegment(segmentPath(number), durationSeconds: 2, now: 0)
        }
        schedule.updatePlaylist(playlist(segments: count))
        return schedule
    }

    static func job(_ jobs: [PublishSchedule.Job], uploading path: String) throws -> PublishSchedule.Job {
        try #require(jobs.first { $0.operation == .upload(path: path) })
    }

    static func listedSegments(_ job: PublishSchedule.Job?) throws -> [String] {
        guard case .uploadPlaylist(_, let text)? = job?.operation else {
            Issue.record("not a playlist upload: \(String(describing: job))")
            return []
        }
        return try MediaPlaylist.parse(text).segments.map(\.uri)
    }

    @Test func startsTheOldestFilesFirstWithinTheConcurrencyLimit() {
        var schedule = Self.schedule(segments: 5)
        let jobs = schedule.startJobs(now: 0)
        #expect(jobs.map(\.operation) == [.upload(path: "init.mp4"), .upload(path: Self.segmentPath(1)),
                                          .upload(path: Self.segmentPath(2))])
        #expect(jobs.allSatisfy { $0.attempt == 1 })
        #expect(schedule.startJobs(now: 1).isEmpty)
        #expect(schedule.status.queuedCount == 6)
    }

    @Test func playlistListsOnlyTheUploadedPrefixInSequenceOrder() throws {
        var schedule = Self.schedule(segments: 3)
        let first = schedule.startJobs(now: 0)
        // Segment 2 finishes before segment 1 and the init section: nothing may be listed yet.
        schedule.complete(try Self.job(first, uploading: Self.segmentPath(2)).id, response: .status(201), now: 0.1)
        #expect(schedule.remotePlaylist() == nil)
        let afterSegment2 = schedule.startJobs(now: 0.1)
        #expect(afterSegment2.map(\.operation) == [.upload(path: Self.segmentPath(3))])
        schedule.complete(try Self.job(first, uploading: Self.segmentPath(1)).id, response: .status(201), now: 0.2)
        #expect(schedule.remotePlaylist() == nil, "the init section is not up yet")
        schedule.complete(try Self.job(first, uploading: "init.mp4").id, response: .status(201), now: 0.3)
        let playlistJob = schedule.startJobs(now: 0.3).first
        #expect(try Self.listedSegments(playlistJob) == [Self.segmentPath(1), Self.segmentPath(2)])
    }

    @Test func theRemotePlaylistAdvancesOnlyWhenItsUploadSucceeded() throws {
        var schedule = Self.schedule(segments: 1)
        for job in schedule.startJobs(now: 0) { schedule.complete(job.id, response: .status(201), now: 0) }
        let firstTry = try #require(schedule.startJobs(now: 0).first)
        #expect(schedule.startJobs(now: 0).isEmpty, "one playlist request at a time")
        schedule.complete(firstTry.id, response: .status(503), now: 1)
        #expect(!schedule.report().finalPlaylistDelivered)
        #expect(schedule.nextWakeTime(after: 1) == 1.25)
        #expect(schedule.startJobs(now: 1.2).isEmpty)
        let secondTry = try #require(schedule.startJobs(now: 1.25).first)
        #expect(secondTry.attempt == 2)
        schedule.complete(secondTry.id, response: .status(204), now: 1.3)
        #expect(schedule.isSettled(now: 1.3))
        #expect(schedule.startJobs(now: 2).isEmpty, "the same version is not sent again")
    }

    @Test func endListGoesUpOnlyAfterFinishWhenEverySegmentIsUp() throws {
        var schedule = Self.schedule(segments: 2)
        for job in schedule.startJobs(now: 0) { schedule.complete(job.id, response: .status(201), now: 0) }
        let beforeFinish = try #require(schedule.remotePlaylist()).playlist
        #expect(!beforeFinish.endList)
        #expect(beforeFinish.playlistType == .event, "a VOD playlist must not change, so it grows as EVENT")
        schedule.finish()
        let final = try #require(schedule.remotePlaylist()).playlist
        #expect(final.endList)
        #expect(final.segments.count == 2)
        let job = try #require(schedule.startJobs(now: 0).first)
        schedule.complete(job.id, response: .status(204), now: 0)
        let report = schedule.report()
        #expect(report.isComplete)
        #expect(report.status.uploadedCount == 3)
    }

    @Test func aRefusedSegmentFailsAtOnceAndStopsTheListing() throws {
        var schedule = Self.schedule(segments: 2)
        schedule.finish()
        let jobs = schedule.startJobs(now: 0)
        schedule.complete(try Self.job(jobs, uploading: "init.mp4").id, response: .status(201), now: 0)
        schedule.complete(try Self.job(jobs, uploading: Self.segmentPath(1)).id, response: .status(403), now: 0)
        schedule.complete(try Self.job(jobs, uploading: Self.segmentPath(2)).id, response: .status(201), now: 0)
        #expect(schedule.startJobs(now: 100).isEmpty, "neither retried nor listed")
        #expect(schedule.isSettled(now: 100))
        let report = schedule.report()
        #expect(!report.isComplete)
        #expect(report.undelivered.map(\.path) == [Self.segmentPath(1), Self.playlistPath])
        #expect(report.undelivered[0].reason.contains("HTTP 403"))
    }

    @Test func retriesWaitForTheBackoffOrTheServersRetryAfter() throws {
        var schedule = Self.schedule(segments: 3)
        let jobs = schedule.startJobs(now: 0)
        schedule.complete(try Self.job(jobs, uploading: "init.mp4").id, response: .noResponse("reset", permanent: false),
                          now: 1)
        schedule.complete(try Self.job(jobs, uploading: Self.segmentPath(1)).id,
                          response: .status(429, retryAfterSeconds: 5), now: 1)
        #expect(schedule.startJobs(now: 1).map(\.operation) == [.upload(path: Self.segmentPath(3))])
        #expect(schedule.nextWakeTime(after: 1) == 1.25)
        let initRetry = try #require(schedule.startJobs(now: 1.25).first)
        #expect(initRetry == .init(id: initRetry.id, operation: .upload(path: "init.mp4"), attempt: 2))
        schedule.complete(initRetry.id, response: .status(201), now: 1.3)
        #expect(schedule.nextWakeTime(after: 1.3) == 6)
        #expect(schedule.startJobs(now: 6).map(\.operation) == [.upload(path: Self.segmentPath(1))])
        #expect(schedule.status.retryCount == 2)
    }

    @Test func anOverflowingBacklogDropsTheOldestWaitingSegment() {
        var schedule = PublishSchedule(limits: .init(maxConcurrentRequests: 1, backlogSeconds: 5))
        #expect(schedule.addSegment(Self.segmentPath(1), durationSeconds: 2, now: 0).isEmpty)
        let inFlight = schedule.startJobs(now: 0)
        #expect(schedule.addSegment(Self.segmentPath(2), durationSeconds: 2, now: 0).isEmpty)
        // 6 s would wait; segment 1 is being uploaded, so segment 2 is the oldest that can go.
        #expect(schedule.addSegment(Self.segmentPath(3), durationSeconds: 2, now: 0) == [Self.segmentPath(2)])
        #expect(schedule.queuedMediaSeconds == 4)
        #expect(schedule.status.failedCount == 1)
        schedule.complete(inFlight[0].id, response: .status(201), now: 1)
        #expect(schedule.startJobs(now: 1).map(\.operation) == [.upload(path: Self.segmentPath(3))])
    }

    @Test func removalWaitsForItsTimeAndCancelsAQueuedUpload() throws {
        var schedule = PublishSchedule(limits: .init(maxConcurrentRequests: 1))
        _ = schedule.addSegment(Self.segmentPath(1), durationSeconds: 2, now: 0)
        _ = schedule.addSegment(Self.segmentPath(2), durationSeconds: 2, now: 0)
        let upload = try #require(schedule.startJobs(now: 0).first)
        schedule.removeFile(Self.segmentPath(1), at: 10)
        schedule.removeFile(Self.segmentPath(2), at: 10)
        schedule.complete(upload.id, response: .status(201), now: 1)
        #expect(schedule.startJobs(now: 1).isEmpty, "segment 2 was cancelled; deletions wait")
        #expect(schedule.nextWakeTime(after: 1) == 10)
        #expect(schedule.isSettled(now: 1))
        let removal = try #require(schedule.startJobs(now: 10).first)
        #expect(removal.operation == .remove(path: Self.segmentPath(1)))
        schedule.complete(removal.id, response: .status(204), now: 10.5)
        let second = try #require(schedule.startJobs(now: 10.5).first)
        schedule.complete(second.id, response: .status(404), now: 11)
        let report = schedule.report()
        #expect(report.removalsNotDone.isEmpty)
        #expect(report.undelivered.map(\.path) == [Self.segmentPath(2)])
    }

    @Test func listingLatencyRunsFromHandOverToTheConfirmedPlaylist() throws {
        var schedule = Self.schedule(segments: 1)
        for job in schedule.startJobs(now: 0) { schedule.complete(job.id, response: .status(201), now: 0.5) }
        let playlist = try #require(schedule.startJobs(now: 0.5).first)
        schedule.complete(playlist.id, response: .status(201), now: 0.75)
        #expect(schedule.report().listingLatency.samplesSeconds == [0.75])
    }

    @Test func listingLatencyQuantilesUseTheNearestRank() {
        var latency = PublishReport.ListingLatency()
        for milliseconds in 1...100 { latency.record(Double(milliseconds) / 1000) }
        #expect(latency.quantileSeconds(0.5) == 0.05)
        #expect(latency.quantileSeconds(0.99) == 0.099)
        #expect(latency.maximumSeconds == 0.1)
        #expect(PublishReport.ListingLatency().quantileSeconds(0.99) == 0)
    }
}
