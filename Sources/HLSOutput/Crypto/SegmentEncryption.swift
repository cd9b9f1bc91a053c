import Foundation
import HLSCrypto
import HLSKit

/// Whole-segment AES-128 encryption (RFC 8216bis 4.4.4.4): each segment encrypted with AES-128-CBC
/// and PKCS#7 padding, its IV its media sequence number (so every segment has its own, and the
/// playlist names none), with a new random key every `rotation` segments (0: one key for the run).
/// Or SAMPLE-AES: the samples of every fragment encrypted with 'cbcs' (`SampleEncryption`), one key,
/// key ID and constant IV for the run, named by the init sections.
/// Keys come from the system's random source (`SecureRandom`) and go to their own store,
/// outside the stream's, where only the owner may read them.
///
/// Unchecked sendable: used by the one writer that owns it, on its queue.
public final class SegmentEncryption: @unchecked Sendable {
    public static let keyByteCount = AES128.keyByteCount
    /// Where the built-in server answers for keys, below the stream's root.
    public static let serverFolder = "keys"

    public enum Method: Sendable {
        /// Every segment whole (`--encrypt aes-128`).
        case aes128
        /// Samples, 'cbcs' (`--encrypt cbcs`).
        case sampleAES
    }

    public let method: Method
    public let keyStore: any StreamStore
    public let rotation: Int
    /// What EXT-X-KEY URIs begin with (`https://keys.example/live/`); nil names keys relative to each
    /// playlist, as `keys/NAME.key` at the stream's root, where the built-in server answers for them.
    public let keyURIPrefix: String?
    /// Keeps key names of this run apart from those of an earlier one (--resume).
    private let runID: String
    private var keys: [Int: [UInt8]] = [:]
    /// Told the name of each new key once it is stored, before any segment encrypted with it is
    /// (`--publish-keys` uploads it from there).
    public var onNewKey: ((String) -> Void)?

    /// The key ID and constant IV of SAMPLE-AES, made with its key.
    private var trackKey: SampleEncryption.TrackKey?

    public init(keyStore: any StreamStore, rotation: Int, keyURIPrefix: String? = nil, method: Method = .aes128) {
        precondition(rotation >= 0, "a key lasts some segments, or the whole run")
        precondition(method == .aes128 || rotation == 0, "SAMPLE-AES names its key in the init section: one per run")
        self.method = method
        self.keyStore = keyStore
        self.rotation = rotation
        self.keyURIPrefix = keyURIPrefix
        runID = Digest.hex(SecureRandom.bytes(4))
    }

    /// The name of the key of segment `sequenceNumber`.
    public func keyName(for sequenceNumber: Int) -> String {
        "\(runID)-\(keyIndex(sequenceNumber)).key"
    }

    private func keyIndex(_ sequenceNumber: Int) -> Int {
        rotation == 0 ? 0 : max(0, sequenceNumber - 1) / rotation
    }

    /// Encrypts segment `sequenceNumber` of the rendition in `directory` (relative to the stream root);
    /// its key is made and stored on first use. Returns the bytes to store and the playlist's key entry.
    public func encrypt(_ bytes: [UInt8], sequenceNumber: Int, directory: String) throws(StoreError)
        -> (bytes: [UInt8], key: MediaPlaylist.Key) {
        precondition(method == .aes128, "SAMPLE-AES encrypts samples, not segments")
        let key = try key(index: keyIndex(sequenceNumber), name: keyName(for: sequenceNumber))
        return (Self.encrypt(bytes, key: key, iv: Self.iv(sequenceNumber: sequenceNumber)),
                MediaPlaylist.Key(uri: keyURI(keyName(for: sequenceNumber), directory: directory)))
    }

    /// Encrypts one rendition's segment as the method says: AES-128 its file, SAMPLE-AES its samples, from
    /// which the file is then made. Sets the playlist's key entry.
    public func encrypt(_ media: inout StreamRenderer.RenditionMedia) throws(StoreError) {
        switch method {
        case .aes128:
            (media.bytes, media.key) = try encrypt(media.bytes, sequenceNumber: media.sequenceNumber,
                                                   directory: media.directory)
        case .sampleAES:
            let encrypted = try encryptSamples(&media.tracks, descriptions: media.descriptions,
                                               directory: media.directory)
            media.bytes = MediaFragment.make(sequenceNumber: UInt32(media.sequenceNumber), tracks: media.tracks,
                                             descriptions: media.descriptions, encrypted: encrypted.subsamples)
            media.key = encrypted.key
        }
    }

    /// SAMPLE-AES: the key ID and constant IV the init sections name; the key is made and stored on
    /// first use.
    public func sampleKey() throws(StoreError) -> SampleEncryption.TrackKey {
        precondition(method == .sampleAES, "AES-128 leaves init sections clear")
        if let trackKey { return trackKey }
        _ = try key(index: 0, name: keyName(for: 1))
        let made = SampleEncryption.TrackKey(keyID: SecureRandom.bytes(16), constantIV: SecureRandom.bytes(SampleEncryption.blockSize))
        trackKey = made
        return made
    }

    /// SAMPLE-AES: encrypts the samples of a fragment's tracks in place; returns what `MediaFragment.make`
    /// writes in `senc`, and the playlist's key entry for the rendition in `directory`.
    public func encryptSamples(_ tracks: inout [FragmentTrack], descriptions: [TrackDescription], directory: String)
        throws(StoreError) -> (subsamples: [UInt32: [[SampleEncryption.Subsample]]], key: MediaPlaylist.Key) {
        let trackKey = try sampleKey()
        let key = try key(index: 0, name: keyName(for: 1))
        let cipher = AES128.BlockCipher(key: key)
        let subsamples = SampleEncryption.encrypt(&tracks, descriptions: descriptions, iv: trackKey.constantIV) {
            cipher.encrypt(&$0, range: $1, iv: $2)
        }
        let iv = "0x" + Digest.hex(trackKey.constantIV)
        return (subsamples, MediaPlaylist.Key(uri: keyURI(keyName(for: 1), directory: directory), iv: iv, method: .sampleAES))
    }

    /// The key of index `index`, made and stored under `name` on first use.
    private func key(index: Int, name: String) throws(StoreError) -> [UInt8] {
        if let known = keys[index] { return known }
        let key = SecureRandom.bytes(Self.keyByteCount)
        try keyStore.write(key, to: name, durability: .immediate)
        keys[index] = key
        onNewKey?(name)
        return key
    }

    private func keyURI(_ name: String, directory: String) -> String {
        let depth = directory.split(separator: "/").count
        return keyURIPrefix.map { $0 + name } ?? String(repeating: "../", count: depth) + Self.serverFolder + "/" + name
    }

    /// The IV a segment without an IV attribute has: its media sequence number.
    public static func iv(sequenceNumber: Int) -> [UInt8] {
        MediaPlaylist.Key.defaultIV(sequenceNumber: sequenceNumber)
    }

    /// AES-128-CBC with PKCS#7 padding.
    public static func encrypt(_ bytes: [UInt8], key: [UInt8], iv: [UInt8]) -> [UInt8] {
        AES128.encrypt(bytes, key: key, iv: iv)
    }

    /// The reverse, for checks; nil when the padding is wrong (another key).
    public static func decrypt(_ bytes: [UInt8], key: [UInt8], iv: [UInt8]) -> [UInt8]? {
        AES128.decrypt(bytes, key: key, iv: iv)
    }
}
