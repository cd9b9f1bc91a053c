import Foundation
import Glibc
import Testing
@testable import HLSMedia

/// The error opening `path` throws, or `nil` when it opens.
func openingError(_ path: String) -> MediaInputError? {
    do {
        _ = try FileDemuxer(path: path)
        return nil
    } catch {
        return error
    }
}

/// The error reading `path` to its end throws, with the number of packets read before it.
func readingError(_ path: String) throws -> (error: MediaInputError?, packetsRead: Int) {
    let demuxer = try FileDemuxer(path: path)
    var count = 0
    do {
        while try demuxer.nextPacket() != nil { count += 1 }
        return (nil, count)
    } catch {
        return (error, count)
    }
}

@Suite struct MediaInputErrorTests {
    @Test func missingFileIsNotFound() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let path = fixtures.path("recording.mp4")

        let error = try #require(openingError(path))
        #expect(error.kind == .notFound)
        #expect(error.isUnreadable)
        #expect(error.description == "\(path): no such file; check the path")
    }

    @Test func missingDirectoryOnTheWayIsNotFound() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let file = try fixtures.write(Data("x".utf8), to: "file")
        #expect(openingError(file + "/recording.mp4")?.kind == .notFound)
    }

    @Test func directoryIsUnreadable() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }

        let error = try #require(openingError(fixtures.directory.path))
        #expect(error.kind == .unreadable)
        #expect(error.isUnreadable)
        #expect(error.detail == "it is a directory")
        #expect(error.description.hasPrefix("\(fixtures.directory.path): cannot be read (it is a directory); "))
    }

    @Test func fifoIsRefusedWithoutWaitingForAWriter() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let path = fixtures.path("pipe")
        try #require(mkfifo(path, 0o600) == 0)

        let error = try #require(openingError(path))
        #expect(error.kind == .unreadable)
        #expect(error.detail == "it is not a regular file")
    }

    @Test func textFileIsNotMedia() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let path = try fixtures.write(Data("just some notes, not a video\n".utf8), to: "notes.txt")

        let error = try #require(openingError(path))
        #expect(error.kind == .notMedia)
        #expect(!error.isUnreadable)
        #expect(error.description.hasPrefix("\(path): not a media file FFmpeg can read"))
    }

    @Test func emptyFileIsNotMedia() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let path = try fixtures.write(Data(), to: "empty.mp4")

        let error = try #require(openingError(path))
        #expect(error.kind == .notMedia)
        #expect(error.detail == "the file is empty")
    }

    @Test func subtitlesAloneHaveNoMediaStreams() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let path = try fixtures.write(Data("1\n00:00:00,000 --> 00:00:01,000\nHello\n\n".utf8), to: "talk.srt")

        let error = try #require(openingError(path))
        #expect(error.kind == .noMediaStreams)
        #expect(!error.isUnreadable)
        #expect(error.detail == "it holds 1 subtitle stream")
    }

    /// Without "faststart" the index (moov) follows the media data, so a cut in the media
    /// data loses the whole index and FFmpeg cannot open the file.
    @Test func mp4CutBeforeItsIndexIsCorrupt() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let path = try fixtures.truncate(try fixtures.makeAudioVideo("av.mp4"), to: "cut.mp4", percent: 60)

        let error = try #require(openingError(path))
        #expect(error.kind == .corrupt)
        #expect(!error.isUnreadable)
        #expect(error.detail == "moov atom not found")
    }

    /// With the index first, FFmpeg reads up to the cut, flags the sample cut short as corrupt,
    /// logs "partial file" and returns a plain end of file.
    @Test func mp4CutInItsMediaDataIsCorrupt() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let whole = try fixtures.makeAudioVideo("av.mp4", extra: ["-movflags", "+faststart"])
        let path = try fixtures.truncate(whole, to: "cut.mp4", percent: 60)

        let packetsInWhole = try ProbedPacket.read(whole).count
        let (error, packetsRead) = try readingError(path)
        #expect(error?.kind == .corrupt)
        #expect(error?.detail.contains("partial file") == true)
        #expect(packetsRead > 0 && packetsRead < packetsInWhole)
    }

    /// The Matroska demuxer logs "File ended prematurely" and returns a plain end of file.
    @Test func matroskaCutShortIsCorrupt() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let whole = try fixtures.remux(try fixtures.makeAudioVideo("av.mp4"), to: "av.mkv")
        let path = try fixtures.truncate(whole, to: "cut.mkv", percent: 60)

        let (error, packetsRead) = try readingError(path)
        #expect(error?.kind == .corrupt)
        #expect(error?.detail == "File ended prematurely")
        #expect(error?.description == "\(path): the media data is damaged or truncated (File ended prematurely); "
                    + "copy the file again from its source, or salvage the readable part with ffmpeg -c copy")
        #expect(packetsRead > 0)
    }

    /// FFmpeg drops the partial transport packet at the end without a word, so the size decides.
    @Test(arguments: [40, 60, 80])
    func transportStreamCutInsideAPacketIsCorrupt(percent: Int) throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let whole = try fixtures.remux(try fixtures.makeAudioVideo("av.mp4"), to: "av.ts")
        let path = try fixtures.truncate(whole, to: "cut.ts", percent: percent, extraBytes: 100)

        let error = try #require(openingError(path))
        #expect(error.kind == .corrupt)
        #expect(error.detail == "the file ends inside a transport stream packet")
    }

    @Test func completeFilesEndCleanly() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let mp4 = try fixtures.makeAudioVideo("av.mp4", extra: ["-movflags", "+faststart"])
        for path in [mp4, try fixtures.remux(mp4, to: "av.mkv"), try fixtures.remux(mp4, to: "av.ts")] {
            #expect(try readingError(path).error == nil, "\(path)")
        }
    }
}

@Suite struct FFmpegWrapperTests {
    @Test func unrecognisedOptionIsAnError() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.removeAll() }
        let path = try fixtures.makeAudioOnly("audio.m4a")

        #expect(throws: FFmpegError(code: -EINVAL)) {
            _ = try InputFormatContext(url: path, options: ["no_such_option": "1"])
        }
        do {
            _ = try InputFormatContext(url: path, options: ["no_such_option": "1"])
        } catch {
            #expect(error.loggedMessage == "option 'no_such_option' is not recognised")
        }
    }

    @Test func unknownFormatNameIsAnError() {
        #expect(throws: FFmpegError(code: -EINVAL)) {
            _ = try InputFormatContext(url: "/dev/null", formatName: "no-such-format")
        }
    }

    @Test func errorTextComesFromFFmpeg() {
        #expect(FFmpegError.endOfFile.description == "End of file")
        let detailed = FFmpegError(code: FFmpegError.invalidData.code, loggedMessage: "moov atom not found")
        #expect(detailed == .invalidData)
        #expect(detailed.description == "Invalid data found when processing input (moov atom not found)")
    }

    @Test func loggingIsQuietUntilRaised() {
        FFmpegLog.installIfNeeded()
        #expect(FFmpegLog.level == .quiet)
        FFmpegLog.level = .warning
        #expect(FFmpegLog.level == .warning)
        FFmpegLog.level = .quiet
    }
}
