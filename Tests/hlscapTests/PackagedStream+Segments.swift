import Foundation
import HLSKit
import HLSTestSupport

extension PackagedStream {
    /// What is wrong with the media segments, read with the box reader: each `moof` numbered by its
    /// place in the playlist (from its media sequence), every track in every segment, version 1 `tfdt` that continues where
    /// the previous segment ended (within a discontinuity section), and video that starts with an IDR
    /// (HEVC: an IRAP picture, IDR, CRA or BLA).
    /// Empty for a sound stream.
    func segmentProblems() throws -> [String] {
        var problems: [String] = []
        var nextDecodeTime: [UInt32: UInt64] = [:]
        let playlist = try playlist()
        for (index, entry) in playlist.segments.enumerated() {
            // A sliding window's first segment is numbered by the media sequence.
            let number = playlist.mediaSequence + index
            if entry.discontinuity { nextDecodeTime = [:] }
            let tracks = try InitSection(bytes(entry.mapURI ?? "init.mp4"))
            let segment = try bytes(entry.uri)
            guard let moof = try MP4Box.parse(segment).first("moof") else {
                problems.append("\(entry.uri): no moof")
                continue
            }
            if try moof.first("mfhd")?.sequenceNumber() != UInt32(number) {
                problems.append("\(entry.uri): mfhd sequence number is not \(number)")
            }
            let fragments = moof.all("traf")
            if fragments.count != tracks.trackCount {
                problems.append("\(entry.uri): \(fragments.count) track fragments for \(tracks.trackCount) tracks")
            }
            for traf in fragments {
                guard let trackID = try traf.first("tfhd")?.trackFragmentTrackID(),
                      let tfdt = traf.first("tfdt"), let run = try traf.first("trun")?.trackRun() else {
                    problems.append("\(entry.uri): a traf without tfhd, tfdt or trun")
                    continue
                }
                if tfdt.version != 1 { problems.append("\(entry.uri) track \(trackID): tfdt version \(tfdt.version)") }
                let baseDecodeTime = try tfdt.baseDecodeTime()
                if let expected = nextDecodeTime[trackID], expected != baseDecodeTime {
                    problems.append("\(entry.uri) track \(trackID): tfdt \(baseDecodeTime), expected \(expected)")
                }
                nextDecodeTime[trackID] = baseDecodeTime + run.entries.reduce(0) { $0 + UInt64($1.duration ?? 0) }
                if trackID == tracks.videoTrackID {
                    let first = try FragmentSamples.samples(in: segment, trackID: trackID).first
                    let isHEVC = tracks.videoSampleEntry == "hvc1"
                    let startsRight = isHEVC ? FragmentSamples.containsHEVCRandomAccessPoint
                        : FragmentSamples.containsIDR
                    if try first.map(startsRight) != true {
                        problems.append("\(entry.uri) does not start with an \(isHEVC ? "IRAP picture" : "IDR")")
                    }
                }
            }
        }
        return problems
    }
}
