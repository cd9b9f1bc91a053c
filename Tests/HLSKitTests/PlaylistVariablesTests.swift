import Testing
@testable import HLSKit

/// EXT-X-DEFINE and `{$name}` substitution (RFC 8216bis 4.3, 4.4.2.3), before any rule reads the playlist.
@Suite struct PlaylistVariablesTests {
    static func substitute(_ text: String, imports: [String: String]? = nil, query: String? = nil)
        -> (MediaPlaylistDocument, PlaylistVariables) {
        let (document, variables) = PlaylistDocument(text: text).substitutingVariables(imports: imports, query: query)
        return (MediaPlaylistDocument(document), variables)
    }

    @Test func nameImportAndQueryParameterAreSubstitutedInURIsAndQuotedStrings() {
        let (playlist, variables) = Self.substitute("""
            #EXTM3U
            #EXT-X-VERSION:8
            #EXT-X-DEFINE:NAME="dir",VALUE="seg"
            #EXT-X-DEFINE:IMPORT="host"
            #EXT-X-DEFINE:QUERYPARAM="token"
            #EXT-X-TARGETDURATION:2
            #EXT-X-MAP:URI="{$host}/init.mp4?t={$token}"
            #EXTINF:2.000,
            {$host}/{$dir}/000001.m4s?t={$token}
            """, imports: ["host": "https://cdn.example"], query: "a=1&token=x%2By")
        #expect(variables.issues.isEmpty)
        #expect(playlist.segments.map(\.uri) == ["https://cdn.example/seg/000001.m4s?t=x+y"])
        #expect(playlist.segments.first?.map?.uri == "https://cdn.example/init.mp4?t=x+y")
    }

    @Test func eXTXDefineNeedsVersionEight() {
        let (playlist, _) = Self.substitute("""
            #EXTM3U
            #EXT-X-VERSION:6
            #EXT-X-DEFINE:NAME="dir",VALUE="seg"
            #EXT-X-TARGETDURATION:2
            #EXTINF:2.000,
            {$dir}/000001.m4s
            """)
        let need = PlaylistRules.requiredVersion(playlist)
        #expect(need?.version == 8 && need?.line == 3)
    }

    @Test func onlyQuotedStringsAreSubstitutedAndADefinedValueIsTakenAsWritten() {
        let (document, variables) = PlaylistDocument(text: """
            #EXTM3U
            #EXT-X-DEFINE:NAME="a",VALUE="{$b}"
            #EXT-X-START:TIME-OFFSET={$a}
            """).substitutingVariables(imports: nil, query: nil)
        #expect(variables.values == ["a": "{$b}"])
        #expect(variables.issues.isEmpty)
        #expect(document.tags.last?.value == "TIME-OFFSET={$a}")
    }

    @Test func eachProblemIsReportedAtItsLine() {
        let (_, variables) = Self.substitute("""
            #EXTM3U
            #EXT-X-DEFINE:NAME="a b",VALUE="1"
            #EXT-X-DEFINE:NAME="c",VALUE="1"
            #EXT-X-DEFINE:QUERYPARAM="c"
            #EXT-X-DEFINE:QUERYPARAM="missing"
            #EXT-X-DEFINE:IMPORT="other"
            #EXT-X-DEFINE:NAME="d"
            #EXTINF:1.000,
            {$nothing}.m4s
            """, imports: [:])
        #expect(variables.issues.map(\.problem) == [.invalidName, .duplicateName, .undefinedReference,
                                                     .undefinedReference, .syntax, .undefinedReference])
        #expect(variables.issues.map(\.line) == [2, 4, 5, 6, 7, 9])
    }

    @Test func anImportWithoutItsMultivariantPlaylistIsLeftAsWritten() {
        let (playlist, variables) = Self.substitute("""
            #EXTM3U
            #EXT-X-DEFINE:IMPORT="dir"
            #EXTINF:1.000,
            {$dir}/1.m4s
            """)
        #expect(variables.issues.isEmpty)
        #expect(playlist.segments.map(\.uri) == ["{$dir}/1.m4s"])
    }
}
