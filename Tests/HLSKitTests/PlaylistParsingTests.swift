import Foundation
import Testing
@testable import HLSKit

@Suite("MediaPlaylist parsing")
struct PlaylistParsingTests {
    private typealias Segment = MediaPlaylist.Segment

    /// `ffmpeg -f lavfi -i testsrc2=d=5 -c:v libx264 -g 50 -f hls -hls_segment_type fmp4 -hls_time 2
    /// -hls_playlist_type vod p.m3u8` (FFmpeg 5.1).
    private static let ffmpegVideoOnDemand = """
        #EXTM3U
        #EXT-X-VERSION:7
        #EXT-X-TARGETDURATION:2
        #EXT-X-MEDIA-SEQUENCE:0
        #EXT-X-PLAYLIST-TYPE:VOD
        #EXT-X-MAP:URI="init.mp4"
        #EXTINF:2.000000,
        p0.m4s
        #EXTINF:2.000000,
        p1.m4s
        #EXTINF:1.000000,
        p2.m4s
        #EXT-X-ENDLIST

        """

    /// The same with `-hls_list_size 2 -hls_flags program_date_time+independent_segments+delete_segments`
    /// over 7 s: FFmpeg writes the date after EXTINF and a `+0000` offset.
    private static let ffmpegSlidingWindow = """
        #EXTM3U
        #EXT-X-VERSION:7
        #EXT-X-TARGETDURATION:2
        #EXT-X-MEDIA-SEQUENCE:2
        #EXT-X-INDEPENDENT-SEGMENTS
        #EXT-X-MAP:URI="init.mp4"
        #EXTINF:2.000000,
        #EXT-X-PROGRAM-DATE-TIME:2026-11-29T15:06:01.902+0000
        p2.m4s
        #EXTINF:1.000000,
        #EXT-X-PROGRAM-DATE-TIME:2026-11-29T15:06:03.902+0000
        p3.m4s
        #EXT-X-ENDLIST

        """

