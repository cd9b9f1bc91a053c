import Foundation
import HLSEngine
import HLSOutput

/// `--encrypt aes-128` and the options that go with it.
enum EncryptionOptions {
    static let help = """
          --encrypt aes-128         encrypt every segment whole (AES-128-CBC, PKCS#7, the media
                                    sequence number as IV); no I-frame playlists, no --low-latency
          --encrypt cbcs            SAMPLE-AES: encrypt the samples ('cbcs', 1:9 pattern over slice
                                    data, whole blocks of audio), one key for the run
          --key-rotation N          a new random key every N segments (default 0: one per run;
                                    aes-128 only)
          --key-dir DIR             where keys go, readable by the owner only (default: OUT.keys,
                                    beside the stream directory)
          --key-url PREFIX          what EXT-X-KEY URIs begin with (default: keys/ at the stream's
                                    root, where hlscap serve and --serve answer for them)
          --publish-keys            with --publish, upload the keys too, to keys/ below the URL, each
                                    before any playlist there names it (without it keys stay here)
        """

    /// The options as given; the plan decides whether they go together.
    static func request(_ arguments: inout ArgumentList) throws -> EncryptionRequest {
        var request = EncryptionRequest()
        request.method = try arguments.value("--encrypt").map { method in
            switch method.lowercased() {
            case "aes-128": .aes128
            case "cbcs", "sample-aes": .sampleAES
            default: throw CommandError.usage("--encrypt takes aes-128 or cbcs (got \"\(method)\")")
            }
        }
        request.rotation = try arguments.value("--key-rotation")
            .map { try Parse.integer($0, option: "--key-rotation", in: 0...1_000_000) }
        request.keyDirectory = try arguments.value("--key-dir")
        request.keyURIPrefix = try arguments.value("--key-url")
        request.publishKeys = arguments.flag("--publish-keys")
        return request
    }

    /// The encryption the writer uses: keys in a private directory.
    static func make(_ plan: EncryptionPlan?) throws -> SegmentEncryption? {
        guard let plan else { return nil }
        do {
            return try plan.make()
        } catch {
            throw CommandError("--key-dir \(plan.keyDirectory): \(error)", exitCode: .cannotCreate)
        }
    }
}
