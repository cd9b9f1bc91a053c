import Foundation

/// The rules one fMP4 media segment follows, and those between consecutive segments of a playlist:
/// well-formed boxes, `trun` data inside `mdat`, continuous `tfdt`, a sync sample first, EXTINF
/// within a frame of the media (ISO/IEC 14496-12 8.8, RFC 8216bis 3 and 4.4.4.1).
struct SegmentChecker {
    /// Per track, where the next segment's decode time should start, and the longest sample seen.
    private var nextDecodeTime: [UInt32: (ticks: UInt64, longestSample: UInt64)] = [:]
    /// Presentation seconds of the last sync sample of the video track, for the IDR interval.
    private var lastSyncSeconds: Double?
    /// The longest time between two sync samples of the video track, across segments.
    private(set) var longestSyncIntervalSeconds: Double?
    /// Per video track, the parameter sets in force: the sample entry's and those the samples brought.
    private var parameterSets: [UInt32: InBandParameterSets] = [:]
    let independentSegments: Bool
    let iFramesOnly: Bool

    init(independentSegments: Bool, iFramesOnly: Bool) {
        self.independentSegments = independentSegments
        self.iFramesOnly = iFramesOnly
    }

    /// Forget continuity: after a discontinuity, or when a segment could not be read.
    mutating func restart() {
        nextDecodeTime = [:]
        lastSyncSeconds = nil
        parameterSets = [:]
    }

    /// Checks `bytes` of `segment`: the whole file, or a slice of it that keeps the file's indices, so
    /// box offsets are file offsets. `pictureEnd`: where an I-frame range ends; its picture must too.
    mutating func check(_ bytes: ArraySlice<UInt8>, segment: MediaPlaylistDocument.Segment,
                        initSection: InitSectionInfo?, file: String, pictureEnd: Int? = nil) -> [Finding] {
        var findings: [Finding] = []
        func report(_ rule: ValidationRule, _ offset: Int?, _ message: String) {
            findings.append(Finding(rule, file: file, byteOffset: offset, message: message))
        }
        if segment.discontinuity { restart() }
        if bytes.first == 0x47 {
            return []  // MPEG-TS: the box rules do not apply.
        }
        let boxes: [MP4Box]
        do {
            boxes = try MP4Box.parse(bytes)
        } catch {
            report(.segmentBoxes, InitSectionInfo.offset(of: error) ?? bytes.startIndex, "its boxes cannot be read: \(error)")
            restart()
            return findings
        }
        let moofs = boxes.filter { $0.type == "moof" }
        let mdats = boxes.filter { $0.type == "mdat" }
        guard !moofs.isEmpty, !mdats.isEmpty else {
            report(.segmentBoxes, bytes.startIndex, "it has no \(moofs.isEmpty ? "moof" : "mdat") box at the top level")
            restart()
            return findings
        }
        guard let initSection else { return findings }
        var trackDurations: [UInt32: UInt64] = [:]
        var trackLongest: [UInt32: UInt64] = [:]
        var firstOfTrack: Set<UInt32> = []
        for moof in moofs {
            for traf in moof.all("traf") {
                do {
                    try checkTrackFragment(traf, moof: moof, mdats: mdats, initSection: initSection,
                                           durations: &trackDurations, longest: &trackLongest,
                                           firstOfTrack: &firstOfTrack, pictureEnd: pictureEnd, report: report)
                } catch {
                    report(.segmentBoxes, traf.offset, "its track fragment cannot be read: \(error)")
                }
            }
        }
        if !iFramesOnly {
            checkDuration(segment, initSection: initSection, durations: trackDurations, longest: trackLongest,
                          report: report)
        }
        return findings
    }

