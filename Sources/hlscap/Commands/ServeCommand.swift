import Foundation
import HLSEngine
import HLSKit
import HLSServer

/// `hlscap serve DIR --listen ADDR:PORT`: serves a stream directory hlscap wrote, live or VOD.
struct ServeCommand: Command {
    static let name = "serve"
    static let summary = "serve a stream directory over HTTP, with a preview page and metrics"
    static let help = """
        Usage: hlscap serve DIR --listen ADDR:PORT [options]

        Serves the stream in DIR (live or finished, one rendition or a ladder) as a static origin
        that knows HLS: playlists revalidated on every request (Cache-Control: no-cache) and
        gzipped when the client accepts it, media cached for a year (immutable), byte ranges,
        ETag/Last-Modified with 304, CORS for players on other sites. Only the stream's own files
        are served, and GET / is a preview page that plays the stream; GET /snapshot.jpg is the
        latest keyframe as a JPEG; GET /metrics is for Prometheus. Stop with Ctrl-C or SIGTERM.

        Low-latency HLS needs the process that captures: use hlscap live --serve --low-latency.

        Options:
          --listen ADDR:PORT        where to listen: 127.0.0.1:8080, [::1]:8080, or :8080 for every
                                    interface (port 0: any free port, printed at start)
        \(ServerOptions.help)
          --key-dir DIR             an encrypted stream's keys, answered at /keys/NAME.key to those
                                    who may watch (default: DIR.keys beside the stream, if it exists)
          --recordings DIR          a folder of recordings (live --record): any time range of them
                                    as a playlist of byte ranges, /recordings/playlist.m3u8?
                                    start=2026-12-01T10:02:00Z&duration=780 (or end=), their
                                    list at /recordings/index.json, a 320-px JPEG of any moment at
                                    /recordings/thumbnail.jpg?at=2026-12-01T10:02:00Z, and a
                                    timeline with thumbnails on the preview page
          --help                    show this help

        Exit status: 0 stopped, 64 usage, 65 a key, token, certificate or OCSP file that cannot be
        used, 66 DIR holds no stream or a file is missing, 69 the address cannot be used.
        """

    var directory: String
    var server: ServerOptions
    var keyDirectory: String?
    var recordings: String?

    init(arguments: inout ArgumentList) throws {
        guard let server = try ServerOptions(arguments: &arguments, option: "--listen") else {
            throw CommandError.usage("--listen ADDR:PORT is required: where to serve, such as 127.0.0.1:8080")
        }
        self.server = server
        let keys = try arguments.value("--key-dir")
        recordings = try arguments.value("--recordings")
        directory = try arguments.onePositional("serve", what: "the stream directory to serve")
        let beside = EncryptionPlan.defaultKeyDirectory(directory)
        keyDirectory = keys ?? (FileManager.default.fileExists(atPath: beside) ? beside : nil)
    }

    func run() throws {
        let entry = [StreamLayout.masterPlaylistName, StreamLayout.playlistName].first {
            FileManager.default.fileExists(atPath: directory + "/" + $0)
        }
        guard let entry else {
            throw CommandError("\(directory) holds no stream (no \(StreamLayout.masterPlaylistName) or "
                + "\(StreamLayout.playlistName)); give a directory hlscap live or hlscap file wrote", exitCode: .noInput)
        }
        if let recordings {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: recordings, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw CommandError("--recordings \(recordings): no such folder; give the folder live --record writes into",
                                   exitCode: .noInput)
            }
        }
        let http = try server.start(StreamServer(root: directory, metrics: ServerMetrics(), keyDirectory: keyDirectory,
                                                 recordings: recordings.map(RecordingRanges.init(root:)),
                                                 pictures: .decodedByFFmpeg()),
                                    entry: entry)
        let stop = DispatchSemaphore(value: 0)
        let signals = SignalHandling(onReload: server.onReload) { _ in
            stop.signal()
        }
        stop.wait()
        signals.cancel()
        http.stop()
    }
}
