import Testing
@testable import HLSServer

@Suite struct ServerMetricsTests {
    /// The stream's families follow the server's own, as last reported: a report replaces the one before.
    @Test func theStreamsFamiliesAreTheLastReported() {
        let metrics = ServerMetrics()
        let own = metrics.render()
        #expect(own.hasPrefix("# HELP hlscap_http_requests_total "))
        metrics.report([.init(name: "hlscap_segments_total", help: "segments written and listed", kind: .counter, value: 3)])
        metrics.report([
            .init(name: "hlscap_segments_total", help: "segments written and listed", kind: .counter, value: 4),
            .init(name: "hlscap_frames_captured_total", help: "video frames captured, by rendition", kind: .counter,
                  samples: [([("rendition", "720p")], 120), ([("rendition", "a\"b")], 1.5)]),
        ])
        #expect(metrics.render() == own + """
            # HELP hlscap_segments_total segments written and listed
            # TYPE hlscap_segments_total counter
            hlscap_segments_total 4
            # HELP hlscap_frames_captured_total video frames captured, by rendition
            # TYPE hlscap_frames_captured_total counter
            hlscap_frames_captured_total{rendition="720p"} 120
            hlscap_frames_captured_total{rendition="a\\"b"} 1.5

            """)
    }
}