    @Test func parsesFFmpegVideoOnDemand() throws {
        let playlist = try MediaPlaylist.parse(Self.ffmpegVideoOnDemand)

        #expect(playlist == MediaPlaylist(
            targetDurationSeconds: 2, mediaSequence: 0, playlistType: .vod,
            segments: [
                Segment(uri: "p0.m4s", durationSeconds: 2, mapURI: "init.mp4"),
                Segment(uri: "p1.m4s", durationSeconds: 2, mapURI: "init.mp4"),
                Segment(uri: "p2.m4s", durationSeconds: 1, mapURI: "init.mp4"),
            ],
            endList: true))
    }

    @Test func parsesFFmpegSlidingWindowWithDateTimesAfterDuration() throws {
        let playlist = try MediaPlaylist.parse(Self.ffmpegSlidingWindow)

        #expect(playlist == MediaPlaylist(
            targetDurationSeconds: 2, mediaSequence: 2, independentSegments: true,
            segments: [
                Segment(uri: "p2.m4s", durationSeconds: 2, mapURI: "init.mp4",
                        programDateTime: Date(timeIntervalSince1970: 1_795_964_761.902)),
                Segment(uri: "p3.m4s", durationSeconds: 1, mapURI: "init.mp4",
                        programDateTime: Date(timeIntervalSince1970: 1_795_964_763.902)),
            ],
            endList: true))
    }

    @Test func toleratesCRLFCommentsBlankLinesUnknownTagsAndTitles() throws {
        let text = [
            "#EXTM3U", "# written by hand", "#EXT-X-TARGETDURATION:6  ", "",
            "#EXT-X-KEY:METHOD=NONE", "#EXT-X-START:TIME-OFFSET=-4.5,PRECISE=YES",
            "#EXTINF:5.5,title, with a comma", "#EXT-X-BYTERANGE:1000@0", "a.ts", "",
            "#EXT-X-DISCONTINUITY", "#EXT-X-MAP:URI=\"init, v2.mp4\",BYTERANGE=\"720@0\"", "#EXTINF:6", "b.m4s",
        ].joined(separator: "\r\n")

        let playlist = try MediaPlaylist.parse(text)

        #expect(playlist == MediaPlaylist(targetDurationSeconds: 6, segments: [
            Segment(uri: "a.ts", durationSeconds: 5.5),
            Segment(uri: "b.m4s", durationSeconds: 6, mapURI: "init, v2.mp4", discontinuity: true),
        ]))
    }

    @Test func keepsDurationsAndDatesToMilliseconds() throws {
        let playlist = try MediaPlaylist.parse("""
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXT-X-PROGRAM-DATE-TIME:2024-02-29T23:59:59.9994+00:00
            #EXTINF:1.9996,
            a.m4s
            """)

        #expect(playlist.segments.first?.durationSeconds == 2.0)
        #expect(playlist.segments.first?.programDateTime == Date(timeIntervalSince1970: 1_709_251_199.999))
    }

    @Test(arguments: [
        ("2025-03-30T00:59:58.500Z", 1_743_296_398.5),
        ("2025-03-30T02:59:58.500+02:00", 1_743_296_398.5),
        ("2025-03-29T19:59:58.500-0500", 1_743_296_398.5),
        ("2025-03-30T00:59:58Z", 1_743_296_398),
        ("2024-02-29T23:59:59.999Z", 1_709_251_199.999),
        ("1969-12-31T23:59:59.001Z", -0.999),
    ])
    func parsesProgramDateTimes(text: String, secondsSince1970: Double) {
        #expect(ProgramDateTime.parse(text[...]) == Date(timeIntervalSince1970: secondsSince1970))
    }

    @Test(arguments: [
        "2025-02-29T00:00:00Z", "2025-13-01T00:00:00Z", "2025-03-30T24:00:00Z", "2025-03-30T00:00:00",
        "2025-03-30 00:00:00Z", "2025-03-30T00:00:00.Z", "2025-03-30T00:00:00+2", "25-03-30T00:00:00Z",
    ])
    func rejectsMalformedProgramDateTimes(text: String) {
        #expect(ProgramDateTime.parse(text[...]) == nil)
    }

    @Test(arguments: [1_743_296_398.5, 1_709_251_199.999, -0.999, 0])
    func formatsProgramDateTimesThatParseBack(secondsSince1970: Double) throws {
        let date = Date(timeIntervalSince1970: secondsSince1970)
        let text = ProgramDateTime.format(date)
        #expect(text.hasSuffix("Z"))
        #expect(ProgramDateTime.parse(text[...]) == date)
    }

    @Test(arguments: [ffmpegVideoOnDemand, ffmpegSlidingWindow])
    func roundTripsThroughRender(text: String) throws {
        let parsed = try MediaPlaylist.parse(text)
        let rendered = parsed.render()

        #expect(try MediaPlaylist.parse(rendered) == parsed)
        #expect(try MediaPlaylist.parse(rendered).render() == rendered)
    }

    @Test func roundTripsEveryRenderedFeature() throws {
        let playlist = MediaPlaylist(
            targetDurationSeconds: 3, mediaSequence: 41, discontinuitySequence: 2, playlistType: .event,
            independentSegments: true,
            segments: [
                Segment(uri: "seg/000041.m4s", durationSeconds: 2.5, mapURI: "init.mp4",
                        programDateTime: Date(timeIntervalSince1970: 1_743_296_398.25)),
                Segment(uri: "seg/000042.m4s", durationSeconds: 2.002, mapURI: "init-2.mp4", discontinuity: true),
            ],
            endList: true)

        #expect(try MediaPlaylist.parse(playlist.render()) == playlist)
    }

    @Test(arguments: [
        ("", PlaylistError(line: 1, problem: .missingHeader)),
        ("\n#EXTM3U\n", PlaylistError(line: 1, problem: .missingHeader)),
        ("#EXT-X-VERSION:3\n#EXTM3U\n", PlaylistError(line: 1, problem: .missingHeader)),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.000,\n",
         PlaylistError(line: 3, problem: .durationWithoutURI)),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.000,\n#EXTINF:2.000,\na.m4s\n",
         PlaylistError(line: 3, problem: .durationWithoutURI)),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:2\na.m4s\n",
         PlaylistError(line: 3, problem: .uriWithoutDuration("a.m4s"))),
        ("#EXTM3U\r\n#EXT-X-TARGETDURATION:2\r\n\r\n#EXTINF:2.0abc,\r\na.m4s\r\n",
         PlaylistError(line: 4, problem: .malformedNumber(tag: "EXTINF", value: "2.0abc"))),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:1e3,\na.m4s\n",
         PlaylistError(line: 3, problem: .malformedNumber(tag: "EXTINF", value: "1e3"))),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:-2.0,\na.m4s\n",
         PlaylistError(line: 3, problem: .malformedNumber(tag: "EXTINF", value: "-2.0"))),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:\(String(repeating: "9", count: 400)),\na.m4s\n",
         PlaylistError(line: 3, problem: .malformedNumber(tag: "EXTINF", value: String(repeating: "9", count: 400)))),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:99999999999999999999\n",
         PlaylistError(line: 2, problem: .malformedNumber(tag: "EXT-X-TARGETDURATION", value: "99999999999999999999"))),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:+2\n",
         PlaylistError(line: 2, problem: .malformedNumber(tag: "EXT-X-TARGETDURATION", value: "+2"))),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:\n",
         PlaylistError(line: 3, problem: .malformedNumber(tag: "EXT-X-MEDIA-SEQUENCE", value: ""))),
        ("#EXTM3U\n#EXT-X-VERSION:six\n",
         PlaylistError(line: 2, problem: .malformedNumber(tag: "EXT-X-VERSION", value: "six"))),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:LIVE\n",
         PlaylistError(line: 3, problem: .unknownPlaylistType("LIVE"))),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-PROGRAM-DATE-TIME:yesterday\n",
         PlaylistError(line: 3, problem: .malformedDate("yesterday"))),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MAP:BYTERANGE=\"720@0\"\n",
         PlaylistError(line: 3, problem: .missingAttribute(tag: "EXT-X-MAP", name: "URI"))),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MAP:URI=init.mp4\n",
         PlaylistError(line: 3, problem: .missingAttribute(tag: "EXT-X-MAP", name: "URI"))),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MAP:URI=\"init.mp4\n",
         PlaylistError(line: 3, problem: .malformedAttributeList(
            tag: "EXT-X-MAP", reason: "the value of URI has no closing quote"))),
        ("#EXTM3U\n#EXTINF:2.000,\na.m4s\n", PlaylistError(line: 3, problem: .missingTargetDuration)),
    ])
    func rejectsMalformedPlaylists(text: String, expected: PlaylistError) {
        #expect(throws: expected) { try MediaPlaylist.parse(text) }
    }

    @Test func errorDescriptionNamesLineAndProblem() {
        let error = PlaylistError(line: 4, problem: .malformedNumber(tag: "EXTINF", value: "2.0abc"))
        #expect(error.description == "line 4: EXTINF value \"2.0abc\" is not a valid non-negative decimal number")
    }
}