    private mutating func checkTrackFragment(
        _ traf: MP4Box, moof: MP4Box, mdats: [MP4Box], initSection: InitSectionInfo,
        durations: inout [UInt32: UInt64], longest: inout [UInt32: UInt64], firstOfTrack: inout Set<UInt32>,
        pictureEnd: Int?, report: (ValidationRule, Int?, String) -> Void
    ) throws {
        guard let tfhdBox = traf.first("tfhd") else {
            report(.segmentBoxes, traf.offset, "traf has no tfhd")
            return
        }
        let header = try tfhdBox.trackFragmentHeader()
        guard let track = initSection.tracks.first(where: { $0.trackID == header.trackID }) else {
            report(.segmentBoxes, tfhdBox.offset, "tfhd names track \(header.trackID), which the init section does not have")
            return
        }
        let tfdt = traf.first("tfdt")
        let decodeTime = try tfdt?.baseDecodeTime()
        if tfdt == nil {
            report(.segmentBoxes, traf.offset, "traf of track \(track.trackID) has no tfdt")
        }
        let defaultDuration = header.defaultSampleDuration ?? track.defaults?.defaultSampleDuration ?? 0
        let defaultSize = header.defaultSampleSize ?? track.defaults?.defaultSampleSize ?? 0
        let defaultFlags = header.defaultSampleFlags ?? track.defaults?.defaultSampleFlags ?? 0
        // Sample data is addressed from the moof unless tfhd gives a base (14496-12 8.8.7.1).
        let base = header.baseDataOffset.map { Int(clamping: $0) } ?? moof.offset
        var dataPosition = base
        var fragmentTicks: UInt64 = 0
        var rangeHoldsMorePictures = false
        for trunBox in traf.all("trun") {
            let run = try trunBox.trackRun()
            if let offset = run.dataOffset {
                dataPosition = base &+ Int(offset)
            }
            var runBytes = 0
            for (index, entry) in run.entries.enumerated() {
                let duration = UInt64(entry.duration ?? defaultDuration)
                longest[track.trackID] = max(longest[track.trackID] ?? 0, duration)
                let sampleStart = dataPosition &+ runBytes
                runBytes &+= Int(entry.size ?? defaultSize)
                checkParameterSets(in: mdats, from: sampleStart, to: dataPosition &+ runBytes, of: track,
                                   report: report)
                let flags = index == 0 ? (run.firstSampleFlags ?? entry.flags ?? defaultFlags) : (entry.flags ?? defaultFlags)
                let isSync = flags & MP4Box.nonSyncSampleFlag == 0
                if track.isVideo, let pictureEnd, firstOfTrack.contains(track.trackID), sampleStart < pictureEnd,
                   !rangeHoldsMorePictures {
                    rangeHoldsMorePictures = true
                    report(.byteRange, trunBox.offset,
                           "the I-frame range runs to byte \(pictureEnd), through more pictures than its I-frame "
                               + "(the next starts at byte \(sampleStart))")
                }
                if track.isVideo, !firstOfTrack.contains(track.trackID) {
                    firstOfTrack.insert(track.trackID)
                    if let pictureEnd, dataPosition &+ runBytes > pictureEnd {
                        report(.byteRange, trunBox.offset,
                               "the I-frame range ends at byte \(pictureEnd), before its picture "
                                   + "(bytes \(sampleStart)..<\(dataPosition &+ runBytes))")
                    }
                    if independentSegments && !isSync {
                        report(.independentSegments, trunBox.offset,
                               "video track \(track.trackID) starts with a sample that is not a sync sample, "
                                   + "but the playlist says EXT-X-INDEPENDENT-SEGMENTS")
                    }
                }
                if track.isVideo, isSync, track.timescale > 0, let decodeTime {
                    noteSync(seconds: Double(decodeTime &+ fragmentTicks) / Double(track.timescale))
                }
                fragmentTicks &+= duration
            }
            let end = dataPosition &+ runBytes
            if !mdats.contains(where: { dataPosition >= $0.payload.startIndex && end <= $0.payload.endIndex }) {
                report(.segmentBoxes, trunBox.offset,
                       "trun of track \(track.trackID) points at bytes \(dataPosition)..<\(end), outside every mdat")
            }
            dataPosition = end
        }
        durations[track.trackID, default: 0] &+= fragmentTicks
        guard let tfdt, let decodeTime else { return }
        if !iFramesOnly, let expected = nextDecodeTime[track.trackID] {
            let gap = decodeTime > expected.ticks ? decodeTime - expected.ticks : expected.ticks - decodeTime
            if gap > max(expected.longestSample, longest[track.trackID] ?? 0) {
                let seconds = (Double(decodeTime) - Double(expected.ticks)) / Double(max(track.timescale, 1))
                report(.decodeTimeContinuity, tfdt.offset,
                       "tfdt of track \(track.trackID) is \(decodeTime), but the media before it ended at \(expected.ticks) "
                           + "(\(String(format: "%+.3f", seconds)) s)")
            }
        }
        nextDecodeTime[track.trackID] = (decodeTime &+ fragmentTicks,
                                         max(nextDecodeTime[track.trackID]?.longestSample ?? 0, longest[track.trackID] ?? 0))
    }

    /// The parameter sets a video sample carries; a sample outside every mdat is `segment-boxes`' to report.
    private mutating func checkParameterSets(in mdats: [MP4Box], from start: Int, to end: Int,
                                             of track: InitSectionInfo.Track,
                                             report: (ValidationRule, Int?, String) -> Void) {
        guard track.isVideo, var sets = parameterSets[track.trackID] ?? track.parameterSets, start < end,
              let mdat = mdats.first(where: { start >= $0.payload.startIndex && end <= $0.payload.endIndex }),
              let units = try? LengthPrefixed.nalUnits(in: Array(mdat.payload[start..<end]),
                                                       lengthSize: track.nalUnitLengthSize) else { return }
        if let problem = sets.check(units) {
            report(.parameterSets, start, "track \(track.trackID): \(problem)")
        }
        parameterSets[track.trackID] = sets
    }

    private mutating func noteSync(seconds: Double) {
        if let last = lastSyncSeconds, seconds - last > longestSyncIntervalSeconds ?? 0 {
            longestSyncIntervalSeconds = seconds - last
        }
        lastSyncSeconds = seconds
    }

    private func checkDuration(_ segment: MediaPlaylistDocument.Segment, initSection: InitSectionInfo,
                               durations: [UInt32: UInt64], longest: [UInt32: UInt64],
                               report: (ValidationRule, Int?, String) -> Void) {
        // The video track decides a segment's duration; audio-only streams use their audio.
        let track = initSection.tracks.first { $0.isVideo && durations[$0.trackID] != nil }
            ?? initSection.tracks.first { durations[$0.trackID] != nil }
        guard let track, track.timescale > 0, let ticks = durations[track.trackID] else { return }
        let actual = Double(ticks) / Double(track.timescale)
        let frame = Double(longest[track.trackID] ?? 0) / Double(track.timescale)
        if abs(actual - segment.durationSeconds) > frame + 0.0005 {
            report(.segmentDuration, nil,
                   "EXTINF says \(segment.durationSeconds) s (line \(segment.durationLine)) but its "
                       + "\(track.isVideo ? "video" : "media") lasts \(String(format: "%.3f", actual)) s, "
                       + "more than one frame (\(String(format: "%.3f", frame)) s) apart")
        }
    }
}
