import CCrypto
import Foundation
import HLSKit

/// Whole-segment AES-128 encryption (RFC 8216bis 4.4.4.4): each segment encrypted with AES-128-CBC
/// and PKCS#7 padding, its IV its media sequence number (so every segment has its own, and the
/// playlist names none), with a new random key every `rotation` segments (0: one key for the run).
/// Keys come from the system's random source (libcrypto's RAND_bytes) and go to their own store,
/// outside the stream's, where only the owner may read them.
///
/// Unchecked sendable: used by the one writer that owns it, on its queue.
public final class SegmentEncryption: @unchecked Sendable {
    public static let keyByteCount = 16
    /// Where the built-in server answers for keys, below the stream's root.
    public static let serverFolder = "keys"

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

    public init(keyStore: any StreamStore, rotation: Int, keyURIPrefix: String? = nil) {
        precondition(rotation >= 0, "a key lasts some segments, or the whole run")
        self.keyStore = keyStore
        self.rotation = rotation
        self.keyURIPrefix = keyURIPrefix
        runID = Digest.hex(Self.randomBytes(4))
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
        let index = keyIndex(sequenceNumber)
        let name = keyName(for: sequenceNumber)
        let key: [UInt8]
        if let known = keys[index] {
            key = known
        } else {
            key = Self.randomBytes(Self.keyByteCount)
            try keyStore.write(key, to: name, durability: .immediate)
            keys[index] = key
            onNewKey?(name)
        }
        let depth = directory.split(separator: "/").count
        let uri = keyURIPrefix.map { $0 + name }
            ?? String(repeating: "../", count: depth) + Self.serverFolder + "/" + name
        return (Self.encrypt(bytes, key: key, iv: Self.iv(sequenceNumber: sequenceNumber)), MediaPlaylist.Key(uri: uri))
    }

    /// The IV a segment without an IV attribute has: its media sequence number.
    public static func iv(sequenceNumber: Int) -> [UInt8] {
        MediaPlaylist.Key.defaultIV(sequenceNumber: sequenceNumber)
    }

    /// AES-128-CBC with PKCS#7 padding.
    public static func encrypt(_ bytes: [UInt8], key: [UInt8], iv: [UInt8]) -> [UInt8] {
        crypt(bytes, key: key, iv: iv, encrypting: true)!
    }

    /// The reverse, for checks; nil when the padding is wrong (another key).
    public static func decrypt(_ bytes: [UInt8], key: [UInt8], iv: [UInt8]) -> [UInt8]? {
        crypt(bytes, key: key, iv: iv, encrypting: false)
    }

    private static func crypt(_ bytes: [UInt8], key: [UInt8], iv: [UInt8], encrypting: Bool) -> [UInt8]? {
        precondition(key.count == keyByteCount && iv.count == 16, "AES-128 takes a 16-byte key and IV")
        guard let context = EVP_CIPHER_CTX_new() else { fatalError("libcrypto could not make a cipher context") }
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: bytes.count + 16)
        var written: Int32 = 0
        var final: Int32 = 0
        let succeeded = EVP_CipherInit_ex(context, EVP_aes_128_cbc(), nil, key, iv, encrypting ? 1 : 0) == 1
            && output.withUnsafeMutableBufferPointer { out in
                EVP_CipherUpdate(context, out.baseAddress, &written, bytes, Int32(bytes.count)) == 1
                    && EVP_CipherFinal_ex(context, out.baseAddress! + Int(written), &final) == 1
            }
        guard succeeded else {
            precondition(!encrypting, "AES-128-CBC encryption cannot fail")
            return nil
        }
        return Array(output.prefix(Int(written + final)))
    }

    /// Bytes from the system's random source.
    static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        precondition(RAND_bytes(&bytes, Int32(count)) == 1, "the system's random source failed")
        return bytes
    }
}
