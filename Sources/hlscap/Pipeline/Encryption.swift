import Foundation
import HLSOutput

/// `--encrypt aes-128` and the options that go with it.
struct EncryptionOptions {
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

    var method: SegmentEncryption.Method
    var keyDirectory: String
    var rotation: Int
    var keyURIPrefix: String?
    var publishKeys: Bool

    /// nil without `--encrypt`; its companions are then refused.
    init?(arguments: inout ArgumentList, outputDirectory: String?, publishing: Bool) throws {
        let method = try arguments.value("--encrypt")
        let rotation = try arguments.value("--key-rotation")
        let directory = try arguments.value("--key-dir")
        let prefix = try arguments.value("--key-url")
        publishKeys = arguments.flag("--publish-keys")
        guard let method else {
            if rotation != nil || directory != nil || prefix != nil || publishKeys {
                throw CommandError.usage("--key-rotation, --key-dir, --key-url and --publish-keys need --encrypt aes-128 or cbcs")
            }
            return nil
        }
        if publishKeys, !publishing {
            throw CommandError.usage("--publish-keys uploads keys with the stream: it needs --publish URL")
        }
        switch method.lowercased() {
        case "aes-128": self.method = .aes128
        case "cbcs", "sample-aes": self.method = .sampleAES
        default: throw CommandError.usage("--encrypt takes aes-128 or cbcs (got \"\(method)\")")
        }
        self.rotation = try rotation.map { try Parse.integer($0, option: "--key-rotation", in: 0...1_000_000) } ?? 0
        if self.method == .sampleAES, self.rotation > 0 {
            throw CommandError.usage("--key-rotation works with --encrypt aes-128: cbcs names its key in the init section, "
                + "so it keeps one key for the run")
        }
        guard let keyDirectory = directory ?? outputDirectory.map(Self.defaultKeyDirectory) else {
            throw CommandError.usage("--encrypt without --out needs --key-dir DIR: the keys must be kept somewhere")
        }
        self.keyDirectory = keyDirectory
        if let prefix, prefix.isEmpty || prefix.contains(where: { $0 == "\"" || $0.isNewline }) {
            throw CommandError.usage("--key-url takes a URL or path prefix without quotes, such as https://keys.example/live/")
        }
        keyURIPrefix = prefix
    }

    /// `OUT.keys` beside `OUT`.
    static func defaultKeyDirectory(_ output: String) -> String {
        var trimmed = output
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        return trimmed + ".keys"
    }

    /// The encryption the writer uses: keys in a private directory.
    func make() throws -> SegmentEncryption {
        let store: DirectoryStore
        do {
            store = try DirectoryStore(root: keyDirectory, isPrivate: true)
        } catch {
            throw CommandError("--key-dir \(keyDirectory): \(error)", exitCode: .cannotCreate)
        }
        return SegmentEncryption(keyStore: store, rotation: rotation, keyURIPrefix: keyURIPrefix, method: method)
    }
}
