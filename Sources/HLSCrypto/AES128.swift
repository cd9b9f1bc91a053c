import CCrypto

/// AES-128-CBC from libcrypto: whole segments with PKCS#7 padding (`METHOD=AES-128`), and whole blocks
/// in place without padding (SAMPLE-AES's 'cbcs').
public enum AES128 {
    public static let keyByteCount = 16
    public static let blockByteCount = 16

    /// AES-128-CBC with PKCS#7 padding.
    public static func encrypt(_ bytes: [UInt8], key: [UInt8], iv: [UInt8]) -> [UInt8] {
        crypt(bytes, key: key, iv: iv, encrypting: true)!
    }

    /// The reverse; nil when the padding is wrong (another key).
    public static func decrypt(_ bytes: [UInt8], key: [UInt8], iv: [UInt8]) -> [UInt8]? {
        crypt(bytes, key: key, iv: iv, encrypting: false)
    }

    private static func crypt(_ bytes: [UInt8], key: [UInt8], iv: [UInt8], encrypting: Bool) -> [UInt8]? {
        precondition(key.count == keyByteCount && iv.count == blockByteCount, "AES-128 takes a 16-byte key and IV")
        guard let context = EVP_CIPHER_CTX_new() else { fatalError("libcrypto could not make a cipher context") }
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: bytes.count + blockByteCount)
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

    /// AES-128-CBC without padding over whole blocks, in place: one libcrypto context for a fragment.
    public final class BlockCipher {
        private let context: OpaquePointer

        public init(key: [UInt8]) {
            precondition(key.count == keyByteCount, "AES-128 takes a 16-byte key")
            guard let context = EVP_CIPHER_CTX_new() else { fatalError("libcrypto could not make a cipher context") }
            self.context = context
            precondition(EVP_EncryptInit_ex(context, EVP_aes_128_cbc(), nil, key, nil) == 1
                         && EVP_CIPHER_CTX_set_padding(context, 0) == 1, "AES-128-CBC is available")
        }

        deinit { EVP_CIPHER_CTX_free(context) }

        public func encrypt(_ bytes: inout [UInt8], range: Range<Int>, iv: [UInt8]) {
            precondition(range.count % blockByteCount == 0 && iv.count == blockByteCount, "whole blocks and a 16-byte IV")
            var written: Int32 = 0
            let succeeded = EVP_EncryptInit_ex(context, nil, nil, nil, iv) == 1
                && bytes.withUnsafeMutableBufferPointer { buffer in
                    let start = buffer.baseAddress! + range.lowerBound
                    return EVP_EncryptUpdate(context, start, &written, start, Int32(range.count)) == 1
                }
            precondition(succeeded && Int(written) == range.count, "AES-128-CBC encryption cannot fail")
        }
    }
}

/// The system's random source, through libcrypto (RAND_bytes): keys and names that must not be guessed.
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        precondition(RAND_bytes(&bytes, Int32(count)) == 1, "the system's random source failed")
        return bytes
    }
}
