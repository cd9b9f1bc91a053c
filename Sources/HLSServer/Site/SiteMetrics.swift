/// `/metrics` of a `SiteServer`: the server's connections and its own requests, then every stream's
/// families (the requests for its paths, its parts and pictures, the engine's figures) with a
/// `stream` label first, one family per name however many streams have it.
enum SiteMetrics {
    /// The families of the server as a whole; a stream's ServerMetrics has the rest.
    static let serverFamilies: Set<String> = ServerMetrics.serverWideFamilies.union([
        "hlscap_http_requests_total", "hlscap_http_responses_total",
    ])

    /// `families` with `stream`'s samples added, each labelled `stream="NAME"`; a new name goes last.
    static func merge(_ families: [ServerMetrics.Family], _ stream: [ServerMetrics.Family], stream name: String)
        -> [ServerMetrics.Family] {
        var merged = families
        for family in stream {
            let samples = family.samples.map { (labels: [("stream", name)] + $0.labels, value: $0.value) }
            if let index = merged.firstIndex(where: { $0.name == family.name }) {
                merged[index].samples += samples
            } else {
                merged.append(.init(name: family.name, help: family.help, kind: family.kind, samples: samples))
            }
        }
        return merged
    }

    /// What the stream's status adds: its state (one series per state, 1 for the current one), viewers,
    /// and the age of its newest segment when it has one.
    static func families(_ status: StreamStatus, viewers: Int) -> [ServerMetrics.Family] {
        let states = ["starting", "live", "reconnecting", "stopped"]
        var families = [
            ServerMetrics.Family(name: "hlscap_stream_state", help: "1 for the state the stream is in, 0 for the others",
                                 kind: .gauge, samples: states.map { ([("state", $0)], $0 == status.state.name ? 1 : 0) }),
            ServerMetrics.Family(name: "hlscap_stream_viewers",
                                 help: "clients that fetched the stream's media in the last 30 s", kind: .gauge,
                                 value: Double(viewers)),
        ]
        if let age = status.lastSegmentAgeSeconds {
            families.append(.init(name: "hlscap_stream_last_segment_age_seconds", help: "since the newest segment was listed",
                                  kind: .gauge, value: age))
        }
        return families
    }
}
