import Foundation
import HLSEngine
import HLSKit
import HLSOutput
import HLSServer

/// The LL-HLS server's stream, told of each chunk and part as the engine cuts them, so that a blocking
/// request is answered the instant its part exists, and a request for the hinted part at its first chunk.
struct LowLatencyObserver: LiveStreamObserver {
    let stream: LowLatencyStream

    func started(directories: [String], playlists: [MediaPlaylist], partTargetSeconds: Double) {
        stream.begin(zip(directories, playlists).map { LowLatencyStream.Rendition(directory: $0, base: $1) },
                     partTargetSeconds: partTargetSeconds)
    }

    func chunk(_ chunk: StreamWriter.RenditionChunk) {
        stream.addChunk(rendition: chunk.rendition,
                        position: .init(sequenceNumber: chunk.sequenceNumber, part: chunk.partIndex), bytes: chunk.bytes)
    }

    func part(_ part: StreamWriter.RenditionPart) {
        stream.addPart(rendition: part.rendition,
                       position: .init(sequenceNumber: part.sequenceNumber, part: part.partIndex),
                       durationSeconds: part.durationSeconds, independent: part.independent,
                       endsSegment: part.endsSegment, followsDiscontinuity: part.followsDiscontinuity,
                       bytes: part.bytes)
    }

    func playlists(_ playlists: [MediaPlaylist]) {
        for (index, playlist) in playlists.enumerated() { stream.update(rendition: index, base: playlist) }
    }
}

/// Delta updates of a regular stream's playlists, served from memory.
struct DeltaPlaylistsObserver: LiveStreamObserver {
    let deltaPlaylists: DeltaPlaylists

    func started(directories: [String], playlists: [MediaPlaylist], partTargetSeconds: Double) {
        deltaPlaylists.begin(directories: directories)
    }

    func playlists(_ playlists: [MediaPlaylist]) {
        deltaPlaylists.update(playlists)
    }
}

/// `GET /metrics`: the stream's figures as the engine counts them, after every segment and at the end.
struct MetricsObserver: LiveStreamObserver {
    let metrics: ServerMetrics

    func counted(_ statistics: LiveStatistics.Snapshot) {
        metrics.report(EngineMetrics.families(statistics))
    }
}

/// `--verbose`: a line on standard error for every segment listed.
struct SegmentLog: LiveStreamObserver {
    func segmentPublished(_ report: LiveSegmentReport) {
        let latency = report.latencyMicroseconds.map {
            String(format: ", listed %.0f ms after its last frame", Double($0) / 1000)
        }
        FileHandle.standardError.write(Data(String(
            format: "hlscap: published %@ (%.3f s, %d bytes%@, %d frames dropped so far)\n", report.path,
            report.durationSeconds, report.byteCount, latency ?? "", report.droppedFramesSoFar).utf8))
    }
}