@Suite("AttributeList parsing")
struct PlaylistAttributeListTests {
    @Test func parsesQuotedStringsWithCommasAndTokens() throws {
        let list = try AttributeList.parse(#"BANDWIDTH=800000,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=640x360"#)

        #expect(list == AttributeList(attributes: [
            ("BANDWIDTH", .token("800000")),
            ("CODECS", .quotedString("avc1.64001f,mp4a.40.2")),
            ("RESOLUTION", .token("640x360")),
        ]))
        #expect(list["CODECS"] == .quotedString("avc1.64001f,mp4a.40.2"))
        #expect(list["AUDIO"] == nil)
    }

    @Test func parsesEmptyListAndEmptyQuotedString() throws {
        #expect(try AttributeList.parse("").attributes.isEmpty)
        #expect(try AttributeList.parse(#"NAME="""#)["NAME"] == .quotedString(""))
    }

    @Test(arguments: [
        ("URI", "\"URI\" has no '='"),
        ("uri=\"a\"", "\"uri\" is not an attribute name"),
        ("=1", "\"\" is not an attribute name"),
        ("URI=\"a", "the value of URI has no closing quote"),
        ("URI=\"a\"b", "unexpected \"b\" after the quoted value of URI"),
        ("A=1,", "trailing ','"),
    ])
    func rejectsMalformedLists(text: String, reason: String) {
        #expect(throws: AttributeList.SyntaxError(reason: reason)) { try AttributeList.parse(text[...]) }
    }
}
