import HLSKit
import HLSMedia

/// demux → copy → segmenter → fragment writer → store, for one recording.
struct CopyPackager {
    var input: String
    var outputDirectory: String
    var segmentMilliseconds: Int64
    var overwrite: Bool
    /// Makes the publisher that uploads each file once it is stored; nil writes to disk only.
    var publish: ((DirectoryStore) -> StreamPublisher)?

    /// The local summary, and the publisher's report when publishing.
    func run() throws -> (StreamWriter.Summary, PublishReport?) {
        let source = try openSource()
        let store = try prepareOutput()
        var writer = StreamWriter(store: store, tracks: source.tracks)
        let publisher = publish?(store)
        do {
            let summary = try package(source, into: &writer, publisher: publisher)
            guard summary.segmentCount > 0 else {
                throw CommandError("\(input): no video keyframe or audio sample to start a stream with",
                                   exitCode: .dataError)
            }
            return (summary, publisher?.finish())
        } catch {
            writer.removeWrittenFiles()
            throw Self.commandError(error)
        }
    }

    private func package(_ source: CopySource, into writer: inout StreamWriter,
                         publisher: StreamPublisher?) throws -> StreamWriter.Summary {
        let tracks = source.tracks.map { Segmenter.Track(timescale: $0.timescale, isVideo: $0.isVideo) }
        var segmenter = Segmenter(configuration: .init(tracks: tracks, segmentMilliseconds: segmentMilliseconds))
        try writer.writeInitSection()
        publisher?.addFile(StreamWriter.initName)
        while let sample = try source.nextSample() {
            for segment in segmenter.append(sample) { try write(segment, into: &writer, publisher: publisher) }
        }
        for segment in segmenter.finish() { try write(segment, into: &writer, publisher: publisher) }
        let summary = try writer.finishVOD()
        publisher?.updatePlaylist(writer.vodPlaylist)
        return summary
    }

    private func write(_ segment: Segment, into writer: inout StreamWriter, publisher: StreamPublisher?) throws {
        try writer.write(segment)
        publisher?.addSegment(StreamWriter.segmentPath(segment.sequenceNumber), durationSeconds: segment.durationSeconds)
        publisher?.updatePlaylist(writer.vodPlaylist)
    }

    private func openSource() throws -> CopySource {
        do {
            return try CopySource(demuxer: FileDemuxer(path: input))
        } catch {
            throw Self.commandError(error)
        }
    }

    private func prepareOutput() throws -> DirectoryStore {
        let store: DirectoryStore
        do {
            store = try DirectoryStore(root: outputDirectory)
        } catch {
            throw Self.commandError(error)
        }
        if StreamWriter.holdsStream(store) {
            guard overwrite else {
                throw CommandError("\(outputDirectory) already holds a stream; add --overwrite to replace it "
                    + "or choose another --out", exitCode: .cannotCreate)
            }
            do {
                try StreamWriter.removeStream(in: store)
            } catch {
                throw Self.commandError(error)
            }
        }
        return store
    }

    static func commandError(_ error: any Error) -> CommandError {
        switch error {
        case let error as CommandError:
            return error
        case let error as MediaInputError:
            return CommandError(error.description, exitCode: ExitCode(rawValue: error.exitCode) ?? .dataError)
        case let error as CopyError:
            return CommandError(error.description, exitCode: .dataError)
        case let error as StoreError:
            return CommandError(error.description, exitCode: ExitCode(rawValue: error.kind.rawValue) ?? .ioError)
        default:
            return CommandError("\(error)", exitCode: .software)
        }
    }
}
