import Foundation
import HLSOutput
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
}

@Suite("Publish: schedule")
struct PublishScheduleTests {
    static let playlistPath = "playlist.m3u8"

    static func segmentPath(_ number: Int) -> String { StreamLayout.segmentPath(number) }

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

    /// `--publish-keys`: a segment encrypted with a key another publisher is still uploading is not
    /// listed, even once its own bytes are up; the segments before it are.
    @Test func aSegmentWaitsForItsKeyToReachTheOrigin() throws {
        var schedule = PublishSchedule(limits: .init())
        schedule.addFile("init.mp4", now: 0)
        for number in 1...2 { _ = schedule.addSegment(Self.segmentPath(number), durationSeconds: 2, now: 0) }
        var playlist = Self.playlist(segments: 2)
        playlist.segments[0].key = MediaPlaylist.Key(uri: "keys/run-0.key")
        playlist.segments[1].key = MediaPlaylist.Key(uri: "https://keys.example/live/run-1.key")
        schedule.awaitKey(named: "run-0.key")
        schedule.awaitKey(named: "run-1.key")
        schedule.updatePlaylist(playlist)
        for job in schedule.startJobs(now: 0) { schedule.complete(job.id, response: .status(201), now: 0.1) }
        #expect(schedule.remotePlaylist() == nil, "segment 1's key is not up")
        schedule.keyArrived(named: "run-0.key")
        #expect(schedule.remotePlaylist()?.playlist.segments.map(\.uri) == [Self.segmentPath(1)])
        schedule.keyArrived(named: "run-1.key")
        #expect(schedule.remotePlaylist()?.playlist.segments.map(\.uri) == [Self.segmentPath(1), Self.segmentPath(2)])
    }

