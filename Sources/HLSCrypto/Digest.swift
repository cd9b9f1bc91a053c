import CCrypto
import Foundation

/// SHA-256, HMAC-SHA256 and constant-time comparison from OpenSSL's libcrypto: what signs S3 requests
/// and URLs, and checks tokens, signatures and stream keys. A secret is never compared with `==`.
public enum Digest {
    public static let sha256ByteCount = 32

    public static func sha256(_ data: some ContiguousBytes) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: sha256ByteCount)
        var length: UInt32 = 0
        let succeeded = data.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &digest, &length, EVP_sha256(), nil) == 1
        }
        // EVP_Digest fails only when memory runs out.
        precondition(succeeded && length == sha256ByteCount, "libcrypto could not compute SHA-256")
        return digest
    }

    public static func hmacSHA256(key: some ContiguousBytes, message: some ContiguousBytes) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: sha256ByteCount)
        var length: UInt32 = 0
        let result = key.withUnsafeBytes { keyBuffer in
            message.withUnsafeBytes { messageBuffer in
                HMAC(EVP_sha256(), keyBuffer.baseAddress, Int32(keyBuffer.count),
                     messageBuffer.baseAddress?.assumingMemoryBound(to: UInt8.self), messageBuffer.count,
                     &digest, &length)
            }
        }
        precondition(result != nil && length == sha256ByteCount, "libcrypto could not compute HMAC-SHA256")
        return digest
    }

    /// Whether two secrets are equal, in a time that depends on neither: their SHA-256 hashes, of
    /// one length whatever theirs, are compared with libcrypto's constant-time comparison.
    public static func constantTimeEqual(_ first: some ContiguousBytes, _ second: some ContiguousBytes) -> Bool {
        let left = sha256(first), right = sha256(second)
        return left.withUnsafeBytes { a in right.withUnsafeBytes { b in CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0 } }
    }

    /// Lower-case hexadecimal, as SigV4 writes hashes and signatures.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
