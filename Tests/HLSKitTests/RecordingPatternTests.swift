import Foundation
import Testing
@testable import HLSKit

@Suite struct RecordingPatternTests {
    private let utc = TimeZone(identifier: "UTC")!
    /// 2025-12-01 10:02:03.5 UTC.
    private let moment = Date(timeIntervalSince1970: 1_764_583_323.5)

    @Test func placeholdersExpandToTheCivilTimeInTheZoneAsked() throws {
        let pattern = try RecordingPattern("rec/%Y-%m-%d/%H-%M-%S.mp4")
        #expect(pattern.expand(moment, timeZone: utc) == "rec/2025-12-01/10-02-03.mp4")
        #expect(pattern.expand(moment, timeZone: TimeZone(secondsFromGMT: -11 * 3600)!) == "rec/2025-11-30/23-02-03.mp4")
        #expect(try RecordingPattern("100%%/%H.mp4").expand(moment, timeZone: utc) == "100%/10.mp4")
        #expect(pattern.finestSeconds == 1 && pattern.hasPlaceholder)
        #expect(try RecordingPattern("rec/%Y-%m-%d.mp4").finestSeconds == 86_400)
        #expect(try RecordingPattern("rec/one.mp4").finestSeconds == nil)
        #expect(try !RecordingPattern("rec/100%%.mp4").hasPlaceholder)
        #expect(throws: RecordingPattern.ParseError.unknownPlaceholder("%Q")) { try RecordingPattern("rec/%Q.mp4") }
        #expect(throws: RecordingPattern.ParseError.unknownPlaceholder("%")) { try RecordingPattern("rec/%") }
        #expect(throws: RecordingPattern.ParseError.empty) { try RecordingPattern("") }
    }

    @Test func theFolderBeforeTheFirstPlaceholderRootsTheFiles() throws {
        #expect(try RecordingPattern("/var/rec/%Y/%H.mp4").fixedFolder == ("/var/rec", "%Y/%H.mp4"))
        #expect(try RecordingPattern("rec/cam-%H/x.mp4").fixedFolder == ("rec", "cam-%H/x.mp4"))
        #expect(try RecordingPattern("%H.mp4").fixedFolder == (".", "%H.mp4"))
    }

    @Test func boundariesFallOnTheClockFromMidnightOfTheZone() throws {
        let hour = try RecordingPeriod(parsing: "1h")
        #expect(hour.boundary(after: moment, timeZone: utc) == Date(timeIntervalSince1970: 1_764_586_800))  // 11:00
        let quarter = try RecordingPeriod(parsing: "15m")
        #expect(quarter.boundary(after: moment, timeZone: utc) == Date(timeIntervalSince1970: 1_764_584_100))  // 10:15
        let day = try RecordingPeriod(parsing: "1d")
        #expect(day.boundary(after: moment, timeZone: utc) == Date(timeIntervalSince1970: 1_764_633_600))  // 12-02 00:00
        // The next midnight in UTC+5:30 (15:32 there) is 18:30 UTC.
        let india = TimeZone(secondsFromGMT: 5 * 3600 + 1800)!
        #expect(day.boundary(after: moment, timeZone: india) == Date(timeIntervalSince1970: 1_764_613_800))
        // A frame on a boundary belongs to the file that starts there: the next boundary is a period on.
        let onTheHour = Date(timeIntervalSince1970: 1_764_586_800)
        #expect(hour.boundary(after: onTheHour, timeZone: utc) == onTheHour.addingTimeInterval(3600))
        #expect(try RecordingPeriod(parsing: "30s").seconds == 30 && RecordingPeriod(parsing: "90").seconds == 90)
        #expect(throws: RecordingPeriod.ParseError.notADivisorOfADay(7 * 3600)) { try RecordingPeriod(parsing: "7h") }
        #expect(throws: RecordingPeriod.ParseError.unreadable("an hour")) { try RecordingPeriod(parsing: "an hour") }
        #expect(throws: RecordingPeriod.ParseError.notADivisorOfADay(2 * 86_400)) { try RecordingPeriod(parsing: "2d") }
    }

    /// A simulated week of hourly files: one boundary an hour, names that never repeat.
    @Test func aWeekOfHourlyFilesHasOneNameAnHour() throws {
        let pattern = try RecordingPattern("%Y-%m-%d/%H-%M-%S.mp4")
        let period = try RecordingPeriod(parsing: "1h")
        var names: [String] = []
        var time = moment
        var boundary = period.boundary(after: time, timeZone: utc)
        names.append(pattern.expand(time, timeZone: utc))
        // Frames every 1/30 s would be too many to walk; frames every 7 s cross each boundary as late as 7 s.
        while time < moment.addingTimeInterval(7 * 86_400) {
            time = time.addingTimeInterval(7)
            if time >= boundary {
                names.append(pattern.expand(time, timeZone: utc))
                boundary = period.boundary(after: time, timeZone: utc)
            }
        }
        #expect(names.count == 7 * 24 + 1)
        #expect(Set(names).count == names.count)
        #expect(names[1].hasPrefix("2025-12-01/11-00-0"))
        #expect(names.dropFirst().allSatisfy { $0.contains("-00-0") })
    }
}