    /// `live --resume --publish` after a kill: the first playlist lists segments of the killed run, which
    /// this run never handed over; they go up again, or the origin's playlist could never list them.
    @Test func aResumedStreamUploadsTheSegmentsOfTheEarlierRunAgain() throws {
        var schedule = PublishSchedule(limits: .init())
        schedule.addFile("init.mp4", now: 0)
        _ = schedule.addSegment(Self.segmentPath(3), durationSeconds: 2, now: 0)
        var resumed = Self.playlist(segments: 3)
        resumed.playlistType = nil
        resumed.endList = false
        resumed.segments[2].discontinuity = true
        schedule.updatePlaylist(resumed)
        var jobs: [PublishSchedule.Job] = []
        for _ in 0..<3 {
            let started = schedule.startJobs(now: 0)
            for job in started { schedule.complete(job.id, response: .status(201), now: 0) }
            jobs += started
        }
        #expect(jobs.map(\.operation).prefix(4) == [.upload(path: Self.segmentPath(1)), .upload(path: Self.segmentPath(2)),
                                                    .upload(path: "init.mp4"), .upload(path: Self.segmentPath(3))])
        #expect(try Self.listedSegments(jobs.last) == (1...3).map(Self.segmentPath))
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

    /// A live playlist of 2 s segments `first…last` as a sliding window.
    static func livePlaylist(_ numbers: ClosedRange<Int>) -> MediaPlaylist {
        MediaPlaylist(targetDurationSeconds: 2, mediaSequence: numbers.lowerBound, independentSegments: true,
                      segments: numbers.map { .init(uri: segmentPath($0), durationSeconds: 2, mapURI: "init.mp4") })
    }

    /// Hands segment `number` over as a live stream with a window of `window` does, with the
    /// removals the local window makes.
    static func addLiveSegment(_ number: Int, window: Int, to schedule: inout PublishSchedule, now: Double) {
        _ = schedule.addSegment(segmentPath(number), durationSeconds: 2, now: now)
        schedule.updatePlaylist(livePlaylist(max(1, number - window + 1)...number))
        if number > window {
            schedule.removeFile(segmentPath(number - window), at: now + 2 + Double(window) * 2)
        }
    }

    /// Answers every job at `now`: uploads and deletions with `files`, playlists with `playlist`;
    /// returns the segments listed by each playlist version the origin accepted.
    static func answer(_ jobs: [PublishSchedule.Job], files: PublishResponse, playlist: PublishResponse,
                       in schedule: inout PublishSchedule, now: Double) throws -> [[String]] {
        var confirmed: [[String]] = []
        for job in jobs {
            if case .uploadPlaylist = job.operation {
                if case .status(200..<300, _, _) = playlist { confirmed.append(try listedSegments(job)) }
                schedule.complete(job.id, response: playlist, now: now)
            } else {
                schedule.complete(job.id, response: files, now: now)
            }
        }
        return confirmed
    }

    @Test func anOutageLongerThanTheWindowLosesNothingAndTheOriginCatchesUpInOrder() throws {
        var schedule = PublishSchedule(limits: .init())
        schedule.addFile("init.mp4", now: 0)
        var confirmed: [[String]] = []
        var removed: [String] = []
        // 2 s segments, a window of 3; the origin is down from 4 s to 20 s, longer than the window.
        for second in stride(from: 0.0, through: 60, by: 0.25) {
            if second.truncatingRemainder(dividingBy: 2) == 0, second > 0, second <= 40 {
                Self.addLiveSegment(Int(second / 2), window: 3, to: &schedule, now: second)
            }
            if second == 40 { schedule.finish() }
            let down = second >= 4 && second < 20
            let jobs = schedule.startJobs(now: second)
            removed += jobs.compactMap { if case .remove(let path) = $0.operation { path } else { nil } }
            let response: PublishResponse = down ? .noResponse("refused", permanent: false) : .status(201)
            confirmed += try Self.answer(jobs, files: response, playlist: response, in: &schedule, now: second)
        }
        let report = schedule.report()
        #expect(report.undelivered.isEmpty, "\(report.undelivered)")
        #expect(report.finalPlaylistDelivered)
        let everListed = Set(confirmed.joined())
        #expect(everListed == Set((1...20).map(Self.segmentPath)), "every segment was listed on the origin")
        let firstListings = confirmed.joined().reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        #expect(firstListings == (1...20).map(Self.segmentPath), "in sequence order")
        #expect(confirmed.last == (18...20).map(Self.segmentPath), "back to the window's length")
        #expect(Set(removed).isSuperset(of: (1...10).map(Self.segmentPath)))
    }

    @Test func theOriginDeletesOnlyWhatItsConfirmedPlaylistNoLongerLists() throws {
        var schedule = PublishSchedule(limits: .init())
        schedule.addFile("init.mp4", now: 0)
        var origin: [String] = []
        // Files go up, but every playlist version fails until 30 s: the origin keeps listing 1…3.
        for second in stride(from: 0.0, through: 60, by: 0.25) {
            if second.truncatingRemainder(dividingBy: 2) == 0, second > 0, second <= 20 {
                Self.addLiveSegment(Int(second / 2), window: 3, to: &schedule, now: second)
            }
            let playlistDown = second >= 6.5 && second < 30
            let jobs = schedule.startJobs(now: second)
            for job in jobs {
                if case .remove(let path) = job.operation {
                    #expect(!origin.contains(path), "\(path) deleted at \(second) s while the origin lists \(origin)")
                }
            }
            let confirmed = try Self.answer(jobs, files: .status(201),
                                            playlist: playlistDown ? .status(503) : .status(201),
                                            in: &schedule, now: second)
            if let latest = confirmed.last { origin = latest }
        }
        #expect(origin == (8...10).map(Self.segmentPath))
        #expect(schedule.report().removalsNotDone.isEmpty)
    }

    @Test func aDeletionWaitsTheRetentionTimeFromTheConfirmedPlaylist() throws {
        var schedule = PublishSchedule(limits: .init())
        schedule.addFile("init.mp4", now: 0)
        for number in 1...4 {
            Self.addLiveSegment(number, window: 3, to: &schedule, now: Double(number))
        }
        let uploads = schedule.startJobs(now: 4)
        _ = try Self.answer(uploads, files: .status(201), playlist: .status(201), in: &schedule, now: 4)
        _ = try Self.answer(schedule.startJobs(now: 4), files: .status(201), playlist: .status(201),
                            in: &schedule, now: 4)
        _ = try Self.answer(schedule.startJobs(now: 4), files: .status(201), playlist: .status(201),
                            in: &schedule, now: 4)
        // The origin listed 1…2, then 2…4: segment 1 may go its 2 s plus 6 s (the longest
        // playlist the origin held) after the origin stopped listing it.
        #expect(schedule.remotePlaylist()?.window.paths == (2...4).map(Self.segmentPath))
        #expect(schedule.nextWakeTime(after: 4) == 12)
        // A stop at 4 s whose drain ends before 12 s need not wait for the deletion; one after it must.
        #expect(!schedule.hasRemovals(dueBy: 11.9))
        #expect(schedule.hasRemovals(dueBy: 12))
        #expect(schedule.startJobs(now: 11.9).isEmpty)
        let removal = schedule.startJobs(now: 12)
        #expect(removal.map(\.operation) == [.remove(path: Self.segmentPath(1))])
        #expect(schedule.hasRemovals(dueBy: 0), "a deletion running")
        _ = try Self.answer(removal, files: .status(204), playlist: .status(201), in: &schedule, now: 12.5)
        #expect(!schedule.hasRemovals(dueBy: 100))
    }

    @Test func aLocalCopyIsDeletedAfterItsTimeOnlyOnceItIsUploaded() throws {
        var schedule = PublishSchedule(limits: .init(maxConcurrentRequests: 1))
        _ = schedule.addSegment(Self.segmentPath(1), durationSeconds: 2, now: 0)
        let upload = try #require(schedule.startJobs(now: 0).first)
        schedule.removeFile(Self.segmentPath(1), at: 10)
        schedule.complete(upload.id, response: .status(503), now: 1)
        #expect(schedule.takeLocalRemovals(now: 20).isEmpty, "the upload still needs it")
        let retry = try #require(schedule.startJobs(now: 20).first)
        schedule.complete(retry.id, response: .status(201), now: 21)
        #expect(schedule.takeLocalRemovals(now: 21) == [Self.segmentPath(1)])
        #expect(schedule.takeLocalRemovals(now: 22).isEmpty)
    }

    @Test func playlistRetriesWaitAtMostAboutATargetDuration() throws {
        var schedule = Self.schedule(segments: 1)
        for job in schedule.startJobs(now: 0) { schedule.complete(job.id, response: .status(201), now: 0) }
        var now = 0.0
        for _ in 1...10 {
            let job = try #require(schedule.startJobs(now: now).first)
            schedule.complete(job.id, response: .status(503, retryAfterSeconds: 30), now: now)
            let wake = try #require(schedule.nextWakeTime(after: now))
            #expect(wake - now <= 2, "a target duration")
            now = wake
        }
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
